import { rmSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { createDatabase } from '../../src/db/client.js';
import { migrateOnly } from '../../src/db/migrate.js';
import { setupApp } from '../helpers/app.js';
import { eventually } from '../helpers/child.js';
import type { TestDatabase } from '../helpers/db.js';
import { bearer, workspaceWithKeys } from '../helpers/fixtures.js';
import { startTempEmbedded } from '../helpers/pg-server.js';

// The database going away and coming back, on a PostgreSQL private to this file: readiness
// follows it, requests answer a prompt 503 in the contract's error shape, and service resumes.

const CONNECT_TIMEOUT_MS = 1000;
// Upper bounds are hang detectors (without a connect timeout these requests would never be
// answered), not speed checks; the lower bound (it did wait for the timeout) is exact.
const HANG_MS = 10 * CONNECT_TIMEOUT_MS;
const pgServer = await startTempEmbedded();
let pgRunning = true;
const pool = createDatabase({ url: pgServer.url, max: 5, connectTimeoutMs: CONNECT_TIMEOUT_MS });
const database: TestDatabase = { ...pool, url: pgServer.url, name: 'marketplace', drop: async () => {} };

// Registered before setupApp's own afterAll, so it runs after the app is closed.
afterAll(async () => {
  await pool.close().catch(() => {});
  if (pgRunning) await pgServer.stop();
  rmSync(pgServer.dataDir, { recursive: true, force: true });
}, 30_000);

await migrateOnly(pool.pool);
const ws = await workspaceWithKeys(pool.pool, { balanceCents: 4_200 });
const h = await setupApp({ DATABASE_CONNECT_TIMEOUT_MS: CONNECT_TIMEOUT_MS }, { database });

const get = (url: string, key?: string) => h.app.inject({ method: 'GET', url, ...(key ? { headers: bearer(key) } : {}) });

function expectUnavailable(res: Awaited<ReturnType<typeof get>>) {
  expect(res.statusCode).toBe(503);
  const body = res.json();
  expect(Object.keys(body).sort()).toEqual(['code', 'message', 'request_id']);
  expect(body.code).toBe('unavailable');
  expect(body.request_id).toBe(res.headers['x-request-id']);
  expect(typeof body.message).toBe('string');
  // Nothing from the driver or the database: no SQL, no error codes, no stack, no host details.
  expect(res.body).not.toMatch(/select|api_keys|ECONNREFUSED|127\.0\.0\.1|postgres|\bat .*\(|\.ts:\d+/i);
}

describe('database outage', () => {
  it('is ready while PostgreSQL answers', async () => {
    // Once the search's in-memory index has loaded (it reads the catalog at start).
    await eventually(async () => (await get('/readyz')).statusCode === 200, '/readyz 200 after the search index loaded', 15_000);
    const res = await get('/readyz');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 'ok' });
    // Warm the key cache for the spending key only.
    expect((await get('/api/v1/me', ws.spendKey)).statusCode).toBe(200);
  });

  it('answers 503 (never 500) promptly while PostgreSQL is down', async () => {
    await pgServer.stop();
    pgRunning = false;

    const ready = await get('/readyz');
    expect(ready.statusCode).toBe(503);
    expect(ready.json()).toEqual({ status: 'unavailable' });

    // A key not yet cached: the lookup itself cannot reach the database.
    const started = Date.now();
    const res = await get('/api/v1/me', ws.readKey);
    const elapsed = Date.now() - started;
    expectUnavailable(res);
    expect(elapsed).toBeLessThan(HANG_MS);

    // A cached key authenticates, then the query for /me fails: the same 503.
    const cached = await get('/api/v1/me', ws.spendKey);
    expectUnavailable(cached);

    // Requests that need no database still work.
    expect((await get('/healthz')).statusCode).toBe(200);
    // Nothing was logged as a crash of the process.
    expect(h.logs.join('')).not.toContain('"level":60');
  });

  it('recovers once PostgreSQL is back', async () => {
    await pgServer.start();
    pgRunning = true;
    await eventually(async () => (await get('/readyz')).statusCode === 200, '/readyz 200 again', 15_000);
    const res = await eventually(async () => {
      const r = await get('/api/v1/me', ws.readKey);
      return r.statusCode === 200 ? r : undefined;
    }, '/me 200 again', 15_000);
    expect(res.json().data.balance).toBe(4_200);
  });
});

// A TCP listener that swallows the PostgreSQL handshake: only the connect timeout can end it.
const sockets: Socket[] = [];
const blackhole = createServer((sock) => void sockets.push(sock));
await new Promise<void>((r) => blackhole.listen(0, '127.0.0.1', r));
const stuckUrl = `postgres://nobody:nothing@127.0.0.1:${(blackhole.address() as { port: number }).port}/none`;
const stuck = createDatabase({ url: stuckUrl, max: 2, connectTimeoutMs: CONNECT_TIMEOUT_MS });
afterAll(async () => {
  for (const sock of sockets) sock.destroy();
  blackhole.close();
  await stuck.close().catch(() => {});
});
const stuckApp = await setupApp(
  { DATABASE_CONNECT_TIMEOUT_MS: CONNECT_TIMEOUT_MS },
  // Its search index can never load (the database never answers): do not wait for it.
  { database: { ...stuck, url: stuckUrl, name: 'none', drop: async () => {} }, searchLoaded: false },
);

describe('a database that accepts connections but never answers', () => {
  it('answers 503 within the pool connect timeout', async () => {
    let started = Date.now();
    const ready = await stuckApp.app.inject({ method: 'GET', url: '/readyz' });
    expect(ready.statusCode).toBe(503);
    expect(ready.json()).toEqual({ status: 'unavailable' });
    expect(Date.now() - started).toBeLessThan(HANG_MS);

    started = Date.now();
    const res = await stuckApp.app.inject({ method: 'GET', url: '/api/v1/me', headers: bearer(ws.readKey) });
    const elapsed = Date.now() - started;
    expectUnavailable(res);
    // It waited for the connect timeout (the listener never answers), and no longer.
    expect(elapsed).toBeGreaterThanOrEqual(CONNECT_TIMEOUT_MS - 50);
    expect(elapsed).toBeLessThan(HANG_MS);

    // The console too (its CSRF key is read on the first console request, not at start): a 503 page.
    started = Date.now();
    const page = await stuckApp.app.inject({ method: 'GET', url: '/app/sign-in' });
    expect(page.statusCode).toBe(503);
    expect(page.body).toContain('Unavailable');
    expect(Date.now() - started).toBeLessThan(HANG_MS);
  });
});
