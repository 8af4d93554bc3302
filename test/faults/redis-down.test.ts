import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey } from '../../src/domain/keys/key-service.js';
import { cleanupChildren, describeChild, eventually, type ServerChild, sleep, spawnServer, tempDataDir } from '../helpers/child.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { bearer, workspaceWithKeys } from '../helpers/fixtures.js';
import { freePort } from '../helpers/pg-server.js';
import { uniquePrefix } from '../helpers/redis.js';

// Redis going away while REDIS_URL is set, with the real server as a child process. The Redis
// here is this file's own redis-server on a free port (the machine's shared one is never
// touched): killed with SIGKILL, requests keep succeeding and the per-key limit still holds,
// counted in the process's memory (docs/http.md, "With REDIS_URL"); restarted on the same port,
// counting returns to Redis by itself.

function onPath(cmd: string): boolean {
  try {
    execFileSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

const hasRedis = onPath('redis-server');
if (!hasRedis) console.warn('test/faults/redis-down.test.ts skipped: redis-server is not on PATH');

const LIMIT = 10;
// A hang detector, not a speed check: a request waiting on a dead Redis would never be answered.
const HANG_MS = 10_000;

interface Res {
  status: number;
  headers: Headers;
  body: any;
  ms: number;
}

describe.skipIf(!hasRedis)('Redis down while REDIS_URL is set', () => {
  let database: TestDatabase;
  let server: ServerChild;
  let redisPort: number;
  let redisProc: ChildProcess | undefined;
  let workspaceId: number;
  const prefix = uniquePrefix();

  async function startRedis(): Promise<void> {
    const proc = spawn(
      'redis-server',
      ['--port', String(redisPort), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', tempDataDir('mkt-redis-')],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    proc.stdout!.on('data', (d) => (out += String(d)));
    proc.stderr!.on('data', (d) => (out += String(d)));
    redisProc = proc;
    await eventually(
      async () => {
        if (proc.exitCode !== null) throw new Error(`redis-server exited: ${out}`);
        return (await onRedis((r) => r.ping())) === 'PONG';
      },
      'redis-server answering',
      10_000,
    );
  }

  async function killRedis(): Promise<void> {
    const proc = redisProc;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
    const gone = new Promise((r) => proc.once('exit', r));
    proc.kill('SIGKILL');
    await gone;
    redisProc = undefined;
  }

  /** Runs `fn` on a short-lived connection to this file's Redis. */
  async function onRedis<T>(fn: (r: Redis) => Promise<T>): Promise<T> {
    const r = new Redis({ host: '127.0.0.1', port: redisPort, lazyConnect: true, connectTimeout: 1000, maxRetriesPerRequest: 0, retryStrategy: () => null });
    r.on('error', () => {});
    try {
      await r.connect();
      return await fn(r);
    } finally {
      r.disconnect();
    }
  }

  /** The key's count in Redis for the current window, or null when Redis has none. */
  const countInRedis = (keyId: number) => onRedis((r) => r.get(`${prefix}rl:key:${keyId}`));

  async function freshKey(): Promise<{ id: number; key: string }> {
    const { id, key } = await createKey(database.pool, { workspaceId });
    return { id, key };
  }

  async function get(path: string, key?: string): Promise<Res> {
    const started = Date.now();
    const res = await fetch(`${server.baseUrl}${path}`, {
      ...(key ? { headers: bearer(key) } : {}),
      signal: AbortSignal.timeout(5000),
    });
    const text = await res.text();
    return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined, ms: Date.now() - started };
  }

  async function validate(key: string): Promise<Res> {
    const started = Date.now();
    const res = await fetch(`${server.baseUrl}/api/purchases/validation`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ api_key: key, purchase_code: randomUUID() }),
      signal: AbortSignal.timeout(5000),
    });
    return { status: res.status, headers: res.headers, body: await res.json(), ms: Date.now() - started };
  }

  async function meTimes(key: string, n: number): Promise<Res[]> {
    const out: Res[] = [];
    for (let i = 0; i < n; i++) out.push(await get('/api/v1/me', key));
    return out;
  }

  beforeAll(async () => {
    redisPort = await freePort();
    await startRedis();
    database = await createTestDatabase();
    workspaceId = (await workspaceWithKeys(database.pool)).workspaceId;
    server = await spawnServer({
      DATABASE_URL: database.url,
      REDIS_URL: `redis://127.0.0.1:${redisPort}`,
      REDIS_KEY_PREFIX: prefix,
      RATE_LIMIT_PER_MINUTE: String(LIMIT),
      ORDER_SWEEP_INTERVAL_MS: '0',
      LOG_LEVEL: 'info', // "redis is back" is an info line
    });
    await server.waitHealthy(45_000);
    // The server counts in memory until its Redis client is ready: wait for a count in Redis.
    await eventually(async () => {
      const k = await freshKey();
      await get('/api/v1/me', k.key);
      return (await countInRedis(k.id)) === '1';
    }, 'the server counting in Redis', 15_000, 200);
  }, 60_000);

  afterAll(async () => {
    await killRedis();
    await cleanupChildren(); // the server child, and the temporary Redis directories
    await database?.drop();
  });

  let k1: { id: number; key: string };
  let killedAt = 0;

  it('counts the per-key limit in Redis', async () => {
    k1 = await freshKey();
    const first = await meTimes(k1.key, LIMIT);
    expect(first.map((r) => r.status)).toEqual(Array(LIMIT).fill(200));
    expect(first.map((r) => r.headers.get('x-ratelimit-remaining'))).toEqual(Array.from({ length: LIMIT }, (_, i) => String(LIMIT - 1 - i)));
    expect(await countInRedis(k1.id)).toBe(String(LIMIT));
    const over = await get('/api/v1/me', k1.key);
    expect(over.status).toBe(429);
    expect(over.body.code).toBe('rate_limited');
    expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  it('keeps answering after Redis is killed, limiting each key in memory', async () => {
    await killRedis();
    killedAt = Date.now();

    // Requests that never touch the rate limit, and a fresh key's: answered as usual, promptly.
    const other = await freshKey();
    const mixed = [
      await get('/healthz'),
      await get('/readyz'),
      ...(await meTimes(other.key, 3)),
      ...(await Promise.all(Array.from({ length: 5 }, () => validate(other.key)))),
    ];
    expect(mixed.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 404, 404, 404, 404, 404]);
    expect(Math.max(...mixed.map((r) => r.ms)), 'slowest answer while Redis is down (ms)').toBeLessThan(HANG_MS);

    // The key Redis had already limited starts a fresh window in this process's memory: ten
    // more requests pass, then the limit holds again.
    const next = await meTimes(k1.key, LIMIT + 2);
    expect(next.map((r) => r.status)).toEqual([...Array(LIMIT).fill(200), 429, 429]);
    expect(next[LIMIT]!.body.code).toBe('rate_limited');
    expect(Date.now() - killedAt).toBeLessThan(60_000); // all within the first key's window

    // Once reconnecting has failed (ioredis retries after 200 ms, 400 ms, …) the server says so,
    // and keeps limiting in memory.
    await eventually(async () => (server.stderr() + server.stdout()).includes('redis unreachable'), '"redis unreachable" logged', 10_000);
    const k2 = await freshKey();
    const later = await meTimes(k2.key, LIMIT + 1);
    expect(later.map((r) => r.status)).toEqual([...Array(LIMIT).fill(200), 429]);
    expect(Math.max(...later.map((r) => r.ms)), 'slowest answer while reconnecting (ms)').toBeLessThan(HANG_MS);

    expect(server.hasExited()).toBe(false);
    expect(server.stderr() + server.stdout(), describeChild(server)).not.toMatch(/"level":(50|60)/);
  });

  it('counts in Redis again once it is back on the same port', async () => {
    // Down for a few seconds, so the client's reconnect delay has grown (it is capped at 2 s).
    await sleep(Math.max(0, killedAt + 4000 - Date.now()));
    await startRedis();
    const restartedAt = Date.now();
    // ioredis retries every 2 s at most; each attempt uses a fresh key.
    await eventually(async () => {
      const k = await freshKey();
      const r = await get('/api/v1/me', k.key);
      expect(r.status).toBe(200);
      return (await countInRedis(k.id)) === '1';
    }, 'counting in Redis again', 15_000, 200);
    const resumedMs = Date.now() - restartedAt;

    const k3 = await freshKey();
    const statuses = (await meTimes(k3.key, LIMIT + 1)).map((r) => r.status);
    expect(statuses).toEqual([...Array(LIMIT).fill(200), 429]);
    expect(await countInRedis(k3.id)).toBe(String(LIMIT + 1));
    const keys = await onRedis((r) => r.keys(`${prefix}*`));
    expect(keys).toContain(`${prefix}rl:key:${k3.id}`);
    console.info('redis down:', JSON.stringify({ resumedMs, keysInRedis: keys.length }));
    expect(server.stderr() + server.stdout()).toContain('redis is back');
  });
});
