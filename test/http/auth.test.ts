import { describe, expect, it, vi } from 'vitest';
import { generateRawKey } from '../../src/domain/keys/key-format.js';
import { createKey } from '../../src/domain/keys/key-service.js';
import { createPublisher } from '../../src/domain/publishers/publisher-service.js';
import { redactUrl } from '../../src/http/plugins/logging.js';
import { setupApp } from '../helpers/app.js';
import { runCli } from '../helpers/cli.js';
import { bearer, workspaceWithKeys } from '../helpers/fixtures.js';

const h = await setupApp();
const me = (headers: Record<string, string>, extra: { remoteAddress?: string; url?: string } = {}) =>
  h.app.inject({ method: 'GET', url: extra.url ?? '/api/v1/me', headers, ...(extra.remoteAddress ? { remoteAddress: extra.remoteAddress } : {}) });

function expectError(res: Awaited<ReturnType<typeof me>>, status: number, code: string) {
  expect(res.statusCode).toBe(status);
  const body = res.json();
  expect(body).toMatchObject({ code, request_id: res.headers['x-request-id'] });
  expect(typeof body.message).toBe('string');
  expect(JSON.stringify(body)).not.toMatch(/stack|SELECT|at \w+ \(/);
  return body;
}

describe('GET /api/v1/me: 401 for every way a key can be wrong — security', () => {
  const cases: [string, Record<string, string>][] = [
    ['no Authorization header', {}],
    ['empty header', { authorization: '' }],
    ['Bearer without a token', { authorization: 'Bearer ' }],
    ['another scheme', { authorization: 'Basic dXNlcjpwYXNz' }],
    ['a malformed key', { authorization: 'Bearer not-a-key' }],
    ['a key with a wrong prefix', { authorization: `Bearer xx_${'a'.repeat(32)}` }],
    ['an unknown well-formed key', { authorization: `Bearer ${generateRawKey()}` }],
    ['two tokens', { authorization: `Bearer ${generateRawKey()} ${generateRawKey()}` }],
  ];
  for (const [name, headers] of cases) {
    it(name, async () => {
      const res = await me(headers, { remoteAddress: `10.1.0.${cases.findIndex((c) => c[0] === name) + 1}` });
      expectError(res, 401, 'unauthenticated');
      expect(res.headers['www-authenticate']).toBe('Bearer');
    });
  }

  it('a revoked key', async () => {
    const ws = await workspaceWithKeys(h.database.pool);
    await runCli(['key', 'revoke', '--id', String(ws.readKeyId)], { DATABASE_URL: h.database.url });
    const res = await me(bearer(ws.readKey));
    expectError(res, 401, 'unauthenticated');
  });
});

describe('GET /api/v1/me: the Bearer scheme in any case — happy', () => {
  it('accepts the scheme case-insensitively', async () => {
    const ws = await workspaceWithKeys(h.database.pool);
    const res = await me({ authorization: `bearer ${ws.readKey}` });
    expect(res.statusCode).toBe(200);
  });
});

describe('Buyer API routes: a key of the wrong kind — security', () => {
  it('a publisher key on a buyer route is 403 forbidden', async () => {
    const pub = await createPublisher(h.database.pool, 'Pub for auth test');
    const res = await me(bearer(pub.key));
    expectError(res, 403, 'forbidden');
  });
});

describe('GET /api/v1/me: a cached key revoked with the CLI — security', () => {
  it('a cached key revoked with the CLI is refused within 5 s (time injected)', async () => {
    const ws = await workspaceWithKeys(h.database.pool);
    expect((await me(bearer(ws.readKey))).statusCode).toBe(200); // now cached
    const cli = await runCli(['key', 'revoke', '--id', String(ws.readKeyId)], { DATABASE_URL: h.database.url });
    expect(cli.status).toBe(0);
    expect(JSON.parse(cli.stdout)).toEqual({ id: ws.readKeyId, revoked: true });
    h.clock.advance(4_000);
    expect((await me(bearer(ws.readKey))).statusCode).toBe(200); // still inside the cache window
    h.clock.advance(1_001);
    expectError(await me(bearer(ws.readKey)), 401, 'unauthenticated');
  });
});

describe('GET /api/v1/me: the key cache and last_used_at — happy', () => {
  it('a cached key costs no database round trip for the key', async () => {
    const ws = await workspaceWithKeys(h.database.pool);
    await me(bearer(ws.readKey));
    const spy = vi.spyOn(h.database.pool, 'query');
    try {
      for (let i = 0; i < 5; i++) expect((await me(bearer(ws.readKey))).statusCode).toBe(200);
      const keyLookups = spy.mock.calls.filter((c) => JSON.stringify(c[0]).includes('api_key_by_hash'));
      expect(keyLookups).toHaveLength(0);
    } finally {
      spy.mockRestore();
    }
  });

  it('writes last_used_at at most once a minute', async () => {
    const ws = await workspaceWithKeys(h.database.pool);
    const lastUsed = async () =>
      (await h.database.pool.query('SELECT last_used_at FROM api_keys WHERE id = $1', [ws.readKeyId])).rows[0].last_used_at as Date | null;
    const waitFor = async (pred: (d: Date | null) => boolean) => {
      // The write is off the request path: on a loaded machine it can take more than a second.
      for (let i = 0; i < 500; i++) {
        const d = await lastUsed();
        if (pred(d)) return d;
        await new Promise((r) => setTimeout(r, 20));
      }
      return lastUsed();
    };
    expect(await lastUsed()).toBeNull();
    await me(bearer(ws.readKey));
    const first = await waitFor((d) => d !== null);
    expect(first).not.toBeNull();
    h.clock.advance(30_000);
    await me(bearer(ws.readKey));
    await new Promise((r) => setTimeout(r, 100));
    expect((await lastUsed())?.getTime()).toBe(first!.getTime());
    h.clock.advance(31_000);
    await me(bearer(ws.readKey));
    const second = await waitFor((d) => d !== null && d.getTime() !== first!.getTime());
    expect(second!.getTime()).toBeGreaterThan(first!.getTime());
  });
});

describe('GET /api/v1/me and the seller API: unknown keys and floods — security', () => {
  it('a flood of random keys from one IP is answered without a database round trip each', async () => {
    const spy = vi.spyOn(h.database.pool, 'query');
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 200; i++) {
        const res = await me({ authorization: `Bearer ${generateRawKey()}` }, { remoteAddress: '10.9.9.9' });
        statuses.push(res.statusCode);
      }
      const lookups = spy.mock.calls.filter((c) => JSON.stringify(c[0]).includes('api_key_by_hash')).length;
      expect(lookups).toBeLessThanOrEqual(h.config.UNKNOWN_KEY_RATE_LIMIT_PER_MINUTE);
      // Past the allowance, each key's visible prefix is checked against live keys read at most once a second.
      expect(spy.mock.calls.filter((c) => JSON.stringify(c[0]).includes('api_key_live_prefixes')).length).toBeLessThanOrEqual(1);
      expect(statuses.slice(0, 60).every((s) => s === 401)).toBe(true);
      expect(statuses.slice(60).every((s) => s === 429)).toBe(true);
    } finally {
      spy.mockRestore();
    }
  });

  it('no key at all counts per address too: 429 from an address that used up its allowance', async () => {
    // 10.9.9.9 flooded in the first test of this block.
    const res = await me({}, { remoteAddress: '10.9.9.9' });
    expect(res.statusCode).toBe(429);
    expect(res.headers['retry-after']).toBeDefined();
    const b = await h.app.inject({ method: 'GET', url: '/api/account/details', remoteAddress: '10.9.9.9' });
    expect(b.statusCode).toBe(429);
    // Elsewhere, no key is the contract's 401, counted: the 61st of a minute is a 429.
    const statuses: number[] = [];
    for (let i = 0; i < 61; i++) statuses.push((await me({}, { remoteAddress: '10.7.7.7' })).statusCode);
    expect(statuses.slice(0, 60).every((s) => s === 401)).toBe(true);
    expect(statuses[60]).toBe(429);
  });

  it('the same unknown key repeated is looked up once', async () => {
    const raw = generateRawKey();
    const spy = vi.spyOn(h.database.pool, 'query');
    try {
      for (let i = 0; i < 10; i++) await me({ authorization: `Bearer ${raw}` }, { remoteAddress: '10.8.8.8' });
      expect(spy.mock.calls.filter((c) => JSON.stringify(c[0]).includes('api_key_by_hash'))).toHaveLength(1);
    } finally {
      spy.mockRestore();
    }
  });

  it('a flooding IP gets no lookups for random keys, but its real keys keep working, new ones included', async () => {
    const ws = await workspaceWithKeys(h.database.pool);
    // A key the process has never seen, from the flooding IP: its visible prefix is a live key's
    // once the prefix set is read again (at most once a second), so it is looked up.
    h.clock.advance(1_000);
    expect((await me(bearer(ws.readKey), { remoteAddress: '10.9.9.9' })).statusCode).toBe(200);
    // A random key still gets no lookup: limited per IP.
    expect((await me({ authorization: `Bearer ${generateRawKey()}` }, { remoteAddress: '10.9.9.9' })).statusCode).toBe(429);
    // Cached by a request from elsewhere: answered from the cache and counted in the key's bucket.
    expect((await me(bearer(ws.spendKey), { remoteAddress: '10.5.5.5' })).statusCode).toBe(200);
    expect((await me(bearer(ws.spendKey), { remoteAddress: '10.9.9.9' })).statusCode).toBe(200);
  });

  it("a key that resolved within the day is still looked up for the flooding IP once its cache entry lapses", async () => {
    const ws = await workspaceWithKeys(h.database.pool);
    expect((await me(bearer(ws.readKey), { remoteAddress: '10.5.5.6' })).statusCode).toBe(200);
    h.clock.advance(6_000); // past the 5-second cache, well inside the flooding IP's minute
    expect((await me({ authorization: `Bearer ${generateRawKey()}` }, { remoteAddress: '10.9.9.9' })).statusCode).toBe(429);
    const res = await me(bearer(ws.readKey), { remoteAddress: '10.9.9.9' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['x-ratelimit-limit']).toBe('120'); // the key's bucket, not the IP's
  });
});

