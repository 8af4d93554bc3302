import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readEmbeddedInfo } from '../../src/db/embedded.js';
import { cleanupChildren, cliJson, describeChild, eventually, portAccepts, runCli, type ServerChild, spawnServer, tempDataDir } from '../helpers/child.js';
import { freePort } from '../helpers/pg-server.js';

// Without DATABASE_URL the CLI reaches the running server's embedded PostgreSQL through
// <DATA_DIR>/pg.json, and starts (then stops) its own instance when no server runs.

const dataDir = tempDataDir();
const pgPort = await freePort();
const env = { DATA_DIR: dataDir, EMBEDDED_PG_PORT: String(pgPort) };
afterAll(cleanupChildren, 30_000);

async function me(server: ServerChild, key: string) {
  const res = await fetch(`${server.baseUrl}/api/v1/me`, { headers: { authorization: `Bearer ${key}` } });
  return { status: res.status, body: (await res.json()) as { data: { workspace: { id: number; name: string }; balance: number } } };
}

let workspaceId = 0;
let offlineKey = '';

describe('admin CLI on the embedded database', () => {
  it('works against the running server: a key it creates answers on the server', async () => {
    const server = await spawnServer(env);
    await server.waitHealthy(80_000);

    const ws = cliJson(await runCli(['workspace', 'create', '--name', 'CLI Live', '--balance-cents', '7700'], env));
    workspaceId = ws.id as number;
    const key = cliJson(await runCli(['key', 'create', '--workspace', String(workspaceId)], env));

    const r = await me(server, key.key as string);
    expect(r.status).toBe(200);
    expect(r.body.data.workspace).toMatchObject({ id: workspaceId, name: 'CLI Live' });
    expect(r.body.data.balance).toBe(7_700);
    // The CLI did not stop the server's PostgreSQL on its way out.
    // (Ready also waits for the search index's warm-up after start: waited for, not assumed.)
    await eventually(async () => (await fetch(`${server.baseUrl}/readyz`)).status === 200, '/readyz 200', 60_000);

    expect(await server.stop('SIGTERM'), describeChild(server)).toEqual({ code: 0, signal: null });
    expect(await portAccepts(pgPort)).toBe(false);
  }, 120_000);

  it('with no server running it starts its own instance, succeeds, and stops it again', async () => {
    expect(readEmbeddedInfo(dataDir)!.pid).toBeUndefined();
    const key = cliJson(await runCli(['key', 'create', '--workspace', String(workspaceId), '--can-place-orders'], env));
    expect(key.can_place_orders).toBe(true);
    offlineKey = key.key as string;

    // Its PostgreSQL is gone and pg.json names no running process.
    expect(await portAccepts(pgPort)).toBe(false);
    expect(existsSync(join(dataDir, 'pg', 'postmaster.pid'))).toBe(false);
    expect(readEmbeddedInfo(dataDir)!.pid).toBeUndefined();
  }, 120_000);

  it('what the CLI wrote offline is there when the server starts again', async () => {
    const server = await spawnServer(env);
    await server.waitHealthy(80_000);
    const r = await me(server, offlineKey);
    expect(r.status).toBe(200);
    expect(r.body.data.workspace.id).toBe(workspaceId);
    expect(await server.stop('SIGTERM'), describeChild(server)).toEqual({ code: 0, signal: null });
  }, 120_000);
});
