import { describe, expect, it } from 'vitest';
import { createKey, rollKey } from '../../src/domain/keys/key-service.js';
import { orderTimeline } from '../../src/domain/orders/order-timeline.js';
import { spendingPerDay } from '../../src/domain/orders/spending.js';
import { payoutsPerWeek } from '../../src/domain/publishers/payouts-per-week.js';
import { addMember } from '../../src/domain/users/memberships.js';
import { createUser } from '../../src/domain/users/user-service.js';
import { setupApp } from '../helpers/app.js';
import { workspaceWithKeys } from '../helpers/fixtures.js';
import { articleFor, orderKit } from '../helpers/orders.js';
import { consoleClient } from './helpers.js';

// The console's charts (docs/console.md, "Charts") over real orders placed, accepted, published,
// checked and approved through the API at times the test's clock sets: each chart is an inline
// SVG with its text alternative, and its table holds the numbers the domain's reads give.

const DOMAIN = 'charts-news.test';
const TARGET = 'https://buyer.example/product';
const HOUR = 3_600_000;
const at = (iso: string) => Date.parse(iso);
const h = await setupApp({
  SIGNIN_FAILURES_PER_ADDRESS: 1000,
  OUTBOUND_ALLOW_LOOPBACK: true,
  OUTBOUND_RESOLVE: new Map([[DOMAIN, '127.0.0.1']]),
});
const kit = orderKit(h);
const pool = h.database.pool;
const password = 'correct horse battery';
let n = 0;

async function person(target: { workspaceId: number } | { publisherId: number }) {
  n++;
  const email = `charts${n}@example.com`;
  const user = await createUser(pool, { email, name: `Chart person ${n}`, password });
  await addMember(pool, target, user.id, 'owner');
  const c = consoleClient(h, `10.56.0.${n}`);
  expect((await c.post('/app/sign-in', { email, password })).statusCode).toBe(303);
  return c;
}

/** The figure of the chart whose ids start with `id`: from its <svg> to its </figure>. */
function figure(body: string, id: string) {
  const start = body.lastIndexOf('<figure class="chart">', body.indexOf(`aria-labelledby="${id}-title ${id}-desc"`));
  expect(start, `chart ${id}`).toBeGreaterThanOrEqual(0);
  return body.slice(start, body.indexOf('</figure>', start));
}
/** The table rows of a chart: [label, value, orders]. */
const rowsOf = (fig: string) => [...fig.matchAll(/<tr><th scope="row">([^<]+)<\/th><td>([^<]*)<\/td><td>([^<]*)<\/td><\/tr>/g)].map((m) => [m[1], m[2], m[3]]);
const dollars = (cents: number) => `$${(cents / 100).toLocaleString('en-US', { minimumFractionDigits: 2 })}`;

const place = async (key: string, offerId: number) => {
  const res = await kit.place(key, { offer_ids: [offerId], target_url: TARGET });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().data[0].id as number;
};

/** An order from placing to approval, each step an hour after the last from `start`. */
async function paidOrder(spendKey: string, publisherKey: string, offerId: number, start: number, domainPath: string) {
  h.clock.set(start);
  const placed = await kit.place(spendKey, { offer_ids: [offerId], target_url: TARGET, anchor_text: 'our product', content_title: 'Reviewed', content: articleFor(TARGET) });
  expect(placed.statusCode, placed.body).toBe(201);
  const id = placed.json().data[0].id as number;
  h.clock.set(start + HOUR);
  expect((await kit.pub(publisherKey, `${id}/accept`)).json().data.status).toBe('publishing');
  h.clock.set(start + 2 * HOUR);
  expect((await kit.pub(publisherKey, `${id}/publish`, { live_url: `https://${DOMAIN}${domainPath}` })).statusCode).toBe(200);
  h.clock.set(start + 3 * HOUR);
  await kit.verifyLiveLink(id);
  h.clock.set(start + 4 * HOUR);
  expect((await kit.buyer(spendKey, `${id}/approve`)).statusCode).toBe(200);
  return id;
}

