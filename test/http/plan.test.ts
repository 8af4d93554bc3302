import { beforeAll, describe, expect, it } from 'vitest';
import { upsertOutlets } from '../../src/domain/outlets/outlet-upsert.js';
import type { OutletInput } from '../../src/domain/outlets/outlet-input.js';
import { createPublisher } from '../../src/domain/publishers/publisher-service.js';
import { createProject } from '../../src/domain/workspaces/projects.js';
import { planData } from '../../src/schemas/plan.js';
import { setupApp } from '../helpers/app.js';
import { offerInput, outletInput } from '../helpers/catalog.js';
import { bearer, type WorkspaceFixture, workspaceWithKeys } from '../helpers/fixtures.js';

const h = await setupApp();

type Offer = OutletInput['offers'][number];
const offer = (over: Partial<Offer> = {}): Offer => offerInput({ content_by: 'buyer', min_words: 500, max_words: 1500, max_links: 2, sponsored_label: false, ...over });
const outlet = (domain: string, over: Partial<OutletInput> = {}): OutletInput =>
  outletInput(domain, { description: 'General interest stories.', topics: ['lifestyle'], traffic: { monthly_visits: 50_000, verified: true }, offers: [offer()], ...over });

// Prices are fee-inclusive: publisher price × 1.2 (fee rate 0.2, rounded half-up).
const travel = [
  outlet('wanderlust.example', { name: 'Wanderlust Weekly', topics: ['travel', 'hotels'], description: 'Travel guides for families.', traffic: { monthly_visits: 1_200_000, verified: true }, offers: [offer({ publisher_price_cents: 25_000 }), offer({ format: 'link_insertion', title: 'Link', publisher_price_cents: 8_000 })] }),
  outlet('roadtrips.example', { name: 'Road Trips', topics: ['travel'], description: 'Road trips across America.', offers: [offer({ publisher_price_cents: 6_000 })] }),
  outlet('reisen.example', { name: 'Reisen Heute', country: 'DE', language: 'de', topics: ['travel'], description: 'Travel news from Germany.', offers: [offer({ publisher_price_cents: 9_000 }), offer({ format: 'press_release', title: 'PR', publisher_price_cents: 4_000 })] }),
  outlet('voyage.example', { name: 'Voyage Magazine', country: 'FR', language: 'fr', type: 'magazine', topics: ['travel', 'culture'], description: 'Travelling in France and beyond.', traffic: { monthly_visits: 300_000, verified: false }, offers: [offer({ publisher_price_cents: 15_000 }), offer({ format: 'sponsored_article', title: 'Sponsored', publisher_price_cents: 20_000 })] }),
  outlet('familytrips.example', { name: 'Family Trips', topics: ['family', 'travel'], description: 'Holidays with kids.', offers: [offer({ format: 'link_insertion', title: 'Link', publisher_price_cents: 3_000 })] }),
  outlet('hotelnews.example', { name: 'Hotel News', country: 'GB', topics: ['hotels'], description: 'Hotel openings and reviews for travellers.', offers: [offer({ publisher_price_cents: 12_000 })] }),
];
const unrelated = [
  outlet('gadgets.example', { name: 'Gadget Hub', topics: ['technology'], description: 'Reviews of gadgets and software.', traffic: { monthly_visits: 5_000_000, verified: true } }),
  outlet('money.example', { name: 'Money Matters', topics: ['finance'], description: 'Personal finance advice.', offers: [offer({ publisher_price_cents: 2_000 })] }),
];
// New Zealand holds the crafted case where greedy-by-score loses (the route-level twin of the
// unit test): A scores higher than B or C alone (its name matches), B + C together beat A.
const crafted = [
  outlet('kiwi-a.example', { name: 'Kiwi Surfing', country: 'NZ', topics: ['outdoors'], description: 'Waves.', offers: [offer({ publisher_price_cents: 5_000 })] }), // $60.00
  outlet('kiwi-b.example', { name: 'Kiwi Beaches', country: 'NZ', topics: ['surfing'], description: 'Sand.', offers: [offer({ publisher_price_cents: 4_167 })] }), // $50.00
  outlet('kiwi-c.example', { name: 'Kiwi Coast', country: 'NZ', topics: ['surfing'], description: 'Shore.', offers: [offer({ publisher_price_cents: 4_167 })] }), // $50.00
];

let ws: WorkspaceFixture;
let other: WorkspaceFixture;

