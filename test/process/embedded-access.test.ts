import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanupChildren, describeChild, spawnServer } from '../helpers/child.js';
import { freePort } from '../helpers/pg-server.js';

// As root, the embedded PostgreSQL runs as the `postgres` OS user: a data folder that user cannot
// enter (a clone under a home folder of mode 0700) must fail with one plain line saying what to
// do, not a stack trace from spawn.

const asRoot = process.getuid?.() === 0;
// mkdtemp makes the folder with mode 0700, as a home folder is.
const closed = mkdtempSync(join(tmpdir(), 'mkt-closed-'));
afterAll(async () => {
  await cleanupChildren();
  rmSync(closed, { recursive: true, force: true });
}, 30_000);

describe.runIf(asRoot)('embedded PostgreSQL as root in a folder the postgres user cannot enter', () => {
  it('the server exits 1 with one line naming the folder and the ways out', async () => {
    const dataDir = join(closed, 'data');
    const server = await spawnServer({ DATA_DIR: dataDir, EMBEDDED_PG_PORT: String(await freePort()) });
    const exit = await server.exited;
    expect(exit.code, describeChild(server)).toBe(1);
    const lines = server.stderr().trim().split('\n');
    expect(lines, describeChild(server)).toHaveLength(1);
    expect(lines[0]).toContain(`cannot enter ${closed} (mode 0700)`);
    expect(lines[0]).toContain('"postgres"');
    expect(lines[0]).toMatch(/DATA_DIR/);
    expect(lines[0]).toMatch(/non-root user/);
    expect(lines[0]).toMatch(/DATABASE_URL/);
    expect(server.stderr()).not.toMatch(/EACCES|^\s+at /m);
  }, 60_000);
});