// A buyer's workspace and a publisher whose one offer takes the buyer's article.
const { ws, p } = await kit.setup([{ content_by: 'buyer', publisher_price_cents: 10_000 }], 10_000_000, DOMAIN);
const offer = p.offers[0]!;
const price = offer.price;
// A second buyer whose approved orders are the publisher's payouts (kept apart from the spending above).
const ws2 = await workspaceWithKeys(pool, { balanceCents: 10_000_000 });
// A key with a daily limit of four orders.
const limited = await createKey(pool, { workspaceId: ws.workspaceId, name: 'Agent', canPlaceOrders: true, limits: { dailyLimitCents: 4 * price } });

// Out of the 30-day window; then paid orders in two weeks; then the window's days.
h.clock.set(at('2027-01-01T10:00:00Z'));
await place(ws.spendKey, offer.id);
const paidEarlier = await paidOrder(ws2.spendKey, p.publisherKey, offer.id, at('2027-02-17T09:00:00Z'), '/earlier');
h.clock.set(at('2027-03-08T09:00:00Z'));
await place(ws.spendKey, offer.id);
const paid = await paidOrder(ws2.spendKey, p.publisherKey, offer.id, at('2027-03-09T08:00:00Z'), '/later');
h.clock.set(at('2027-03-10T08:00:00Z'));
await place(limited.key, offer.id);
await place(limited.key, offer.id);
// The key rolled: the new key's orders count against the same budget, on both keys' pages.
const rolled = await rollKey(pool, { workspaceId: ws.workspaceId }, limited.id, 24, h.clock);
h.clock.set(at('2027-03-10T10:00:00Z'));
await place(rolled.key, offer.id);
// Placed and cancelled the same day: refunded before completion, so not spent.
h.clock.set(at('2027-03-10T11:00:00Z'));
const cancelled = await place(ws.spendKey, offer.id);
expect((await kit.buyer(ws.spendKey, `${cancelled}/cancel`)).statusCode).toBe(200);
const NOW = at('2027-03-10T12:00:00Z');
h.clock.set(NOW);

const owner = await person({ workspaceId: ws.workspaceId });
const desk = await person({ publisherId: p.publisherId });
const w = `/app/w/${ws.workspaceId}`;

