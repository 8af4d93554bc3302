import { spawn } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { projectRoot } from '../../src/paths.js';

// The README's test command must fail when a test fails. It once exited 0: a library loaded by the
// test database's setup called process.exit(0) on beforeExit, whatever vitest had set. The child
// runs `npm test -- <file>` as a user would, with the embedded database (no TEST_DATABASE_URL), so
// the global setup loads that library as it does on a fresh clone.

const written: string[] = [];
afterAll(() => {
  for (const file of written) rmSync(file, { force: true });
});

function testFile(name: string, body: string): string {
  const file = join(projectRoot, 'test', 'process', `.${name}-${process.pid}.test.ts`);
  writeFileSync(file, `import { expect, it } from 'vitest';\nit('${name}', () => { ${body} });\n`);
  written.push(file);
  return file;
}

function npmTest(file: string): Promise<{ code: number | null; output: string }> {
  const env: NodeJS.ProcessEnv = { ...process.env };
  // CI would make the child write the JSON report the parent run writes.
  for (const key of ['CI', 'TEST_DATABASE_URL', 'VITEST', 'VITEST_POOL_ID', 'VITEST_WORKER_ID', 'NODE_OPTIONS']) delete env[key];
  return new Promise((resolve, reject) => {
    const child = spawn('npm', ['test', '--', file], { cwd: projectRoot, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}

describe('npm test', () => {
  it('exits non-zero when a test fails', async () => {
    const { code, output } = await npmTest(testFile('failing', 'expect(1).toBe(2);'));
    expect(output).toContain('1 failed');
    expect(code).not.toBe(0);
  }, 120_000);

  it('exits 0 when every test passes', async () => {
    const { code, output } = await npmTest(testFile('passing', 'expect(1).toBe(1);'));
    expect(output).toContain('1 passed');
    expect(code).toBe(0);
  }, 120_000);
});