beforeAll(async () => {
  const pub = await createPublisher(h.database.pool, 'Plan publisher');
  await upsertOutlets(h.database.pool, pub.id, [...travel, ...unrelated, ...crafted], 0.2);
  // The planner reads the search index, which learns of the import by notification: wait for it.
  await h.app.searchEngine.catchUp();
  ws = await workspaceWithKeys(h.database.pool, { balanceCents: 250_000 });
  other = await workspaceWithKeys(h.database.pool);
});

const plan = (key: string, payload: unknown) =>
  h.app.inject({ method: 'POST', url: '/api/v1/plan', headers: bearer(key), payload: payload as Record<string, unknown> });

interface Item {
  outlet: { id: number; domain: string; country: string };
  offer: { id: number; outlet_id: number; format: string; price: number };
  score: number;
  why: string;
}

function expectWellFormed(data: {
  items: Item[];
  offer_ids: number[];
  budget_cents: number;
  total_cents: number;
  remaining_cents: number;
}) {
  expect(planData.parse(data)).toBeTruthy();
  expect(data.total_cents).toBe(data.items.reduce((s, i) => s + i.offer.price, 0));
  expect(data.total_cents).toBeLessThanOrEqual(data.budget_cents);
  expect(data.remaining_cents).toBe(data.budget_cents - data.total_cents);
  expect(data.offer_ids).toEqual(data.items.map((i) => i.offer.id));
  expect(new Set(data.items.map((i) => i.outlet.id)).size).toBe(data.items.length);
  for (const i of data.items) expect(i.offer.outlet_id).toBe(i.outlet.id);
  const scores = data.items.map((i) => i.score);
  expect(scores).toEqual([...scores].sort((a, b) => b - a));
}

