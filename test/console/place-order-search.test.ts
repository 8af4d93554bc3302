import { describe, expect, it } from 'vitest';
import { generateOutlets, runDomainTag } from '../../src/demo/outlet-generator.js';
import { countryName, languageName } from '../../src/console/format.js';
import { upsertOutlets } from '../../src/domain/outlets/outlet-upsert.js';
import { createPublisher } from '../../src/domain/publishers/publisher-service.js';
import { addMember } from '../../src/domain/users/memberships.js';
import { createUser } from '../../src/domain/users/user-service.js';
import { setupApp } from '../helpers/app.js';
import { bearer } from '../helpers/fixtures.js';
import { articleFor, orderKit } from '../helpers/orders.js';
import { consoleClient } from './helpers.js';

// Placing from the console as the API can (docs/console.md, "Placing an order"): the outlet
// search takes every filter of GET /api/v1/outlets and answers, for the same query, the outlets
// the API answers, in its order; the outlet page shows the country, the topics and the track
// record the API gives; the article forms show the offer's word range, and their preview shows
// the checks the domain will store when the article is sent.

const h = await setupApp({ RATE_LIMIT_PER_MINUTE: 100_000, SIGNIN_FAILURES_PER_ADDRESS: 1000 });
const pool = h.database.pool;
const kit = orderKit(h);
const TARGET = 'https://buyer.example/product';

const { ws, p } = await kit.setup([{ content_by: 'buyer', publisher_price_cents: 5_000, min_words: 50, max_words: 2_000, max_links: 3 }], 1_000_000, 'search-console.test');
const generator = await createPublisher(pool, 'Generated outlets');
await upsertOutlets(pool, generator.id, generateOutlets(300, 7, { domainTag: runDomainTag(generator.id, 7) }), 0.2);

const email = 'searcher@example.com';
const password = 'correct horse battery';
const user = await createUser(pool, { email, name: 'Sam Searcher', password });
await addMember(pool, { workspaceId: ws.workspaceId }, user.id, 'owner');
const c = consoleClient(h, '10.7.0.1');
expect((await c.post('/app/sign-in', { email, password })).statusCode).toBe(303);
const w = `/app/w/${ws.workspaceId}`;

const rest = async (query: string) => {
  const res = await h.app.inject({ method: 'GET', url: `/api/v1/outlets?${query}`, headers: bearer(ws.readKey) });
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as { data: Array<{ id: number }>; meta: { total: number } };
};

// The index loads, then takes the outlets written above as their notifications arrive.
const listed = Number((await pool.query(`SELECT count(*)::int AS n FROM outlets o WHERE EXISTS (SELECT 1 FROM offers f WHERE f.outlet_id = o.id AND f.active)`)).rows[0].n);
for (let i = 0; (await rest('per_page=1')).meta.total !== listed; i++) {
  if (i > 400) throw new Error('the search index never took the outlets');
  await new Promise((r) => setTimeout(r, 25));
}

/** The outlets the console lists for a query string, in the order it lists them, and the count it says. */
async function consoleIds(query: string) {
  const res = await c.get(`${w}/outlets?${query}`);
  expect(res.statusCode, res.body).toBe(200);
  const results = res.body.slice(res.body.indexOf('id="results"'));
  const ids = [...results.matchAll(new RegExp(`<a href="${w}/outlets/(\\d+)">`, 'g'))].map((m) => Number(m[1]));
  const total = Number(/id="results">[^<]*\((\d+)\)<\/h2>/.exec(res.body)?.[1]);
  return { ids, total, body: res.body };
}

/** A value of a column that some outlets have and others do not (the most common one). */
const common = async (sql: string) => String((await pool.query(sql)).rows[0].v);

