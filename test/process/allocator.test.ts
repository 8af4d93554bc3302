import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { projectRoot } from '../../src/paths.js';

// `npm start` runs the server with glibc's mmap threshold fixed (scripts/allocator.mjs): in a
// child process when the environment lacks it, in its own otherwise. A stand-in server prints
// what it sees (once its SIGTERM handler is in place) and stops on SIGTERM with a code of its own,
// which the wrapper must pass on.

const dir = mkdtempSync(join(tmpdir(), 'allocator-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const entry = join(dir, 'server.mjs');
writeFileSync(
  entry,
  `process.on('SIGTERM', () => { console.log('stopping'); setTimeout(() => process.exit(3), 50); });
   console.log(JSON.stringify({ threshold: process.env.MALLOC_MMAP_THRESHOLD_ ?? null, pid: process.pid }));
   setInterval(() => {}, 1000);`,
);
const wrapper = `import { runWithAllocatorSetting } from ${JSON.stringify(join(projectRoot, 'scripts', 'allocator.mjs'))};
await runWithAllocatorSetting(${JSON.stringify(entry)});`;

function start(env: NodeJS.ProcessEnv) {
  const proc = spawn(process.execPath, ['--input-type=module', '-e', wrapper], { env, stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  proc.stdout.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
  const seen = async () => {
    for (let i = 0; i < 400 && !out.includes('\n'); i++) await new Promise((r) => setTimeout(r, 25));
    return JSON.parse(out.split('\n')[0]!) as { threshold: string | null; pid: number };
  };
  return { proc, seen, exited, out: () => out };
}

const baseEnv = () => {
  const env = { ...process.env };
  delete env.MALLOC_MMAP_THRESHOLD_;
  delete env.NODE_OPTIONS;
  return env;
};

describe.runIf(process.platform === 'linux')('the allocator setting npm start runs the server with', () => {
  it('is given to a child when missing, which stops on the SIGTERM the parent gets, with its exit code', async () => {
    const run = start(baseEnv());
    const seen = await run.seen();
    expect(seen.threshold).toBe('65536');
    expect(seen.pid).not.toBe(run.proc.pid);
    run.proc.kill('SIGTERM');
    expect(await run.exited).toBe(3);
    expect(run.out()).toContain('stopping');
  });

  it('is left as it is when present: the server runs in the same process', async () => {
    const run = start({ ...baseEnv(), MALLOC_MMAP_THRESHOLD_: '131072' });
    const seen = await run.seen();
    expect(seen).toEqual({ threshold: '131072', pid: run.proc.pid });
    run.proc.kill('SIGTERM');
    expect(await run.exited).toBe(3);
  });
});