describe('POST /api/v1/plan — happy', () => {
  it('plans relevant outlets within budget for a read-only key, explaining each pick', async () => {
    const res = await plan(ws.readKey, { goal: 'Promote our family travel app', budget_usd: 500 });
    expect(res.statusCode).toBe(200);
    const { data } = res.json();
    expectWellFormed(data);
    expect(data.goal).toBe('Promote our family travel app');
    expect(data.budget_cents).toBe(50_000);
    expect(data.budget_cents_formatted).toBe('$500.00');
    expect(data.items.length).toBeGreaterThan(0);
    // Only outlets matching a word of the goal: travel and family outlets, never gadgets or money.
    const domains = data.items.map((i: Item) => i.outlet.domain);
    for (const d of domains) expect(travel.map((t) => t.domain)).toContain(d);
    for (const i of data.items) expect(i.why).toMatch(/^Matches '.+' in its .+; .+ monthly visits; .+ of your \$500\.00 budget\.$/);
    expect(data.message).toMatch(/^Picked \d+ outlets? for \$[\d,.]+ of your \$500\.00 budget/);
    expect(data.items[0].outlet).toMatchObject({ traffic: { monthly_visits: expect.any(Number), verified: expect.any(Boolean) } });
  });

  it('never goes over budget, whatever the budget (property over many budgets)', async () => {
    for (const budget_usd of [0.01, 1, 24, 36, 59.99, 60, 99.99, 120.5, 250, 333.33, 777.77, 1_500, 10_000, 10_000_000]) {
      for (const goal of ['travel hotels family', 'gadgets and money']) {
        const res = await plan(ws.readKey, { goal, budget_usd });
        expect(res.statusCode, `${goal} ${budget_usd}`).toBe(200);
        const { data } = res.json();
        expect(data.budget_cents).toBe(Math.round(budget_usd * 100));
        expectWellFormed(data);
      }
    }
  });

  it('spends a large budget on every matching outlet, one offer each, and says so', async () => {
    const res = await plan(ws.readKey, { goal: 'travel', budget_usd: 100_000 });
    const { data } = res.json();
    expectWellFormed(data);
    const expected = [...travel].filter((t) => t.topics.includes('travel') || /travel/i.test(t.description)).map((t) => t.domain);
    expect(data.items.map((i: Item) => i.outlet.domain).sort()).toEqual(expected.sort());
    expect(data.message).toMatch(/That is every matching outlet with an offer within your budget\. Outlets in any language: your goal is too short/);
  });

  it('matches a word in singular or plural, and names where it matched', async () => {
    const res = await plan(ws.readKey, { goal: 'hotel', budget_usd: 10_000 });
    const { data } = res.json();
    expectWellFormed(data);
    const byDomain = Object.fromEntries(data.items.map((i: Item) => [i.outlet.domain, i.why]));
    expect(Object.keys(byDomain).sort()).toEqual(['hotelnews.example', 'wanderlust.example']);
    expect(byDomain['hotelnews.example']).toMatch(/^Matches 'hotel' in its name or domain;/);
    expect(byDomain['wanderlust.example']).toMatch(/^Matches 'hotel' in its topics;/);
  });

  it('honours countries (any case) and formats', async () => {
    const res = await plan(ws.readKey, { goal: 'travel news', budget_usd: 10_000, countries: ['de', 'FR'] });
    const { data } = res.json();
    expectWellFormed(data);
    expect(data.items.map((i: Item) => i.outlet.country).sort()).toEqual(['DE', 'FR']);

    const fmt = await plan(ws.readKey, { goal: 'travel', budget_usd: 10_000, formats: ['link_insertion'] });
    const f = fmt.json().data;
    expectWellFormed(f);
    expect(f.items.length).toBe(2);
    for (const i of f.items as Item[]) expect(i.offer.format).toBe('link_insertion');

    const both = await plan(ws.readKey, { goal: 'travel', budget_usd: 10_000, countries: ['DE'], formats: ['press_release', 'sponsored_article'] });
    const b = both.json().data;
    expect(b.items.map((i: Item) => [i.outlet.country, i.offer.format])).toEqual([['DE', 'press_release']]);
  });

  it('beats greedy-by-score on a crafted catalog: two $50 offers instead of the single best $60 one', async () => {
    const res = await plan(ws.readKey, { goal: 'kiwi surfing', budget_usd: 100, countries: ['NZ'] });
    const { data } = res.json();
    expectWellFormed(data);
    const a = await plan(ws.readKey, { goal: 'kiwi surfing', budget_usd: 1_000, countries: ['NZ'] });
    const scores = Object.fromEntries(a.json().data.items.map((i: Item) => [i.outlet.domain, i.score]));
    // A alone outscores B and C, so a greedy-by-score planner would buy A and then nothing else fits.
    expect(scores['kiwi-a.example']).toBeGreaterThan(scores['kiwi-b.example']);
    expect(scores['kiwi-a.example']).toBeGreaterThan(scores['kiwi-c.example']);
    expect(data.items.map((i: Item) => i.outlet.domain).sort()).toEqual(['kiwi-b.example', 'kiwi-c.example']);
    expect(data.total_cents).toBe(10_000);
  });

  it('ranks by quality when no outlet matches a word of the goal, and says so', async () => {
    const res = await plan(ws.readKey, { goal: 'zyxwv quuxly', budget_usd: 200 });
    const { data } = res.json();
    expectWellFormed(data);
    expect(data.items.length).toBeGreaterThan(0);
    expect(data.message).toMatch(/ranked by traffic, track record and cost only/);
    for (const i of data.items) expect(i.why).toMatch(/^Matches none of the words of your goal/);
  });

  it('answers 200 with an empty plan when the budget is below the cheapest matching offer, naming that price', async () => {
    const res = await plan(ws.readKey, { goal: 'kiwi surfing', budget_usd: 49.99, countries: ['NZ'] });
    expect(res.statusCode).toBe(200);
    const { data } = res.json();
    expectWellFormed(data);
    expect(data).toMatchObject({ items: [], offer_ids: [], total_cents: 0, remaining_cents: 4_999, total_cents_formatted: '$0.00' });
    expect(data.message).toBe(
      'Empty plan: your budget of $49.99 is below the cheapest matching offer, $50.00 (the cheapest active offer in NZ). Raise the budget or widen the countries or formats. ' +
        'Outlets in any language: your goal is too short to tell its language (send languages to choose).',
    );
  });

  it('answers 200 with an empty plan when no outlet matches the countries and formats', async () => {
    const res = await plan(ws.readKey, { goal: 'travel', budget_usd: 1_000, countries: ['AQ'], formats: ['press_release'] });
    const { data } = res.json();
    expect(data.items).toEqual([]);
    expect(data.message).toBe(
      'Empty plan: no outlet in AQ has an active press release offer. Widen the countries or formats. ' +
        'Outlets in any language: your goal is too short to tell its language (send languages to choose).',
    );
  });

  it('formats amounts in the workspace currency', async () => {
    const eur = await workspaceWithKeys(h.database.pool, { currency: 'EUR' });
    const { data } = (await plan(eur.readKey, { goal: 'travel', budget_usd: 100 })).json();
    expect(data.budget_cents).toBe(10_000);
    expect(data.budget_cents_formatted).toBe('€92.00');
    for (const i of data.items) expect(i.offer.price_formatted).toMatch(/^€/);
  });

  it("accepts a project of the caller's workspace", async () => {
    const project = await createProject(h.database.pool, ws.workspaceId, 'Spring');
    const res = await plan(ws.spendKey, { goal: 'travel', budget_usd: 100, project_id: project.id, audience: 'parents', countries: [], formats: [] });
    expect(res.statusCode).toBe(200);
  });

  it('picks at most 50 outlets, so its offer_ids go to POST /api/v1/orders as they are', async () => {
    const pub = await createPublisher(h.database.pool, 'Many outlets');
    const many = Array.from({ length: 60 }, (_, i) =>
      outlet(`fjord-${i}.example`, { name: `Fjord Notes ${i}`, country: 'IS', topics: ['travel'], description: 'Travel in Iceland.', offers: [offer({ publisher_price_cents: 1_000 + i })] }),
    );
    await upsertOutlets(h.database.pool, pub.id, many, 0.2);
    await h.app.searchEngine.catchUp();
    const buyer = await workspaceWithKeys(h.database.pool, { balanceCents: 10_000_000 });
    const res = await plan(buyer.readKey, { goal: 'travel in iceland', budget_usd: 100_000, countries: ['IS'] });
    expect(res.statusCode).toBe(200);
    const data = res.json().data;
    expect(data.offer_ids).toHaveLength(50);
    expect(data.message).toContain('at most 50 outlets');
    const placed = await h.app.inject({
      method: 'POST',
      url: '/api/v1/orders',
      headers: { ...bearer(buyer.spendKey), 'idempotency-key': 'plan-of-50' },
      payload: { offer_ids: data.offer_ids, target_url: 'https://buyer.example/' },
    });
    expect(placed.statusCode, placed.body).toBe(201);
    expect(placed.json().data).toHaveLength(50);
  });

  it('changes nothing: no table is written, the balance stays', async () => {
    const me = async () => (await h.app.inject({ method: 'GET', url: '/api/v1/me', headers: bearer(ws.spendKey) })).json().data;
    await me(); // api_keys.last_used_at is written at most once a minute: get that write out of the way
    const before = await snapshot();
    const balance = (await me()).balance;
    for (const budget_usd of [1, 100, 10_000]) expect((await plan(ws.spendKey, { goal: 'travel hotels', budget_usd })).statusCode).toBe(200);
    expect(await snapshot()).toEqual(before);
    expect((await me()).balance).toBe(balance);
  });
});

