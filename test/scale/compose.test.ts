import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { projectRoot } from '../../src/paths.js';

// scripts/check-compose.mjs is what CI runs instead of `docker compose up` (no Docker engine
// there): it must pass on the committed recipe and name each problem of a broken one.

const SCRIPT = join(projectRoot, 'scripts', 'check-compose.mjs');
const COMPOSE = join(projectRoot, 'docker-compose.yml');
const original = readFileSync(COMPOSE, 'utf8');
const scratch = mkdtempSync(join(tmpdir(), 'mkt-compose-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function check(file?: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [SCRIPT, ...(file ? [file] : [])], { cwd: projectRoot }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

let n = 0;
/** A copy of docker-compose.yml with `edit` applied; fails if the edit changed nothing. */
function brokenCopy(edit: (text: string) => string): string {
  const text = edit(original);
  expect(text, 'the edit must change the file').not.toBe(original);
  const file = join(scratch, `compose-${++n}.yml`);
  writeFileSync(file, text);
  return file;
}

describe('scripts/check-compose.mjs', () => {
  it('passes on the committed docker-compose.yml', async () => {
    const r = await check();
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('docker-compose.yml: ok (postgres, redis, app1, app2, proxy)\n');
  });

  it('fails with one line per problem on a broken copy', async () => {
    const file = brokenCopy((t) =>
      t
        .replace('image: node:20-bookworm', 'image: acme/marketplace:latest') // app1 and app2 share it
        .replace('DATABASE_URL: postgres://marketplace:marketplace@postgres:5432/marketplace', 'DATABASE_URL: postgres://marketplace:marketplace@localhost:5432/marketplace')
        .replace(/ {4}healthcheck:\n {6}test: \["CMD", "redis-cli", "ping"\]\n(?: {6}.*\n)*/, ''),
    );
    const r = await check(file);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr.trimEnd().split('\n')).toEqual([
      `${file}: redis: has no healthcheck`,
      `${file}: app1: image must be the official node image (node:<tag>), got "acme/marketplace:latest"`,
      `${file}: app1: DATABASE_URL must point at the "postgres" service, got host "localhost"`,
      `${file}: app2: image must be the official node image (node:<tag>), got "acme/marketplace:latest"`,
      `${file}: app2: DATABASE_URL must point at the "postgres" service, got host "localhost"`,
    ]);
  });

  it('names a missing service, a wrong command, an unhealthy dependency and a proxy without a port', async () => {
    const file = brokenCopy((t) =>
      t
        .replace('command: ["sh", "-c", "npm ci && npm start"]', 'command: ["sh", "-c", "npm install && node dist/src/server.js"]')
        .replace('      redis: { condition: service_healthy }\n    healthcheck:', '      redis: { condition: service_started }\n    healthcheck:')
        .replace(/ {4}ports:\n {6}- "127\.0\.0\.1:8080:8080"\n/, '')
        .replace(/ {2}postgres:\n {4}image:/, '  database:\n    image:'),
    );
    const r = await check(file);
    expect(r.code).toBe(1);
    const lines = r.stderr.trimEnd().split('\n');
    expect(lines).toEqual(
      expect.arrayContaining([
        `${file}: postgres: service is missing`,
        `${file}: app1: command must run "npm ci && npm start", got "sh -c npm install && node dist/src/server.js"`,
        `${file}: app1: must depend on redis with condition service_healthy, got service_started`,
        `${file}: app2: command must run "npm ci && npm start", got "sh -c npm install && node dist/src/server.js"`,
        `${file}: proxy: exposes no port (ports)`,
      ]),
    );
    for (const line of lines) expect(line.startsWith(`${file}: `)).toBe(true);
  });

  it('reports a file that is not YAML in one line', async () => {
    const file = join(scratch, 'not-yaml.yml');
    writeFileSync(file, 'services:\n  app1: [unclosed\n');
    const r = await check(file);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: cannot be read as YAML: .+\n$`));
  });
});