describe('GET /api/v1/me behind a proxy (TRUST_PROXY): unknown keys counted per client — security', async () => {
  const proxied = await setupApp({ TRUST_PROXY: 'uniquelocal' });
  const viaProxy = (client: string, headers: Record<string, string> = {}) =>
    proxied.app.inject({ method: 'GET', url: '/api/v1/me', headers: { ...headers, 'x-forwarded-for': client }, remoteAddress: '172.18.0.5' });

  it("counts unknown keys per client, not per proxy", async () => {
    for (let i = 0; i < 60; i++) expect((await viaProxy('203.0.113.7', { authorization: `Bearer ${generateRawKey()}` })).statusCode).toBe(401);
    expect((await viaProxy('203.0.113.7', { authorization: `Bearer ${generateRawKey()}` })).statusCode).toBe(429);
    // Another client behind the same proxy still gets its keys looked up.
    const ws = await workspaceWithKeys(proxied.database.pool);
    expect((await viaProxy('198.51.100.9', bearer(ws.readKey))).statusCode).toBe(200);
    expect((await viaProxy('198.51.100.9', { authorization: `Bearer ${generateRawKey()}` })).statusCode).toBe(401);
  });
});

describe('GET /api/v1/me: rate limit per key — security', () => {
  it('answers 429 with Retry-After on the 121st request of a key within a minute', async () => {
    const ws = await workspaceWithKeys(h.database.pool);
    for (let i = 1; i <= 120; i++) {
      const res = await me(bearer(ws.readKey));
      expect(res.statusCode).toBe(200);
      expect(Number(res.headers['x-ratelimit-remaining'])).toBe(120 - i);
    }
    const res = await me(bearer(ws.readKey));
    const body = expectError(res, 429, 'rate_limited');
    expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
    expect(body.retry_after).toBe(Number(res.headers['retry-after']));
    expect(res.headers['x-ratelimit-limit']).toBe('120');
    expect(res.headers['x-ratelimit-remaining']).toBe('0');
    // Another key of the same workspace has its own bucket.
    expect((await me(bearer(ws.spendKey))).statusCode).toBe(200);
  });
});