/** Row count and a content hash of every table. */
async function snapshot(): Promise<Record<string, unknown>> {
  const { rows } = await h.database.pool.query<{ t: string }>(`SELECT tablename AS t FROM pg_tables WHERE schemaname = 'public' ORDER BY 1`);
  const out: Record<string, unknown> = {};
  for (const { t } of rows) {
    const r = await h.database.pool.query(`SELECT count(*)::int AS n, md5(COALESCE(string_agg(x::text, ',' ORDER BY x::text), '')) AS h FROM "${t}" x`);
    out[t] = r.rows[0];
  }
  return out;
}

describe('POST /api/v1/plan — errors', () => {
  const ok = { goal: 'travel app', budget_usd: 100 };
  const fieldsOf = async (payload: unknown) => {
    const res = await plan(ws.readKey, payload);
    expect(res.statusCode, JSON.stringify(payload)).toBe(422);
    expect(res.json().code).toBe('invalid_input');
    return Object.keys(res.json().errors);
  };

  it('names each missing field as required, with no body at all too', async () => {
    for (const payload of [{}, undefined]) {
      const res = await h.app.inject({ method: 'POST', url: '/api/v1/plan', headers: bearer(ws.readKey), ...(payload ? { payload } : {}) });
      expect(res.statusCode).toBe(422);
      expect(res.json().errors).toEqual({ goal: ['is required'], budget_usd: ['is required'] });
    }
  });

  it('refuses budgets of 0, negative, above 10,000,000, not a number, or below a cent', async () => {
    for (const budget_usd of [0, -5, 10_000_000.01, 1e12, '100', null, 0.004]) {
      expect(await fieldsOf({ ...ok, budget_usd })).toEqual(['budget_usd']);
    }
    expect(await fieldsOf({ goal: 'travel app' })).toEqual(['budget_usd']);
  });

  it('refuses 1e309 (JSON for Infinity) on budget_usd', async () => {
    const res = await h.app.inject({
      method: 'POST',
      url: '/api/v1/plan',
      headers: { ...bearer(ws.readKey), 'content-type': 'application/json' },
      payload: '{"goal": "travel app", "budget_usd": 1e309}',
    });
    expect(res.statusCode).toBe(422);
    expect(res.json().errors).toEqual({ budget_usd: ['must be a finite number of US dollars'] });
  });

  it('refuses countries that are not an array or not alpha-2 codes, and unknown formats, naming the item', async () => {
    expect(await fieldsOf({ ...ok, countries: 'US' })).toEqual(['countries']);
    expect(await fieldsOf({ ...ok, countries: ['XX'] })).toEqual(['countries.0']);
    expect(await fieldsOf({ ...ok, countries: ['US', 'USA'] })).toEqual(['countries.1']);
    expect(await fieldsOf({ ...ok, formats: ['video'] })).toEqual(['formats.0']);
    expect(await fieldsOf({ ...ok, formats: 'guest_post' })).toEqual(['formats']);
  });

  it('refuses a missing, short or long goal, a long audience and a bad project_id', async () => {
    expect(await fieldsOf({ ...ok, goal: 'ab' })).toEqual(['goal']);
    expect(await fieldsOf({ ...ok, goal: '   ab   ' })).toEqual(['goal']);
    expect(await fieldsOf({ ...ok, goal: 'x'.repeat(501) })).toEqual(['goal']);
    expect(await fieldsOf({ budget_usd: 100 })).toEqual(['goal']);
    expect(await fieldsOf({ ...ok, audience: 'x'.repeat(501) })).toEqual(['audience']);
    expect(await fieldsOf({ ...ok, project_id: 1.5 })).toEqual(['project_id']);
    expect(await fieldsOf({ ...ok, project_id: 0 })).toEqual(['project_id']);
  });

  it("refuses another workspace's project, and a project that does not exist, on project_id", async () => {
    const theirs = await createProject(h.database.pool, other.workspaceId, 'Not yours');
    const res = await plan(ws.readKey, { ...ok, project_id: theirs.id });
    expect(res.statusCode).toBe(422);
    expect(res.json().errors).toEqual({ project_id: ['is not a project of this workspace'] });
    expect(await fieldsOf({ ...ok, project_id: 2_000_000_000 })).toEqual(['project_id']);
  });

  it('names every bad field at once', async () => {
    expect((await fieldsOf({ goal: 'x', budget_usd: -1, countries: ['ZZ'], formats: ['nope'] })).sort()).toEqual([
      'budget_usd',
      'countries.0',
      'formats.0',
      'goal',
    ]);
  });

  it('refuses unknown fields instead of ignoring them (a misspelt filter must not widen a plan)', async () => {
    const res = await plan(ws.readKey, { ...ok, country: ['DE'] });
    expect(res.statusCode).toBe(422);
    expect(JSON.stringify(res.json().errors)).toMatch(/country/);
  });

  it('answers 400 to a body that is not JSON', async () => {
    const res = await h.app.inject({
      method: 'POST',
      url: '/api/v1/plan',
      headers: { ...bearer(ws.readKey), 'content-type': 'application/json' },
      payload: '{"goal": ',
    });
    expect(res.statusCode).toBe(400);
  });
});

describe('POST /api/v1/plan — security', () => {
  it('answers 401 without a key or with an unknown key, before validating the body', async () => {
    const none = await h.app.inject({ method: 'POST', url: '/api/v1/plan', payload: { goal: 'x' } });
    expect(none.statusCode).toBe(401);
    expect(none.headers['www-authenticate']).toBe('Bearer');
    const bad = await h.app.inject({ method: 'POST', url: '/api/v1/plan', headers: bearer('mk_notarealkey000000000000000000000'), payload: { goal: 'travel', budget_usd: 5 } });
    expect(bad.statusCode).toBe(401);
  });

  it('answers 403 to a publisher key', async () => {
    const pub = await createPublisher(h.database.pool, 'Curious publisher');
    const res = await plan(pub.key, { goal: 'travel app', budget_usd: 100 });
    expect(res.statusCode).toBe(403);
  });
});
