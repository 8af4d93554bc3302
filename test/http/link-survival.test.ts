import { beforeAll, describe, expect, it } from 'vitest';
import { upsertOutlets } from '../../src/domain/outlets/outlet-upsert.js';
import type { OutletInput } from '../../src/domain/outlets/outlet-input.js';
import { createPublisher } from '../../src/domain/publishers/publisher-service.js';
import { connect, fails, listen, ok } from '../mcp/helpers.js';
import { setupApp } from '../helpers/app.js';
import { NO_LINK_FIGURES, outletInput } from '../helpers/catalog.js';
import { bearer, workspaceWithKeys } from '../helpers/fixtures.js';

// The link figures of the track record (survival at 30 and 60 days, the verification pass rate)
// come from the outlet's orders' check results: shown on every outlet view, sorted by in search
// (REST and MCP, kept current in the search index as orders' checks change), and counted
// in the planner's track record.

const h = await setupApp({ RATE_LIMIT_PER_MINUTE: 100_000 });
const pool = h.database.pool;
const ws = await workspaceWithKeys(h.database.pool, { balanceCents: 10_000_000 });
const pub = await createPublisher(h.database.pool, 'Survival publisher');

const engine = h.app.searchEngine;

const visits = { a: 1_000, b: 500, c: 90_000, d: 50_000, e: 80_000 } as const;
type Key = keyof typeof visits;
const ids = {} as Record<Key, number>;
const offerOf = {} as Record<Key, number>;

beforeAll(async () => {
  await upsertOutlets(
    pool,
    pub.id,
    (Object.keys(visits) as Key[]).map((k) =>
      outletInput(`survival-${k}.example`, {
        name: `Keeper ${k.toUpperCase()}`,
        description: 'Placements that last in gardening.',
        topics: ['gardening'],
        traffic: { monthly_visits: visits[k], verified: true },
      }),
    ),
    0.2,
  );
  const { rows } = await pool.query<{ domain: string; outlet_id: number; offer_id: number }>(
    `SELECT o.domain, o.id AS outlet_id, f.id AS offer_id FROM outlets o JOIN offers f ON f.outlet_id = o.id WHERE o.domain LIKE 'survival-%'`,
  );
  for (const r of rows) {
    const k = r.domain.slice('survival-'.length, 'survival-'.length + 1) as Key;
    ids[k] = r.outlet_id;
    offerOf[k] = r.offer_id;
  }
  await engine.catchUp();
});

/** Places an order on the outlet's offer and gives it these check results (as the link checker writes them). */
async function checkedOrder(k: Key, checks: { first?: boolean; d30?: boolean; d60?: boolean }): Promise<number> {
  const res = await h.app.inject({
    method: 'POST',
    url: '/api/v1/orders',
    headers: { ...bearer(ws.spendKey), 'idempotency-key': crypto.randomUUID() },
    payload: { offer_ids: [offerOf[k]], target_url: 'https://buyer.example/' },
  });
  expect(res.statusCode, res.body).toBe(201);
  const id = res.json().data[0].id as number;
  await setChecks(id, checks);
  return id;
}

async function setChecks(orderId: number, c: { first?: boolean; d30?: boolean; d60?: boolean }) {
  await pool.query('UPDATE orders SET first_check_passed = $2, alive_30d = $3, alive_60d = $4 WHERE id = $1', [
    orderId,
    c.first ?? null,
    c.d30 ?? null,
    c.d60 ?? null,
  ]);
}

const get = (url: string) => h.app.inject({ method: 'GET', url, headers: bearer(ws.readKey) });
const record = async (k: Key) => (await get(`/api/v1/outlets/${ids[k]}`)).json().data.track_record;
const keyOf = (id: number) => (Object.keys(ids) as Key[]).find((k) => ids[k] === id) ?? `#${id}`;
const sorted = async (query: string) => {
  const res = await get(`/api/v1/outlets?${query.includes('per_page') ? '' : 'per_page=50&'}${query}`);
  expect(res.statusCode, res.body).toBe(200);
  return (res.json().data as { id: number }[]).map((i) => keyOf(i.id));
};