describe('Spending per day — happy', () => {
  it('the domain read: 30 UTC days ending today, what each spent net of refunds, the workspace’s and a key’s chain', async () => {
    const days = await spendingPerDay(pool, { workspaceId: ws.workspaceId }, NOW);
    expect(days).toHaveLength(30);
    expect(days[0]!.day).toBe('2027-02-09');
    expect(days[29]).toEqual({ day: '2027-03-10', cents: 3 * price, orders: 3 });
    expect(days.find((d) => d.day === '2027-03-08')).toEqual({ day: '2027-03-08', cents: price, orders: 1 });
    expect(days.reduce((a, d) => a + d.cents, 0)).toBe(4 * price);
    // The key's chain: the two orders of the key and the one of the key rolled from it, on either key.
    for (const keyId of [limited.id, rolled.id]) {
      const mine = await spendingPerDay(pool, { workspaceId: ws.workspaceId, keyId }, NOW);
      expect(mine[29]).toEqual({ day: '2027-03-10', cents: 3 * price, orders: 3 });
      expect(mine.reduce((a, d) => a + d.cents, 0)).toBe(3 * price);
    }
    // Another workspace's key spends nothing here.
    expect((await spendingPerDay(pool, { workspaceId: ws2.workspaceId, keyId: limited.id }, NOW)).every((d) => d.cents === 0)).toBe(true);
  });

  it('the overview draws it as an SVG with its text alternative, and its table holds the same numbers', async () => {
    const page = await owner.get(w);
    expect(page.statusCode).toBe(200);
    const fig = figure(page.body, 'spending');
    expect(fig).toContain('<svg role="img" aria-labelledby="spending-title spending-desc"');
    expect(fig).toContain('<title id="spending-title">Spending per day, last 30 days</title>');
    expect(fig).toContain(
      `<desc id="spending-desc">${dollars(4 * price)} in all over 30 days; 2 days with any, the most ${dollars(3 * price)} (Wed, Mar 10, 2027).</desc>`,
    );
    expect(fig.match(/<rect /g)).toHaveLength(2);
    const rows = rowsOf(fig);
    expect(rows).toHaveLength(31);
    expect(rows[0]).toEqual(['Tue, Feb 9, 2027', '$0.00', '0']);
    expect(rows).toContainEqual(['Mon, Mar 8, 2027', dollars(price), '1']);
    expect(rows[29]).toEqual(['Wed, Mar 10, 2027', dollars(3 * price), '3']);
    expect(rows[30]).toEqual(['Total', dollars(4 * price), '4']);
  });

  it('a key’s page draws its chain’s days against its daily limit', async () => {
    for (const keyId of [limited.id, rolled.id]) {
      const page = await owner.get(`${w}/settings/api-keys/${keyId}`);
      expect(page.statusCode).toBe(200);
      const fig = figure(page.body, 'key-spending');
      expect(fig).toContain(`Daily limit ${dollars(4 * price)}`);
      expect(fig).toMatch(/stroke="#a4161a" stroke-width="1.5" stroke-dasharray="5 3"/);
      const rows = rowsOf(fig);
      expect(rows[29]).toEqual(['Wed, Mar 10, 2027', dollars(3 * price), '3']);
      expect(rows[30]).toEqual(['Total', dollars(3 * price), '3']);
      // The bar for today is the budget table's "Today" spent.
      expect(page.body).toContain(`<th scope="row">Today (UTC day)</th><td>${dollars(4 * price)}</td><td>${dollars(3 * price)}</td>`);
    }
    // A read-only key has no budget and no chart.
    const readOnly = await owner.get(`${w}/settings/api-keys/${ws.readKeyId}`);
    expect(readOnly.body).not.toContain('<figure class="chart">');
  });
});

describe('Payouts per week — happy', () => {
  it('the domain read and the desk’s chart: the payouts of placements approved each week', async () => {
    const weeks = await payoutsPerWeek(pool, p.publisherId, NOW);
    expect(weeks).toHaveLength(12);
    expect(weeks[11]).toEqual({ week: '2027-03-08', cents: offer.publisher_price_cents, orders: 1 });
    expect(weeks.find((x) => x.week === '2027-02-15')).toEqual({ week: '2027-02-15', cents: offer.publisher_price_cents, orders: 1 });
    expect(weeks.reduce((a, x) => a + x.cents, 0)).toBe(2 * offer.publisher_price_cents);

    const page = await desk.get(`/app/p/${p.publisherId}/orders`);
    const fig = figure(page.body, 'payouts');
    expect(fig).toContain('<title id="payouts-title">Payouts per week, last 12 weeks</title>');
    expect(fig).toContain(`<desc id="payouts-desc">$200.00 in all over 12 weeks; 2 weeks with any, the most $100.00 (Week of Mon, Feb 15, 2027).</desc>`);
    const rows = rowsOf(fig);
    expect(rows).toContainEqual(['Week of Mon, Feb 15, 2027', '$100.00', '1']);
    expect(rows[11]).toEqual(['Week of Mon, Mar 8, 2027', '$100.00', '1']);
    expect(rows[12]).toEqual(['Total', '$200.00', '2']);
    // A buyer's orders page has no payouts chart.
    expect((await owner.get(`${w}/orders`)).body).not.toContain('id="payouts-title"');
  });
});

