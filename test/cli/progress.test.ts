import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { terminalProgress } from '../../src/cli/progress.js';
import { projectRoot } from '../../src/paths.js';
import { createPublisher } from '../../src/domain/publishers/publisher-service.js';
import { childEnv, CLI, cliJson, runCli } from '../helpers/child.js';
import { createTestDatabase } from '../helpers/db.js';

// Long admin commands draw their progress on stderr when it is a terminal, and write nothing
// there otherwise: stdout's JSON is the same either way.

function fakeTerminal(isTTY: boolean) {
  const writes: string[] = [];
  return { writes, terminal: { isTTY, write: (s: string) => writes.push(s) } };
}

describe('terminal progress', () => {
  it('writes nothing when stderr is not a terminal', () => {
    const { writes, terminal } = fakeTerminal(false);
    const p = terminalProgress(terminal, () => 0)('outlets generate', 100);
    p.add(50);
    p.add(50);
    p.done();
    expect(writes).toEqual([]);
  });

  it('draws done of total, rate and time left on one line, at most every interval, and clears it at the end', () => {
    let now = 1_000;
    const { writes, terminal } = fakeTerminal(true);
    const p = terminalProgress(terminal, () => now, 250)('outlets generate', 4_000);
    now += 2_000;
    p.add(1_000); // the first update is always drawn
    now += 100;
    p.add(500); // within the interval: not drawn
    now += 1_900;
    p.add(500);
    now += 4_000;
    p.add(2_000); // the last one is drawn whatever the interval
    p.done();
    expect(writes).toEqual([
      '\r\x1b[2Koutlets generate: 1,000 of 4,000 (25%), 500/s, 6 s left',
      '\r\x1b[2Koutlets generate: 2,000 of 4,000 (50%), 500/s, 4 s left',
      '\r\x1b[2Koutlets generate: 4,000 of 4,000 (100%), 500/s, 0 s left',
      '\r\x1b[2K',
    ]);
  });

  it('says minutes and hours for long runs', () => {
    let now = 0;
    const { writes, terminal } = fakeTerminal(true);
    const p = terminalProgress(terminal, () => now)('purchase generate', 1_000_000);
    now = 10_000;
    p.add(1_000);
    expect(writes.at(-1)).toBe('\r\x1b[2Kpurchase generate: 1,000 of 1,000,000 (0%), 100/s, 2 h 46 min left');
  });
});

const database = await createTestDatabase({ max: 2 });
const dir = mkdtempSync(join(tmpdir(), 'progress-cli-'));
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  await database.drop();
});
const hasScript = spawnSync('script', ['--version'], { stdio: 'ignore' }).status === 0;

describe('outlets generate as a process', { timeout: 120_000 }, () => {
  it('piped: stderr stays empty and stdout is the JSON line', async () => {
    const pub = await createPublisher(database.pool, 'Quiet progress');
    const r = await runCli(['outlets', 'generate', '--publisher', String(pub.id), '--count', '500'], { DATABASE_URL: database.url });
    expect(cliJson(r)).toEqual({ generated: 500 });
  });

  // `script` gives the command a terminal; stdout goes to a file, so only stderr is on it.
  it.runIf(hasScript)('on a terminal: progress on stderr, the same JSON on stdout', async () => {
    const pub = await createPublisher(database.pool, 'Shown progress');
    const out = join(dir, 'out.json');
    const command = `exec "${process.execPath}" "${CLI}" outlets generate --publisher ${pub.id} --count 3000 > "${out}"`;
    const child = spawn('script', ['-qec', command, '/dev/null'], { cwd: projectRoot, env: childEnv({ DATABASE_URL: database.url }), stdio: ['ignore', 'pipe', 'pipe'] });
    let terminal = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (terminal += d));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(code, terminal).toBe(0);
    expect(terminal).toMatch(/outlets generate: [\d,]+ of 3,000 \(\d+%\), [\d,]+\/s, .+ left/);
    expect(readFileSync(out, 'utf8')).toBe('{"generated":3000}\n');
  });
});