describe('Every route: request ids — happy', () => {
  it("echoes a caller's safe X-Request-Id and replaces an unsafe one", async () => {
    const ws = await workspaceWithKeys(h.database.pool);
    const ok = await me({ ...bearer(ws.readKey), 'x-request-id': 'abc.DEF-123_x' });
    expect(ok.headers['x-request-id']).toBe('abc.DEF-123_x');
    const bad = await me({ ...bearer(ws.readKey), 'x-request-id': 'a b<script>' });
    expect(bad.headers['x-request-id']).not.toBe('a b<script>');
    expect(bad.headers['x-request-id']).toMatch(/^[A-Za-z0-9._-]+$/);
    const long = await me({ ...bearer(ws.readKey), 'x-request-id': 'x'.repeat(129) });
    expect(long.headers['x-request-id']).not.toBe('x'.repeat(129));
    const err = await me({ 'x-request-id': 'trace-401' }, { remoteAddress: '10.7.7.7' });
    expect(err.json().request_id).toBe('trace-401');
  });
});

describe('Every route: logs hold no raw key — security', () => {
  it('never contain a raw key, from the header or the query string', async () => {
    const ws = await workspaceWithKeys(h.database.pool);
    const before = h.logs.length;
    await me(bearer(ws.readKey), { url: `/api/v1/me?api_key=${ws.spendKey}&x=1` });
    await me({}, { url: `/api/v1/ledger?API_KEY=${ws.spendKey}`, remoteAddress: '10.6.6.6' });
    await me(bearer(ws.readKey), { url: `/api/v1/nope?api_key=${ws.spendKey}` });
    // Every spelling the query parser decodes to api_key, as Interface B would read it.
    for (const name of ['%61pi_key', 'api_k%65y', 'api%5fk%65y', 'API%5FKEY', 'api_key[]', 'api_key%5B%5D', 'api%ZZkey']) {
      await me({}, { url: `/api/account/details?x=1&${name}=${ws.readKey}#frag`, remoteAddress: '10.6.6.7' });
    }
    const written = h.logs.slice(before).join('');
    expect(written).not.toContain(ws.readKey);
    expect(written).not.toContain(ws.spendKey);
    expect(written).toContain('[REDACTED]');
  });

  it('redactUrl keeps everything but the key', () => {
    expect(redactUrl('/api/items/all?item_id=3&%61pi_key=mk_x&b=c#f')).toBe('/api/items/all?item_id=3&%61pi_key=[REDACTED]&b=c#f');
    expect(redactUrl('/api/v1/me')).toBe('/api/v1/me');
    expect(redactUrl('/x?api_keys=1&my_api_key=2&api_key&page=2')).toBe('/x?api_keys=[REDACTED]&my_api_key=[REDACTED]&api_key=[REDACTED]&page=2');
  });

  it('redactUrl answers the same however often a URL comes, and past a flood of distinct ones (it remembers clean URLs)', () => {
    const secret = '/api/items/all?api_key=mk_abc';
    for (let i = 0; i < 3; i++) {
      expect(redactUrl('/api/purchases/validation')).toBe('/api/purchases/validation');
      expect(redactUrl(secret)).toBe('/api/items/all?api_key=[REDACTED]');
    }
    for (let i = 0; i < 2_500; i++) expect(redactUrl(`/api/v1/outlets?page=${i}`)).toBe(`/api/v1/outlets?page=${i}`);
    expect(redactUrl(secret)).toBe('/api/items/all?api_key=[REDACTED]');
    expect(redactUrl('/api/v1/outlets?page=7&purchase_code=x')).toBe('/api/v1/outlets?page=7&purchase_code=[REDACTED]');
  });
});