/** The search index reads an order's new check results from its notification: this waits for a page to show them. */
async function eventually(query: string, expected: string[]) {
  for (let i = 0; ; i++) {
    const got = await sorted(query);
    if (JSON.stringify(got) === JSON.stringify(expected) || i > 80) return expect(got).toEqual(expected);
    await new Promise((r) => setTimeout(r, 25));
  }
}



describe('GET /api/v1/outlets, GET /api/v1/outlets/{id} and MCP search-outlets: the link figures of the track record — happy', () => {
  it('are null with no check made, then computed from the orders checked (3 decimals), in detail and in search', async () => {
    expect(await record('a')).toEqual({ orders_completed: 0, on_time_rate: null, acceptance_rate: null, avg_turnaround_days: null, rating: null, ...NO_LINK_FIGURES });
    // An order placed but never checked changes none of them.
    await checkedOrder('a', {});
    expect(await record('a')).toMatchObject(NO_LINK_FIGURES);

    await checkedOrder('a', { first: true, d30: true, d60: true });
    await checkedOrder('a', { first: false, d30: true, d60: true });
    await checkedOrder('a', { d30: true, d60: false });
    expect(await record('a')).toMatchObject({
      link_survival_30d: 1,
      links_checked_30d: 3,
      link_survival_60d: 0.667,
      links_checked_60d: 3,
      verification_pass_rate: 0.5,
      placements_checked: 2,
    });
    const listed = (await get('/api/v1/outlets?q=survival-a.example')).json().data;
    expect(listed[0].id).toBe(ids.a);
    expect(listed[0].track_record).toEqual(await record('a'));
  });

  it('sort=link_survival: best first, then those without figures by traffic; sort=verification likewise', async () => {
    await checkedOrder('b', { first: undefined, d30: true, d60: true });
    await checkedOrder('b', { d30: true, d60: true });
    const c1 = await checkedOrder('c', { first: true, d30: true });
    const c2 = await checkedOrder('c', { d30: false });
    await checkedOrder('d', { first: true });
    await checkedOrder('d', { first: true });
    // a: 30d 1 (3), 60d 0.667; b: 30d 1 (2), 60d 1; c: 30d 0.5, no 60d; d and e: none (by traffic).
    await eventually('sort=link_survival', ['b', 'a', 'c', 'e', 'd']);
    // Verification: d 1 (2 checked), c 1 (1), a 0.5; then e and b by traffic.
    await eventually('sort=verification', ['d', 'c', 'a', 'e', 'b']);

    // The same with text, a filter, and pages.
    expect(await sorted('q=gardening&sort=link_survival&min_traffic=1000')).toEqual(['a', 'c', 'e', 'd']);
    expect(await sorted('q=keeper&sort=verification&per_page=2&page=2')).toEqual(['a', 'e']);
    const page = (await get('/api/v1/outlets?sort=link_survival&per_page=2&page=3')).json();
    expect(page.meta.total).toBe(5);
    expect(page.data.map((i: { id: number }) => keyOf(i.id))).toEqual(['d']);

    // Checks that change move the outlet: c's failed link was a false alarm, and a later check
    // found it alive at 60 days.
    await setChecks(c2, { d30: true, d60: true });
    await setChecks(c1, { first: true, d30: true, d60: true });
    // c: 30d 1 (2), 60d 1 (2), like b, with more traffic.
    await eventually('sort=link_survival', ['c', 'b', 'a', 'e', 'd']);
    expect(await record('c')).toMatchObject({ link_survival_30d: 1, links_checked_30d: 2, link_survival_60d: 1, links_checked_60d: 2 });
    // A write to the outlet itself keeps its figures in the index.
    await upsertOutlets(
      pool,
      pub.id,
      [outletInput('survival-c.example', { name: 'Keeper C', description: 'Placements that last in gardening.', topics: ['gardening'], traffic: { monthly_visits: 100, verified: true } })],
      0.2,
    );
    await eventually('sort=link_survival', ['b', 'c', 'a', 'e', 'd']);

    // A process loading its index over orders already checked (a lost listening connection
    // reloads it as a start does) sorts the same.
    const loaded = engine.loaded;
    await pool.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query = 'LISTEN outlets_changed' AND datname = current_database()`);
    for (let i = 0; engine.loaded === loaded; i++) {
      if (i > 400) throw new Error('the search index never loaded again');
      await new Promise((r) => setTimeout(r, 25));
    }
    expect(await sorted('sort=link_survival')).toEqual(['b', 'c', 'a', 'e', 'd']);
    expect(await sorted('sort=verification')).toEqual(['d', 'c', 'a', 'e', 'b']);
  });

  it('sorts the same through the MCP tool, which refuses an unknown sort as REST does', async () => {
    const client = await connect(await listen(h), ws.readKey);
    for (const sort of ['link_survival', 'verification']) {
      const found = await ok<{ items: { id: number }[] }>(client, 'search-outlets', { sort, per_page: 50 });
      expect(found.items.map((i) => keyOf(i.id))).toEqual(await sorted(`sort=${sort}`));
    }
    const err = await fails(client, 'search-outlets', { sort: 'survival' }, 'invalid_input');
    expect(Object.keys(err.errors as object)).toEqual(['sort']);
    const res = await get('/api/v1/outlets?sort=-link_survival');
    expect(res.statusCode).toBe(422);
    expect(Object.keys(res.json().errors)).toEqual(['sort']);
  });
});

describe('POST /api/v1/plan: links that survive — happy', () => {
  it('prefers the outlet whose links survive, all else equal', async () => {
    const planPub = await createPublisher(h.database.pool, 'Survival plan publisher');
    const twin = (domain: string): OutletInput =>
      outletInput(domain, { name: `Twin ${domain}`, country: 'IS', description: 'Fjord hiking stories.', topics: ['hiking'], traffic: { monthly_visits: 20_000, verified: true } });
    // The outlet written first (the lower id) is the one whose links die: ties would favour it.
    await upsertOutlets(pool, planPub.id, [twin('twin-lost.example'), twin('twin-kept.example')], 0.2);
    await engine.catchUp();
    const { rows } = await pool.query<{ domain: string; offer_id: number }>(
      `SELECT o.domain, f.id AS offer_id FROM outlets o JOIN offers f ON f.outlet_id = o.id WHERE o.domain LIKE 'twin-%'`,
    );
    const offerIdOf = (d: string) => rows.find((r) => r.domain === d)!.offer_id;
    const plan = async (budget: number) =>
      (
        await h.app.inject({
          method: 'POST',
          url: '/api/v1/plan',
          headers: bearer(ws.readKey),
          payload: { goal: 'fjord hiking', budget_usd: budget, countries: ['IS'] },
        })
      ).json().data as { items: { outlet: { domain: string; track_record: Record<string, unknown> }; score: number }[] };

    const before = await plan(1_000);
    expect(before.items).toHaveLength(2);
    expect(before.items[0]!.score).toBe(before.items[1]!.score);

    for (const [domain, alive] of [['twin-lost.example', false], ['twin-kept.example', true]] as const) {
      const res = await h.app.inject({
        method: 'POST',
        url: '/api/v1/orders',
        headers: { ...bearer(ws.spendKey), 'idempotency-key': crypto.randomUUID() },
        payload: { offer_ids: [offerIdOf(domain)], target_url: 'https://buyer.example/' },
      });
      await setChecks(res.json().data[0].id, { first: true, d30: alive, d60: alive });
    }
    const after = await plan(1_000);
    expect(after.items.map((i) => i.outlet.domain)).toEqual(['twin-kept.example', 'twin-lost.example']);
    // Both now have a track record of their own (no baseline, no decided orders): the mean of link
    // survival and the verification pass rate, 1 against 0.5: 20 × 0.5 = 10 points apart.
    expect(after.items[0]!.score - after.items[1]!.score).toBeCloseTo(10, 2);
    expect(after.items[1]!.outlet.track_record).toMatchObject({ link_survival_60d: 0, verification_pass_rate: 1 });

    // With budget for one, it is the one whose links survive.
    const price = (await h.app.inject({ method: 'GET', url: `/api/v1/outlets?q=twin-kept.example`, headers: bearer(ws.readKey) })).json().data[0].from_price;
    const one = await plan(price / 100);
    expect(one.items.map((i) => i.outlet.domain)).toEqual(['twin-kept.example']);
  });
});
