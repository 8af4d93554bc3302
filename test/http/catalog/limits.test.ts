import { afterAll, describe, expect, it, vi } from 'vitest';
import { createKey } from '../../../src/domain/keys/key-service.js';
import { createLogger } from '../../../src/logger.js';
import { createRedis } from '../../../src/infra/redis.js';
import { setupApp, type TestApp } from '../../helpers/app.js';
import { bearer } from '../../helpers/fixtures.js';
import { testRedisUrl, uniquePrefix } from '../../helpers/redis.js';
import { seller } from './fixtures.js';

// The brute-force guard on purchase codes and the rate limit Interface B shares with Interface A.

const h = await setupApp();

const validate = (app: TestApp, key: string, code: string) =>
  app.inject({ method: 'POST', url: '/api/purchases/validation', payload: { api_key: key, purchase_code: code } });
const unknownCode = (i: number) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;

describe('POST /api/purchases/validation: brute-force guard, 30 invalid codes per key per minute — security', () => {
  it('answers the 31st invalid code with 429, then valid codes too, until the window passes', async () => {
    // The guard's window follows the wall clock (its library keeps time so), so the test moves that.
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() });
    try {
      await exhaustThenWait();
    } finally {
      vi.useRealTimers();
    }
  });

  async function exhaustThenWait() {
    const s = await seller(h.database);
    for (let i = 1; i <= 30; i++) {
      const res = await validate(h.app, s.readKey, unknownCode(i));
      expect(res.statusCode, `attempt ${i}`).toBe(404);
      expect(res.json()).toEqual({ status: 'error', msg: 'Invalid purchase code' });
    }
    const blocked = await validate(h.app, s.readKey, unknownCode(31));
    expect(blocked.statusCode).toBe(429);
    expect(blocked.json()).toEqual({ status: 'error', msg: 'Too many requests' });
    expect(Number(blocked.headers['retry-after'])).toBeGreaterThan(0);
    expect(Number(blocked.headers['retry-after'])).toBeLessThanOrEqual(60);

    const valid = await validate(h.app, s.readKey, s.code);
    expect(valid.statusCode).toBe(429);
    expect(valid.json()).toEqual({ status: 'error', msg: 'Too many requests' });

    // Another key of the same workspace has its own count; the other endpoints are not blocked.
    const second = await createKey(h.database.pool, { workspaceId: s.workspaceId });
    expect((await validate(h.app, second.key, s.code)).statusCode).toBe(200);
    expect((await h.app.inject({ method: 'GET', url: `/api/items/all?api_key=${s.readKey}` })).statusCode).toBe(200);

    vi.setSystemTime(Date.now() + 30_000);
    expect((await validate(h.app, s.readKey, s.code)).statusCode).toBe(429);
    vi.setSystemTime(Date.now() + 30_001);
    expect((await validate(h.app, s.readKey, s.code)).statusCode).toBe(200);
    expect((await validate(h.app, s.readKey, unknownCode(1))).statusCode).toBe(404);
  }

  it('counts only "Invalid purchase code" answers: ill-formed and refunded codes count, 400s and 401s do not', async () => {
    const s = await seller(h.database);
    for (let i = 0; i < 40; i++) {
      const res = await h.app.inject({ method: 'POST', url: '/api/purchases/validation', payload: { api_key: s.readKey, purchase_code: ' ' } });
      expect(res.statusCode).toBe(400);
    }
    for (let i = 1; i <= 30; i++) {
      const code = i % 3 === 0 ? 'x'.repeat(100) : i % 3 === 1 ? 'not-a-code' : unknownCode(i);
      expect((await validate(h.app, s.readKey, code)).statusCode).toBe(404);
    }
    expect((await validate(h.app, s.readKey, s.code)).statusCode).toBe(429);
  });
});