describe('An order’s timeline — happy and ended', () => {
  const step = (label: string, iso: string, text: string) =>
    `<tr><th scope="row">${label}</th><td><time datetime="${iso}" title="${iso.slice(0, 16).replace('T', ' ')} UTC">${text}</time></td></tr>`;

  it('a paid order: placed, article, accepted, published, checked, paid, each at its time', async () => {
    const t = await orderTimeline(pool, { party: 'publisher', publisherId: p.publisherId }, paid);
    expect(t.marks).toEqual([
      { step: 'placed', at: '2027-03-09T08:00:00Z' },
      { step: 'content', at: '2027-03-09T08:00:00Z' },
      { step: 'accepted', at: '2027-03-09T09:00:00Z' },
      { step: 'published', at: '2027-03-09T10:00:00Z' },
      { step: 'checked', at: '2027-03-09T11:00:00Z' },
      { step: 'paid', at: '2027-03-09T12:00:00Z' },
    ]);
    const page = await desk.get(`/app/p/${p.publisherId}/orders/${paid}`);
    const fig = page.body.slice(page.body.indexOf('id="timeline"'), page.body.indexOf('</figure>', page.body.indexOf('id="timeline"')));
    expect(fig).toContain('<svg role="img" aria-labelledby="timeline-title timeline-desc"');
    expect(fig).toContain('<desc id="timeline-desc">Placed 1 day ago, article sent 1 day ago, accepted 1 day ago, published 1 day ago, link checked 1 day ago, paid 1 day ago.</desc>');
    expect(fig.match(/<circle [^>]*fill="#0b5394"/g)).toHaveLength(6);
    expect(fig).toContain(step('Accepted', '2027-03-09T09:00:00Z', '1 day ago'));
    expect(fig).toContain(step('Paid', '2027-03-09T12:00:00Z', '1 day ago'));
  });

  it('an order still open says what is not yet; a cancelled one ends on its state, the rest never', async () => {
    const open = await owner.get(`${w}/orders/${cancelled - 1}`);
    expect(open.body).toContain('<tr><th scope="row">Accepted</th><td>Not yet</td></tr>');
    expect(open.body).toMatch(/<desc id="timeline-desc">Placed 2 hours ago; not yet: article sent, accepted, published, link checked, paid\.<\/desc>/);

    const ended = await owner.get(`${w}/orders/${cancelled}`);
    expect(ended.body).toContain(step('Placed', '2027-03-10T11:00:00Z', '1 hour ago'));
    expect(ended.body).toContain('<tr><th scope="row">Paid</th><td>Never</td></tr>');
    expect(ended.body).toContain(step('Cancelled', '2027-03-10T11:00:00Z', '1 hour ago'));
    expect(ended.body).toMatch(/<circle [^>]*fill="#555555"/);
    expect(ended.body).toContain('; never: article sent, accepted, published, link checked, paid.</desc>');
  });

  it('another party’s order has no timeline to read (404)', async () => {
    await expect(orderTimeline(pool, { party: 'buyer', workspaceId: ws.workspaceId }, paidEarlier)).rejects.toMatchObject({ code: 'not_found' });
  });
});

describe('Charts and the content security policy — security', () => {
  it('every page with a chart has no inline style or script, under a policy that refuses them', async () => {
    for (const [c, url] of [
      [owner, w],
      [owner, `${w}/settings/api-keys/${limited.id}`],
      [desk, `/app/p/${p.publisherId}/orders`],
      [desk, `/app/p/${p.publisherId}/orders/${paid}`],
    ] as const) {
      const page = await c.get(url);
      expect(page.body, url).toContain('<figure class="chart">');
      expect(page.body, url).not.toMatch(/\sstyle=/);
      expect(page.body, url).not.toMatch(/<script(?![^>]*\ssrc=)/);
      const csp = String(page.headers['content-security-policy']);
      expect(csp).toContain("style-src 'self'");
      expect(csp).not.toContain('unsafe-inline');
    }
  });
});
