import { afterAll, describe, expect, it } from 'vitest';
import { generateOutlets, runDomainTag } from '../../src/demo/outlet-generator.js';
import { abilitiesFor } from '../../src/domain/keys/abilities.js';
import { KEY_SHAPED } from '../../src/domain/keys/key-format.js';
import { KeyResolver } from '../../src/domain/keys/key-resolver.js';
import type { Principal } from '../../src/domain/keys/principal.js';
import { upsertOutlets } from '../../src/domain/outlets/outlet-upsert.js';
import { outletSearchOf } from '../../src/domain/outlets/search.js';
import { warmSearchesOf } from '../../src/domain/outlets/search-warmup.js';
import { createPublisher } from '../../src/domain/publishers/publisher-service.js';
import { restQueryOf, routeWarmUps } from '../../src/http/search-route-warm-up.js';
import { outletListQuery } from '../../src/schemas/outlets.js';
import { setupApp } from '../helpers/app.js';
import { ManualClock } from '../helpers/clock.js';
import { createTestDatabase } from '../helpers/db.js';
import { bearer, workspaceWithKeys } from '../helpers/fixtures.js';

// Issue 56: once the search index serves, and before /readyz says ready, the process sends its
// REST search route some of the engine's warm-up searches itself, with a key that lives only in
// its memory.

const database = await createTestDatabase();
afterAll(() => database.drop());
const pub = await createPublisher(database.pool, 'Route warm-up publisher');
// Enough live outlets for one route search (routeWarmUps).
await upsertOutlets(database.pool, pub.id, generateOutlets(1_200, 9, { domainTag: runDomainTag(pub.id, 9) }), 0.2);
const ws = await workspaceWithKeys(database.pool);
const keysUsed = async () => (await database.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM api_keys WHERE last_used_at IS NOT NULL')).rows[0]!.n;

describe('GET /readyz waits for the REST route to answer its warm-up searches', () => {
  it('is 503 when the index first serves, 200 once the route answered its searches; no key is stored or logged', async () => {
    const h = await setupApp({}, { database, searchLoaded: false });
    // The moment the first index serves: the route warm-up has only just begun (its first step
    // waits for PostgreSQL), and callbacks run in the order they were added (the app's first).
    const atLoad = await h.app.searchEngine.loadedOnce.then(() => ({
      engine: h.app.searchEngine.ready,
      search: h.app.searchReady(),
      readyz: h.app.inject({ method: 'GET', url: '/readyz' }),
    }));
    expect(atLoad.engine).toBe(true);
    expect(atLoad.search).toBe(false);
    expect((await atLoad.readyz).statusCode).toBe(503);
    for (let i = 0; !h.app.searchReady(); i++) {
      if (i > 400) throw new Error('the route warm-up never ended');
      await new Promise((r) => setTimeout(r, 25));
    }
    expect((await h.app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);

    const lines = h.logs.map((l) => JSON.parse(l) as Record<string, unknown>);
    const done = lines.find((l) => l.msg === 'search: the REST route answered its warm-up searches');
    expect(done).toMatchObject({ searches: routeWarmUps(h.app.searchEngine.loaded!.counts.live) });
    expect(done!.searches).toBeGreaterThan(0);
    const searched = lines.filter((l) => l.msg === 'request' && l.route === '/api/v1/outlets');
    expect(searched.length).toBe(done!.searches);
    expect(searched.every((l) => l.status === 200)).toBe(true);
    // The lent key is in no log line, and nothing was written for it.
    expect(h.logs.some((l) => KEY_SHAPED.test(l))).toBe(false);
    expect(await keysUsed()).toBe(0);
    // A client's key works as before.
    expect((await h.app.inject({ method: 'GET', url: '/api/v1/outlets?q=news', headers: bearer(ws.readKey) })).statusCode).toBe(200);
  });
});

describe('the route warm-up searches', () => {
  it('a tenth of the engine’s warm-up, none below 1,000 outlets', () => {
    expect(routeWarmUps(1_000_000)).toBe(100);
    expect(routeWarmUps(100_000)).toBe(100);
    expect(routeWarmUps(10_000)).toBe(10);
    expect(routeWarmUps(1_000)).toBe(1);
    expect(routeWarmUps(999)).toBe(0);
  });

  it('written as a client writes them, each is the same search through the REST query’s own checks', async () => {
    const h = await setupApp({}, { database });
    const searches = warmSearchesOf(h.app.searchEngine.loaded!, 1_000);
    const seen = new Set<string>();
    for (const s of searches) {
      const query = restQueryOf(s);
      const parsed = outletListQuery.parse(Object.fromEntries(new URLSearchParams(query)));
      const { page, per_page, max_price_usd, ...params } = parsed;
      expect(outletSearchOf({ ...params, max_price_cents: max_price_usd }), query).toEqual(outletSearchOf({ q: s.q, sort: s.sort, ...s.params }));
      expect([page, per_page]).toEqual([s.page, s.perPage]);
      for (const name of new URLSearchParams(query).keys()) seen.add(name);
    }
    // Every kind of parameter was asked at least once.
    expect([...seen].sort()).toEqual(['country', 'format', 'language', 'max_price_usd', 'min_traffic', 'page', 'per_page', 'q', 'sort', 'topic', 'verified_traffic']);
  });
});

describe('KeyResolver.lend', () => {
  const principal: Principal = {
    keyId: 0,
    name: 'lent',
    prefix: '',
    canPlaceOrders: false,
    abilities: abilitiesFor({ publisherId: null, canPlaceOrders: false, canManageWebhooks: false }),
    workspaceId: ws.workspaceId,
    publisherId: null,
  };

  it('resolves a lent key on its resolver only, until forgotten or for 5 s at most, and writes nothing for it', async () => {
    const used = await keysUsed();
    const clock = new ManualClock();
    const resolver = new KeyResolver(database.pool, clock);
    const key = resolver.lend(principal);
    expect(key).toMatch(KEY_SHAPED);
    expect(await resolver.resolve(key)).toEqual(principal);
    expect(await new KeyResolver(database.pool, clock).resolve(key)).toBeNull();
    resolver.forget(key);
    expect(await resolver.resolve(key)).toBeNull();

    const other = resolver.lend(principal);
    expect(other).not.toBe(key);
    clock.advance(5_000);
    expect(await resolver.resolve(other)).toEqual(principal);
    clock.advance(1);
    expect(await resolver.resolve(other)).toBeNull();
    expect(await keysUsed()).toBe(used);
  });
});