describe('GET /api/v1/me and the seller API: one rate-limit bucket per key — security', async () => {
  const limited = await setupApp({ RATE_LIMIT_PER_MINUTE: 5 }, { database: h.database });

  it('mixing /api/v1/me and Interface B calls with the same key', async () => {
    const s = await seller(h.database);
    const calls = [
      () => limited.app.inject({ method: 'GET', url: '/api/v1/me', headers: bearer(s.readKey) }),
      () => limited.app.inject({ method: 'GET', url: `/api/account/details?api_key=${s.readKey}` }),
      () => limited.app.inject({ method: 'GET', url: '/api/v1/me', headers: bearer(s.readKey) }),
      () => limited.app.inject({ method: 'GET', url: '/api/items/all', headers: bearer(s.readKey) }),
      () => validate(limited.app, s.readKey, s.code),
    ];
    for (const [i, call] of calls.entries()) {
      const res = await call();
      expect(res.statusCode, `call ${i + 1}`).toBe(200);
      expect(res.headers['x-ratelimit-limit']).toBe('5');
      expect(res.headers['x-ratelimit-remaining']).toBe(String(4 - i));
    }
    const b = await limited.app.inject({ method: 'GET', url: `/api/account/details?api_key=${s.readKey}` });
    expect(b.statusCode).toBe(429);
    expect(b.json()).toEqual({ status: 'error', msg: 'Too many requests' });
    expect(Number(b.headers['retry-after'])).toBeGreaterThan(0);
    const a = await limited.app.inject({ method: 'GET', url: '/api/v1/me', headers: bearer(s.readKey) });
    expect(a.statusCode).toBe(429);
    expect(a.json()).toMatchObject({ code: 'rate_limited' });
  });

  it('a rate-limited key is refused before its parameters are looked at', async () => {
    const s = await seller(h.database);
    for (let i = 0; i < 5; i++) await limited.app.inject({ method: 'GET', url: '/api/v1/me', headers: bearer(s.readKey) });
    const res = await limited.app.inject({ method: 'GET', url: `/api/items/item?api_key=${s.readKey}` });
    expect(res.statusCode).toBe(429);
    expect(res.json()).toEqual({ status: 'error', msg: 'Too many requests' });
  });
});

const redisUrl = await testRedisUrl();

describe.skipIf(!redisUrl)('POST /api/purchases/validation: brute-force guard counted in Redis — security', async () => {
  const log = createLogger('silent');
  const redisA = createRedis(redisUrl!, log);
  const redisB = createRedis(redisUrl!, log);
  const shared = { REDIS_URL: redisUrl!, REDIS_KEY_PREFIX: uniquePrefix() };
  const a = await setupApp(shared, { database: h.database, redis: redisA });
  const b = await setupApp(shared, { database: h.database, redis: redisB });
  afterAll(() => {
    redisA.disconnect();
    redisB.disconnect();
  });
  await Promise.all([redisA, redisB].map((r) => (r.status === 'ready' ? undefined : new Promise((ok) => r.once('ready', ok)))));

  it('invalid answers on one process block the key on another', async () => {
    const s = await seller(h.database);
    for (let i = 1; i <= 30; i++) {
      const app = i % 2 === 0 ? a.app : b.app;
      expect((await validate(app, s.readKey, unknownCode(i))).statusCode, `attempt ${i}`).toBe(404);
    }
    for (const app of [a.app, b.app]) {
      const res = await validate(app, s.readKey, s.code);
      expect(res.statusCode).toBe(429);
      expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
      expect(Number(res.headers['retry-after'])).toBeLessThanOrEqual(60);
    }
    const ttl = await redisA.pttl(`${shared.REDIS_KEY_PREFIX}fail:purchase-code:${(await h.database.pool.query('SELECT id FROM api_keys WHERE workspace_id = $1 AND NOT can_place_orders', [s.workspaceId])).rows[0].id}`);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(60_000);
  });

  it('never lets more than 30 invalid answers through, even concurrently', async () => {
    const s = await seller(h.database);
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) => validate(i % 2 ? a.app : b.app, s.readKey, unknownCode(i + 1))),
    );
    const statuses = results.map((r) => r.statusCode);
    expect(statuses.filter((x) => x === 404)).toHaveLength(30);
    expect(statuses.filter((x) => x === 429)).toHaveLength(20);
  });
});
