import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { projectRoot } from '../src/paths.js';
import { cleanupChildren, describeChild, eventually, spawnServer } from './helpers/child.js';
import { createTestDatabase, type TestDatabase } from './helpers/db.js';
import { freePort } from './helpers/pg-server.js';

// Docs run as written. For each page (or one section of it): a fresh demo server on its own
// database, started with the settings the page's `… npm start` block names, then every other
// ```sh block in order, in one bash. Lines that set BASE, the three keys or PAGE_PORT get this
// server's address and keys and a free port; every other line runs as a reader would paste it. A
// ```text block right after an ```sh block is what that block prints: compared line by line, `…`
// standing for any text.

interface Block {
  code: string;
  expected?: string;
  line: number;
}

/** The ```sh blocks of a Markdown text (of one `## ` section, when given), each with the ```text block that follows it. */
function shellBlocks(markdown: string, section?: string): Block[] {
  const blocks: Block[] = [];
  const fence = /^```(\w*)\n([\s\S]*?)^```$/gm;
  let last: Block | undefined;
  let lastEnd = -1;
  const start = section === undefined ? 0 : markdown.indexOf(`\n## ${section}\n`);
  if (start < 0) return [];
  const next = markdown.indexOf('\n## ', start + 1);
  for (const m of markdown.matchAll(fence)) {
    if (m.index < start || (section !== undefined && next >= 0 && m.index > next)) continue;
    const [all, lang, body] = m;
    const line = markdown.slice(0, m.index).split('\n').length;
    if (lang === 'sh') {
      last = { code: body!, line };
      blocks.push(last);
    } else if (lang === 'text' && last && markdown.slice(lastEnd, m.index).trim() === '') {
      last.expected = body!;
    }
    lastEnd = m.index + all.length;
  }
  return blocks;
}

/** Whether `actual` is `expected` line by line, `…` in an expected line matching any text. */
function matches(expected: string, actual: string): boolean {
  const want = expected.trimEnd().split('\n');
  const got = actual.trimEnd().split('\n');
  if (want.length !== got.length) return false;
  return want.every((w, i) => {
    const pattern = w.trimEnd().split('…').map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('.*');
    return new RegExp(`^${pattern}$`).test(got[i]!.trimEnd());
  });
}

const START = /^((?:[A-Z_]+=\S+ )*)npm start$/m;

/** The settings of a block that starts the server (`A=1 B=2 npm start`), or undefined for any other block. */
function startSettings(block: Block): Record<string, string> | undefined {
  const commands = block.code.split('\n').filter((l) => l.trim() !== '' && !l.trim().startsWith('#'));
  const m = commands.length === 1 ? START.exec(commands[0]!) : null;
  if (!m) return undefined;
  return Object.fromEntries(m[1]!.trim().split(/\s+/).filter(Boolean).map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]));
}

/** The demo keys the first start prints, by the docs' variable names. */
function demoKeys(stdout: string): Record<string, string> | undefined {
  const key = (label: RegExp) => label.exec(stdout)?.[1];
  const KEY = key(/^ {2}read-only key \(workspace \d+\): (mk_\w+)$/m);
  const SPENDING_KEY = key(/^ {2}spending key {2}\(workspace \d+\): (mk_\w+)$/m);
  const PUBLISHER_KEY = key(/^ {2}publisher key \(publisher \d+\): (mk_\w+)$/m);
  return KEY && SPENDING_KEY && PUBLISHER_KEY ? { KEY, SPENDING_KEY, PUBLISHER_KEY } : undefined;
}

/** Runs `script` in bash, in its own process group (killed afterwards: a page server the doc forgot to stop goes too). */
function bash(script: string, timeoutMs: number, env: Record<string, string> = {}): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const proc = spawn('bash', ['--noprofile', '--norc', '-s'], { cwd: projectRoot, stdio: ['pipe', 'pipe', 'pipe'], detached: true, env: { ...process.env, ...env } });
    let stdout = '';
    let stderr = '';
    const killGroup = () => {
      try {
        process.kill(-proc.pid!, 'SIGKILL');
      } catch {
        // already gone
      }
    };
    proc.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    proc.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => {
      killGroup();
      reject(new Error(`the doc's commands did not finish within ${timeoutMs} ms\n--- stdout ---\n${stdout}\n--- stderr ---\n${stderr}`));
    }, timeoutMs);
    proc.on('error', reject);
    proc.on('exit', () => {
      // Background jobs keep the pipes open; once bash is done, they are the doc's leftovers.
      setTimeout(killGroup, 500);
    });
    proc.on('close', () => {
      clearTimeout(timer);
      resolve({ stdout, stderr });
    });
    proc.stdin.end(script);
  });
}