describe('Console outlet search: every filter of the API, the same answer — happy', () => {
  it('each filter narrows the list exactly as GET /api/v1/outlets does for the same query, in the same order', async () => {
    const country = await common(`SELECT country AS v FROM outlets GROUP BY country ORDER BY count(*) DESC, country LIMIT 1`);
    const language = await common(`SELECT language AS v FROM outlets WHERE language <> 'en' GROUP BY language ORDER BY count(*) DESC LIMIT 1`);
    const topic = await common(`SELECT t AS v FROM outlets, unnest(topics) t GROUP BY t ORDER BY count(*) DESC, t LIMIT 1 OFFSET 2`);
    const all = await rest('per_page=20');
    const queries = [
      `country=${country}`,
      `country=${country.toLowerCase()}`,
      `language=${language}`,
      `topic=${topic}`,
      'max_price_usd=150',
      'verified_traffic=true',
      'verified_traffic=false',
      'type=news',
      'format=press_release',
      'min_traffic=50000',
      'sort=price',
      'sort=-price',
      'sort=traffic',
      'sort=link_survival',
      `q=${encodeURIComponent(topic)}&sort=relevance`,
      `country=${country}&max_price_usd=400&sort=price`,
      `verified_traffic=true&page=2`,
    ];
    for (const query of queries) {
      const api = await rest(`${query}&per_page=20`);
      const shown = await consoleIds(query);
      expect(shown.ids, query).toEqual(api.data.map((o) => o.id));
      expect(shown.total, query).toBe(api.meta.total);
      // A filter narrows (or, for a sort or a page, keeps the count): never an empty or a whole list by accident.
      if (!query.startsWith('sort=') && !query.startsWith('verified_traffic=true&page')) {
        expect(api.meta.total, query).toBeGreaterThan(0);
        expect(api.meta.total, query).toBeLessThan(all.meta.total);
      }
    }
  });

  it('the form shows what was asked, each choice from the schema, and pages keep the filters', async () => {
    const { body } = await consoleIds('verified_traffic=true&sort=price&max_price_usd=500&format=guest_post');
    expect(body).toContain('<option value="true" selected>Google-verified only</option>');
    expect(body).toContain('<option value="price" selected>Cheapest first</option>');
    expect(body).toContain('<option value="guest_post" selected>guest post</option>');
    for (const format of ['sponsored_article', 'link_insertion', 'press_release']) expect(body).toContain(`<option value="${format}">`);
    expect(body).toContain('name="max_price_usd" type="text" value="500"');
    expect(body).toContain(`href="${w}/outlets"`); // "Clear the filters"
    const next = /<a href="([^"]+)">Next<\/a>/.exec(body)?.[1]?.replace(/&amp;/g, '&');
    expect(next).toBe(`${w}/outlets?format=guest_post&max_price_usd=500&verified_traffic=true&sort=price&page=2`);
  });

  it('blank fields are filters not given; parameters that are not the form’s are left alone', async () => {
    const blank = await consoleIds('q=&country=&language=&topic=&type=&format=&max_price_usd=&min_traffic=&verified_traffic=&sort=&utm_source=mail');
    expect(blank.ids).toEqual((await rest('per_page=20')).data.map((o) => o.id));
  });
});

describe('Console outlet search: bad filters — errors', () => {
  it('a bad value is 422 naming the field, as the API refuses it, and nothing is searched', async () => {
    const cases: Array<[string, string, RegExp]> = [
      ['country=XX', 'country', /id="f-country-error">Country must be an ISO 3166-1 alpha-2 country code/],
      ['language=english', 'language', /id="f-language-error">Language must be an ISO 639-1 language code/],
      ['topic=Not%20A%20Slug', 'topic', /id="f-topic-error">Topic must be a lowercase slug/],
      ['max_price_usd=cheap', 'max_price_usd', /id="f-max_price_usd-error">Price at most \(USD\) must be a number of US dollars/],
      ['max_price_usd=0', 'max_price_usd', /id="f-max_price_usd-error">Price at most \(USD\) must be greater than 0/],
      ['min_traffic=-5', 'min_traffic', /id="f-min_traffic-error">Monthly visits at least must be a non-negative integer/],
      ['verified_traffic=maybe', 'verified_traffic', /id="f-verified_traffic-error">Traffic must be true, false, 1 or 0/],
      ['sort=best', 'sort', /id="f-sort-error">Sort must be one of: relevance, traffic/],
      ['country=US&country=DE', 'country', /id="f-country-error">Country /],
    ];
    for (const [query, field, message] of cases) {
      const api = await h.app.inject({ method: 'GET', url: `/api/v1/outlets?${query}`, headers: bearer(ws.readKey) });
      expect(api.statusCode, query).toBe(422);
      expect(Object.keys(api.json().errors), query).toEqual([field]);
      const res = await c.get(`${w}/outlets?${query}`);
      expect(res.statusCode, query).toBe(422);
      expect(res.body, query).toMatch(message);
      expect(res.body).toContain('Nothing was searched: check the filters below.');
      expect(res.body).not.toContain('id="results"');
    }
    const page = await c.get(`${w}/outlets?page=0`);
    expect(page.statusCode).toBe(422);
    expect(page.body).toContain('Page page must be an integer between 1 and 1000000.');
  });
});

