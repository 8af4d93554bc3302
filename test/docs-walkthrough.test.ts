import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectRoot } from '../src/paths.js';
import { cleanupChildren, describeChild, eventually, type ServerChild, spawnServer } from './helpers/child.js';
import { createTestDatabase, type TestDatabase } from './helpers/db.js';

// docs/walkthrough.md, run as written: every ```sh block in order, in one bash, against a freshly
// started demo server on its own database. The first block's BASE and key lines get this server's
// address and keys; every other line runs as a reader would paste it. A ```text block right after
// an ```sh block is what that block prints: compared line by line, `…` standing for any text.

const DOC = 'docs/walkthrough.md';

interface Block {
  code: string;
  expected?: string;
  line: number;
}

/** The ```sh blocks of a Markdown text, each with the ```text block that follows it, if any. */
export function shellBlocks(markdown: string): Block[] {
  const blocks: Block[] = [];
  const fence = /^```(\w*)\n([\s\S]*?)^```$/gm;
  let last: Block | undefined;
  let lastEnd = -1;
  for (const m of markdown.matchAll(fence)) {
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

const SETTINGS = ['BASE', 'KEY', 'SPENDING_KEY', 'PUBLISHER_KEY'] as const;

/** The demo keys the first start prints, by the doc's variable names. */
function demoKeys(stdout: string): Record<(typeof SETTINGS)[number], string> | undefined {
  const key = (label: RegExp) => label.exec(stdout)?.[1];
  const KEY = key(/^ {2}read-only key \(workspace \d+\): (mk_\w+)$/m);
  const SPENDING_KEY = key(/^ {2}spending key {2}\(workspace \d+\): (mk_\w+)$/m);
  const PUBLISHER_KEY = key(/^ {2}publisher key \(publisher \d+\): (mk_\w+)$/m);
  return KEY && SPENDING_KEY && PUBLISHER_KEY ? { BASE: '', KEY, SPENDING_KEY, PUBLISHER_KEY } : undefined;
}

/** Runs `script` in bash; resolves with stdout and stderr, rejecting after timeoutMs. */
function bash(script: string, timeoutMs: number): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const proc = spawn('bash', ['--noprofile', '--norc', '-s'], { cwd: projectRoot, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    proc.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    proc.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => {
      proc.kill('SIGKILL');
      reject(new Error(`the walkthrough did not finish within ${timeoutMs} ms\n--- stdout ---\n${stdout}\n--- stderr ---\n${stderr}`));
    }, timeoutMs);
    proc.on('error', reject);
    proc.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    proc.stdin.end(script);
  });
}

const MARK = '@@walkthrough-block-end@@';

let database: TestDatabase;
let server: ServerChild;
let settings: Record<(typeof SETTINGS)[number], string>;

beforeAll(async () => {
  database = await createTestDatabase();
  // The doc's settings: `npm start` as it comes, with the demo seeded into this empty database.
  server = await spawnServer({ DATABASE_URL: database.url, SEED_DEMO: '1' });
  await server.waitHealthy(120_000);
  const keys = await eventually(async () => demoKeys(server.stdout()), 'demo keys printed', 120_000);
  settings = { ...keys, BASE: server.baseUrl };
}, 260_000);

afterAll(async () => {
  await cleanupChildren();
  await database?.drop();
}, 60_000);

describe(DOC, () => {
  const blocks = shellBlocks(readFileSync(join(projectRoot, DOC), 'utf8'));

  it('has shell blocks, the first setting BASE and the three keys, and outputs to compare', () => {
    expect(blocks.length).toBeGreaterThanOrEqual(3);
    for (const name of SETTINGS) expect(blocks[0]!.code).toMatch(new RegExp(`^${name}=`, 'm'));
    expect(blocks.filter((b) => b.expected !== undefined).length).toBeGreaterThanOrEqual(3);
  });

  it('runs as written against a fresh demo, each block printing what the doc shows', async () => {
    const setup = blocks[0]!.code.replace(new RegExp(`^(${SETTINGS.join('|')})=\\S+`, 'gm'), (_, name: (typeof SETTINGS)[number]) => `${name}=${settings[name]}`);
    const script = [setup, ...blocks.slice(1).map((b) => b.code)].map((code) => `${code}\necho '${MARK}'\n`).join('');
    const run = await bash(script, 150_000);
    const outputs = run.stdout.split(`${MARK}\n`);
    expect(outputs.length, `every block ran${describeChild({ stdout: () => run.stdout, stderr: () => run.stderr })}`).toBe(blocks.length + 1);
    for (const [i, block] of blocks.entries()) {
      if (block.expected === undefined) continue;
      const where = `${DOC}:${block.line}: expected\n${block.expected}\ngot\n${outputs[i]}\n--- stderr ---\n${run.stderr}${describeChild(server)}`;
      expect(matches(block.expected, outputs[i]!), where).toBe(true);
    }
    expect(run.stderr).toBe('');
  }, 180_000);
});