const MARK = '@@doc-block-end@@';
const SUBSTITUTED = ['BASE', 'KEY', 'SPENDING_KEY', 'PUBLISHER_KEY', 'PAGE_PORT'];
const databases: TestDatabase[] = [];
afterAll(async () => {
  await cleanupChildren();
  for (const d of databases) await d.drop();
}, 60_000);

const walkthrough = readFileSync(join(projectRoot, 'docs/walkthrough.md'), 'utf8');
/** The walkthrough's blocks that only define things (settings, helpers), which later pages ask the reader to paste. */
const walkthroughSetup = shellBlocks(walkthrough).filter((b) => /^BASE=|^live_checks\(\) \{/m.test(b.code));

const pages: { doc: string; section?: string; setup: Block[] }[] = [
  { doc: 'docs/walkthrough.md', setup: [] },
  { doc: 'docs/link-guarantee.md', section: 'Try the checker on your machine', setup: walkthroughSetup },
];

describe.each(pages)('$doc $section', ({ doc, section, setup }) => {
  const blocks = [...setup, ...shellBlocks(readFileSync(join(projectRoot, doc), 'utf8'), section)];
  const start = blocks.map(startSettings).find((s) => s !== undefined) ?? {};
  const run = blocks.filter((b) => startSettings(b) === undefined);

  it('has shell blocks setting BASE and the three keys, and outputs to compare', () => {
    expect(run.length).toBeGreaterThanOrEqual(3);
    for (const name of ['BASE', 'KEY', 'SPENDING_KEY', 'PUBLISHER_KEY']) expect(run[0]!.code).toMatch(new RegExp(`^${name}=`, 'm'));
    expect(run.filter((b) => b.expected !== undefined).length).toBeGreaterThanOrEqual(1);
  });

  it('runs as written against a fresh demo started with its settings, each block printing what the page shows', async () => {
    const database = await createTestDatabase();
    databases.push(database);
    const server = await spawnServer({ ...start, DATABASE_URL: database.url, SEED_DEMO: '1' });
    await server.waitHealthy(120_000);
    const keys = await eventually(async () => demoKeys(server.stdout()), 'demo keys printed', 120_000);
    const values: Record<string, string> = { ...keys, BASE: server.baseUrl, PAGE_PORT: String(await freePort()) };
    const filled = (code: string) => code.replace(new RegExp(`^(${SUBSTITUTED.join('|')})=\\S+`, 'gm'), (_, name: string) => `${name}=${values[name]}`);
    const script = run.map((b) => `${filled(b.code)}\necho '${MARK}'\n`).join('');
    // The admin CLI a page runs reaches the page's server's database, as it does for a reader.
    // The reader's `npm start` built dist/ before these blocks ran (the admin CLI builds it on
    // demand and says so on stderr): build it here too, out of the comparison.
    await bash('node scripts/build-if-needed.mjs 2>/dev/null', 150_000);
    const result = await bash(script, 150_000, { DATABASE_URL: database.url });
    const outputs = result.stdout.split(`${MARK}\n`);
    const context = `\n--- stdout ---\n${result.stdout}\n--- stderr ---\n${result.stderr}${describeChild(server)}`;
    expect(outputs.length, `every block ran${context}`).toBe(run.length + 1);
    for (const [i, block] of run.entries()) {
      if (block.expected === undefined) continue;
      expect(matches(block.expected, outputs[i]!), `${doc}:${block.line}: expected\n${block.expected}\ngot\n${outputs[i]}${context}`).toBe(true);
    }
    expect(result.stderr, context).toBe('');
    await server.stop();
  }, 300_000);
});