describe('Console outlet page: country, topics and the track record the API gives — happy', () => {
  it('shows each figure of the API’s track_record in words, and what is not measured yet', async () => {
    // An outlet with a baseline record, and its link figures from the marketplace's own checks.
    const { rows } = await pool.query(`SELECT id FROM outlets WHERE base_rating IS NOT NULL AND base_orders_completed > 1 ORDER BY id LIMIT 1`);
    const id = rows[0].id as number;
    const api = (await h.app.inject({ method: 'GET', url: `/api/v1/outlets/${id}`, headers: bearer(ws.readKey) })).json().data;
    const page = await c.get(`${w}/outlets/${id}`);
    expect(page.statusCode).toBe(200);
    const fact = (label: string) => new RegExp(`<dt>${label.replace(/[()]/g, '\\$&')}</dt><dd>([^<]*)</dd>`).exec(page.body)?.[1];
    const pct = (r: number) => `${(r * 100).toLocaleString('en-US', { maximumFractionDigits: 1 })}%`;
    // Codes read as names (Spain for ES), as everywhere in the console.
    expect(fact('Country')).toBe(countryName(api.country));
    expect(fact('Language')).toBe(languageName(api.language));
    expect(fact('Topics')).toBe(api.topics.join(', '));
    const t = api.track_record;
    expect(fact('Orders completed')).toBe(t.orders_completed.toLocaleString('en-US'));
    expect(fact('Orders accepted')).toBe(pct(t.acceptance_rate));
    expect(fact('Published on time')).toBe(pct(t.on_time_rate));
    expect(fact('Average turnaround')).toBe(`${t.avg_turnaround_days} days`);
    expect(fact('Rating')).toBe(`${t.rating} of 5`);
    expect(t.link_survival_30d).toBeNull();
    expect(fact('Links alive at 30 days')).toBe('None checked yet');
    expect(fact('First link check passed')).toBe('None checked yet');
  });

  it('an outlet with orders here: the record counted from them, the link checks with their counts', async () => {
    const placed = await kit.place(ws.spendKey, { offer_ids: [p.offers[0]!.id], target_url: TARGET });
    expect(placed.statusCode, placed.body).toBe(201);
    const order = placed.json().data[0].id as number;
    await pool.query('UPDATE orders SET alive_30d = true, first_check_passed = false WHERE id = $1', [order]);
    const api = (await h.app.inject({ method: 'GET', url: `/api/v1/outlets/${p.outletId}`, headers: bearer(ws.readKey) })).json().data;
    expect(api.track_record).toMatchObject({ link_survival_30d: 1, links_checked_30d: 1, verification_pass_rate: 0, placements_checked: 1, acceptance_rate: null });
    const body = (await c.get(`${w}/outlets/${p.outletId}`)).body;
    expect(body).toContain('<dt>Links alive at 30 days</dt><dd>100% of 1 link checked</dd>');
    expect(body).toContain('<dt>Links alive at 60 days</dt><dd>None checked yet</dd>');
    expect(body).toContain('<dt>First link check passed</dt><dd>0% of 1 placement checked</dd>');
    expect(body).toContain('<dt>Orders accepted</dt><dd>Not measured yet</dd>');
    expect(body).toContain('<dt>Topics</dt><dd>technology</dd>');
    expect(body).toContain('<dt>Country</dt><dd>United States</dd>');
  });
});

/** The rows of the checks table that follows `heading` on a page: name, result, detail. */
function checksAfter(body: string, heading: string) {
  const from = body.indexOf(heading);
  expect(from, heading).toBeGreaterThan(-1);
  const table = body.slice(from, body.indexOf('</table>', from));
  return [...table.matchAll(/<tr><td>([^<]+)<\/td><td class="check-(\w+)">\w+<\/td><td>([^<]*)<\/td><\/tr>/g)].map((m) => ({ name: m[1]!, status: m[2]!, detail: m[3]! }));
}

const unescape = (s: string) => s.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&amp;/g, '&');