describe('Every route: one log line per request — happy', () => {
  it('writes one line per request with request id, route, status and duration', async () => {
    const ws = await workspaceWithKeys(h.database.pool);
    const before = h.logs.length;
    const res = await me({ ...bearer(ws.readKey), 'x-request-id': 'log-line-test' });
    const lines = h.logs.slice(before).map((l) => JSON.parse(l)).filter((l) => l.request_id === 'log-line-test');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ route: '/api/v1/me', status: res.statusCode, method: 'GET', msg: 'request' });
    expect(typeof lines[0].duration_ms).toBe('number');
  });

  it('writes the line of a path the router refuses too (bad percent-encoding, an over-long id)', async () => {
    for (const [i, url] of ['/api/v1/outlets/%E0%A4%A', `/api/v1/orders/${'9'.repeat(150)}`, '/api/purchases/%E0%A4%A'].entries()) {
      const id = `log-line-router-${i}`;
      const before = h.logs.length;
      const res = await h.app.inject({ method: 'GET', url, headers: { 'x-request-id': id } });
      expect(res.statusCode, url).toBeGreaterThanOrEqual(400);
      expect(res.statusCode, url).toBeLessThan(500);
      expect(res.headers['x-request-id'], url).toBe(id);
      const lines = h.logs.slice(before).map((l) => JSON.parse(l)).filter((l) => l.request_id === id);
      expect(lines, url).toHaveLength(1);
      expect(lines[0], url).toMatchObject({ method: 'GET', route: null, url, status: res.statusCode, msg: 'request' });
      expect(typeof lines[0].duration_ms, url).toBe('number');
    }
  });
});

describe('Keys at rest (no route): only a hash and a prefix stored — security', () => {
  it('stores only a hash and a short prefix', async () => {
    const ws = await workspaceWithKeys(h.database.pool);
    const key = await createKey(h.database.pool, { workspaceId: ws.workspaceId, name: 'hash check' });
    const { rows } = await h.database.pool.query('SELECT * FROM api_keys WHERE id = $1', [key.id]);
    expect(JSON.stringify(rows[0])).not.toContain(key.key);
    expect(rows[0].key_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(key.key).toMatch(/^mk_[A-Za-z0-9]{32}$/);
    expect(key.key.startsWith(rows[0].prefix)).toBe(true);
  });
});