describe('Console article forms: the word range, and a preview with the checks — happy', () => {
  it('the order page’s content form shows the range; its preview fails a short draft and passes a good one, as submitting then stores', async () => {
    const placed = await kit.place(ws.spendKey, { offer_ids: [p.offers[0]!.id], target_url: TARGET, anchor_text: 'our product' });
    const id = placed.json().data[0].id as number;
    const order = `${w}/orders/${id}`;
    const form = (await c.get(order)).body;
    expect(form).toContain('The offer asks for 50–2,000 words and at most 3 links');
    expect(form).toContain('id="f-content-body-hint">50–2,000 words, at most 3 links.');

    const short = await c.post(`${order}/content`, { title: 'Short', body: `Too few words. See [our product](${TARGET}).`, intent: 'preview' }, { from: order });
    expect(short.statusCode).toBe(200);
    const failing = checksAfter(short.body, 'Checks submitting will run');
    expect(failing.find((x) => x.name === 'word count')).toEqual({ name: 'word count', status: 'fail', detail: '6 words; the offer asks for 50–2000.' });
    expect(failing.find((x) => x.name === 'title length')).toMatchObject({ status: 'fail' });
    expect(failing.find((x) => x.name === 'target link')).toMatchObject({ status: 'pass' });

    const good = { title: 'Our product, reviewed', body: articleFor(TARGET) };
    const preview = await c.post(`${order}/content`, { ...good, intent: 'preview' }, { from: order });
    const passing = checksAfter(preview.body, 'Checks submitting will run');
    expect(passing.map((x) => x.name)).toEqual(['target link', 'anchor text', 'word count', 'link count', 'title length', 'markdown safe']);
    expect(passing.every((x) => x.status === 'pass')).toBe(true);
    // Nothing was sent by a preview; sent, the version carries exactly the checks shown.
    expect((await pool.query('SELECT count(*)::int AS n FROM order_contents WHERE order_id = $1', [id])).rows[0].n).toBe(0);
    expect((await c.post(`${order}/content`, { ...good, intent: 'submit' }, { from: order })).statusCode).toBe(303);
    const stored = (await h.app.inject({ method: 'GET', url: `/api/v1/orders/${id}`, headers: bearer(ws.readKey) })).json().data.content.checks;
    expect(stored.map((x: { name: string; status: string; detail: string }) => ({ name: x.name.replace(/_/g, ' '), status: x.status, detail: x.detail }))).toEqual(
      passing.map((x) => ({ ...x, detail: unescape(x.detail) })),
    );
  });

  it('the publisher’s draft form shows the same range and checks its preview', async () => {
    const pub = await createUser(pool, { email: 'writer@example.com', name: 'Wes Writer', password });
    await addMember(pool, { publisherId: p.publisherId }, pub.id, 'member');
    const wc = consoleClient(h, '10.7.0.2');
    expect((await wc.post('/app/sign-in', { email: 'writer@example.com', password })).statusCode).toBe(303);
    const { p: p2 } = await kit.setup([{ content_by: 'publisher', min_words: 300, max_words: 900, max_links: 1 }], 1_000_000);
    await addMember(pool, { publisherId: p2.publisherId }, pub.id, 'member');
    const placed = await kit.place(ws.spendKey, { offer_ids: [p2.offers[0]!.id], target_url: TARGET });
    const id = placed.json().data[0].id as number;
    const order = `/app/p/${p2.publisherId}/orders/${id}`;
    expect((await wc.post(`${order}/accept`, {}, { from: order })).statusCode).toBe(303);
    const form = (await wc.get(order)).body;
    expect(form).toContain('The offer asks for 300–900 words and at most 1 link,');
    const preview = await wc.post(`${order}/draft`, { title: 'A draft that is short', body: articleFor(TARGET), intent: 'preview' }, { from: order });
    expect(checksAfter(preview.body, 'Checks submitting will run').find((x) => x.name === 'word count')).toMatchObject({ status: 'fail', detail: expect.stringContaining('the offer asks for 300–900') });
  });

  it('the brief of an offer that publishes the buyer’s article: the range, and a preview with the checks placing runs', async () => {
    const brief = `${w}/outlets/${p.outletId}/offers/${p.offers[0]!.id}`;
    const form = (await c.get(brief)).body;
    expect(form).toContain('id="f-content-hint">50–2,000 words, at most 3 links.');
    expect(form).toContain('value="preview"');
    const before = (await pool.query('SELECT count(*)::int AS n FROM orders WHERE workspace_id = $1', [ws.workspaceId])).rows[0].n;
    const fields = { target_url: TARGET, anchor_text: 'our product', brief: '', content_title: 'Tiny', content: 'Not enough.' };
    const short = await c.post(brief, { ...fields, intent: 'preview' });
    expect(short.statusCode).toBe(200);
    const failing = checksAfter(short.body, 'Checks placing will run');
    expect(failing.find((x) => x.name === 'word count')).toEqual({ name: 'word count', status: 'fail', detail: '2 words; the offer asks for 50–2000.' });
    expect(failing.find((x) => x.name === 'target link')).toMatchObject({ status: 'fail' });
    expect(short.body).toContain('>Not enough.</textarea>');
    const good = await c.post(brief, { ...fields, content_title: 'Our product, reviewed', content: articleFor(TARGET), intent: 'preview' });
    expect(checksAfter(good.body, 'Checks placing will run').every((x) => x.status === 'pass')).toBe(true);
    // A bad brief is the brief's 422, as "Review the order" answers it.
    const bad = await c.post(brief, { ...fields, target_url: 'ftp://nowhere', intent: 'preview' });
    expect(bad.statusCode).toBe(422);
    expect(bad.body).toContain('id="f-target_url-error"');
    expect((await pool.query('SELECT count(*)::int AS n FROM orders WHERE workspace_id = $1', [ws.workspaceId])).rows[0].n).toBe(before);
  });
});
