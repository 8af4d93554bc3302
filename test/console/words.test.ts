import { describe, expect, it } from 'vitest';
import { sequenceEvents } from '../../src/domain/events/sequencer.js';
import { upsertOutlets } from '../../src/domain/outlets/outlet-upsert.js';
import { createPublisher } from '../../src/domain/publishers/publisher-service.js';
import { addMember } from '../../src/domain/users/memberships.js';
import { createUser } from '../../src/domain/users/user-service.js';
import { setupApp } from '../helpers/app.js';
import { outletInput } from '../helpers/catalog.js';
import { articleFor, orderKit } from '../helpers/orders.js';
import { consoleClient } from './helpers.js';

// Words people read (docs/console.md, "Words"): through app.inject, the pages show order states
// and event types as words (never their codes), event rows link to what they are about, "Needs
// your action" names the action, times are <time> elements relative to the app's clock with the
// exact time as their title, counts carry separators, countries and languages have names, the
// publisher's amount is "Payout" everywhere, and the webhook form's banner names the failing field.

const NOW = Date.parse('2027-03-10T12:00:00Z');
const TARGET = 'https://buyer.example/product';
const h = await setupApp({ SIGNIN_FAILURES_PER_ADDRESS: 1000, OUTBOUND_ALLOW_LOOPBACK: true });
h.clock.set(NOW);
const kit = orderKit(h);
const password = 'correct horse battery';
let n = 0;

async function person(target: { workspaceId: number } | { publisherId: number }, role: 'owner' | 'member' = 'owner') {
  n++;
  const email = `words${n}@example.com`;
  const user = await createUser(h.database.pool, { email, name: `Word person ${n}`, password });
  await addMember(h.database.pool, target, user.id, role);
  const c = consoleClient(h, `10.55.0.${n}`);
  expect((await c.post('/app/sign-in', { email, password })).statusCode).toBe(303);
  return c;
}

/** The part of a page between two of its section ids. */
const section = (body: string, from: string, to?: string) => body.slice(body.indexOf(`id="${from}"`), to ? body.indexOf(`id="${to}"`) : undefined);

const { ws, p } = await kit.setup([{ content_by: 'buyer', publisher_price_cents: 10_000 }], 123_456_789);
const owner = await person({ workspaceId: ws.workspaceId });
const publisher = await person({ publisherId: p.publisherId }, 'member');
const w = `/app/w/${ws.workspaceId}`;
const pp = `/app/p/${p.publisherId}`;

// Two hours ago: one order waiting for the buyer's article, one sent with it (the publisher's turn).
h.clock.set(NOW - 2 * 3_600_000);
const waiting = (await kit.place(ws.spendKey, { offer_ids: [p.offers[0]!.id], target_url: TARGET })).json().data[0].id as number;
const withArticle = (
  await kit.place(ws.spendKey, { offer_ids: [p.offers[0]!.id], target_url: TARGET, anchor_text: 'our product', content_title: 'Reviewed', content: articleFor(TARGET) })
).json().data[0].id as number;
await sequenceEvents(h.database.pool, h.clock.now());
h.clock.set(NOW);

describe('Console words: states, events and actions — happy', () => {
  it('the overview shows states and events in words, never their codes; each event row links to its order', async () => {
    const page = await owner.get(w);
    expect(page.statusCode).toBe(200);
    const turn = section(page.body, 'turn', 'recent');
    expect(turn).toContain(`<a href="${w}/orders/${waiting}">Order ${waiting}</a></td><td>Awaiting content</td>`);
    expect(section(page.body, 'recent', 'events')).toContain('<td>Awaiting acceptance</td>');
    const events = section(page.body, 'events');
    expect(events).toContain(`<td>Order placed</td><td><a href="${w}/orders/${waiting}">Order ${waiting}</a></td>`);
    expect(events).toContain(`<td>Order placed</td><td><a href="${w}/orders/${withArticle}">Order ${withArticle}</a></td>`);
    for (const code of ['awaiting_content', 'awaiting_acceptance', 'order.placed', 'content_submitted']) expect(page.body).not.toContain(code);
  });

  it('"Needs your action" names the action each side owes: the buyer writes, the publisher accepts or declines', async () => {
    const buyer = section((await owner.get(w)).body, 'needing', 'turn');
    expect(buyer).toContain(`<th scope="col">Your action</th>`);
    expect(buyer).toContain(`<a href="${w}/orders/${waiting}">Order ${waiting}</a></td><td>Write the article</td>`);
    // The order with its article is the publisher's turn: not the buyer's to act on.
    expect(buyer).not.toContain(`Order ${withArticle}</a>`);
    const desk = section((await publisher.get(pp)).body, 'needing', 'turn');
    expect(desk).toContain(`<a href="${pp}/orders/${withArticle}">Order ${withArticle}</a></td><td>Accept or decline the order</td>`);
    expect(desk).not.toContain('Write the article');
  });

  it('the orders page, its filter and an order page use the same words', async () => {
    const list = await owner.get(`${w}/orders`);
    expect(list.body).toContain('<option value="awaiting_content">Awaiting content</option>');
    expect(list.body).toContain('<td>Awaiting content</td>');
    const order = await owner.get(`${w}/orders/${waiting}`);
    expect(order.body).toContain('<dt>State</dt><dd>Awaiting content</dd>');
    expect(order.body).not.toContain('awaiting content');
  });
});

describe('Console words: times, numbers, names and the publisher’s amount — happy', () => {
  it('times are <time> elements relative to the app’s clock, the exact time on hover', async () => {
    const placed = '<time datetime="2027-03-10T10:00:00Z" title="2027-03-10 10:00 UTC">2 hours ago</time>';
    const overview = await owner.get(w);
    expect(section(overview.body, 'needing', 'turn')).toContain(`<td>${placed}</td>`);
    expect(section(overview.body, 'events')).toContain(`<td>${placed}</td>`);
    const order = await owner.get(`${w}/orders/${waiting}`);
    expect(order.body).toContain(`<dt>Placed</dt><dd>${placed}</dd>`);
    // A deadline is ahead: the buyer's article is due within the content days.
    expect(order.body).toMatch(/<dt>Review by<\/dt><dd><time datetime="2027-03-\d\dT10:00:00Z" title="2027-03-\d\d 10:00 UTC">in \d+ days<\/time><\/dd>/);
    // The same page an hour later says so, from the same data.
    h.clock.set(NOW + 3_600_000);
    try {
      expect((await owner.get(`${w}/orders/${waiting}`)).body).toContain('title="2027-03-10 10:00 UTC">3 hours ago</time>');
    } finally {
      h.clock.set(NOW);
    }
  });

  it('money and counts carry thousands separators; countries and languages are named', async () => {
    expect((await owner.get(w)).body).toMatch(/<dd>\$1,234,\d{3}\.\d\d<\/dd>/);
    const pub = await createPublisher(h.database.pool, 'Words publisher');
    await upsertOutlets(h.database.pool, pub.id, [outletInput('wortwelt.example', { name: 'Wortwelt', country: 'DE', language: 'de', traffic: { monthly_visits: 1_234_567, verified: true } })], 0.2);
    const { rows } = await h.database.pool.query<{ id: number }>(`SELECT id FROM outlets WHERE domain = 'wortwelt.example'`);
    const outlet = await owner.get(`${w}/outlets/${rows[0]!.id}`);
    expect(outlet.statusCode).toBe(200);
    expect(outlet.body).toContain('<dt>Country</dt><dd>Germany</dd>');
    expect(outlet.body).toContain('<dt>Language</dt><dd>German</dd>');
    expect(outlet.body).toContain('<dt>Monthly visits</dt><dd>1,234,567 (verified)</dd>');
    expect(outlet.body).toContain('<td>50–2,000</td>');
    expect(outlet.body).not.toMatch(/<dd>(de|DE|1234567)/);
  });

  it('the publisher’s amount is "Payout" on every page: overview, desk, order', async () => {
    const overview = await publisher.get(pp);
    expect(overview.body).toContain('<th scope="col">Payout</th>');
    expect(overview.body).not.toContain('<th scope="col">Price</th>');
    expect(overview.body).toContain('<dt>Payouts pending</dt>');
    const desk = await publisher.get(`${pp}/orders`);
    expect(desk.body).toContain('<th scope="col">Payout</th>');
    expect(desk.body).toContain('<dt>Payouts payable</dt>');
    expect((await publisher.get(`${pp}/orders/${withArticle}`)).body).toContain('<dt>Payout</dt><dd>$100.00</dd>');
    // The buyer's side keeps "Price".
    expect((await owner.get(w)).body).toContain('<th scope="col">Price</th>');
  });
});

describe('Console words: the webhook form’s banner — errors', () => {
  it('names the failing field and what is wrong with it, as the key form does', async () => {
    const url = `${w}/settings/webhooks`;
    const form = await owner.get(url);
    expect(form.body).toContain('<label for="ev-order.placed">Order placed <code>order.placed</code></label>');
    const bad = await owner.post(url, { url: 'http://10.0.0.1/hook' }, { from: url });
    expect(bad.statusCode).toBe(422);
    expect(bad.body).toMatch(/<p class="problem" role="alert">The endpoint was not created: Endpoint URL [^<]+\.<\/p>/);
    expect(bad.body).not.toContain('The given data was invalid');

    const pubOwner = await person({ publisherId: p.publisherId });
    const pubUrl = `${pp}/settings/webhooks`;
    const never = await pubOwner.post(pubUrl, { url: 'http://127.0.0.1:9/hook', events: 'workspace.topped_up' }, { from: pubUrl });
    expect(never.statusCode).toBe(422);
    expect(never.body).toContain('The endpoint was not created: Events a publisher never receives workspace.topped_up: only a workspace does.');
  });

  it('a refusal without a field (too many endpoints) says the domain’s sentence', async () => {
    const url = `${w}/settings/webhooks`;
    let last = { statusCode: 0, body: '' };
    for (let i = 0; i < 30 && last.statusCode !== 409; i++) last = await owner.post(url, { url: `http://127.0.0.1:9/hook-${i}` }, { from: url });
    expect(last.statusCode).toBe(409);
    expect(last.body).toMatch(/The endpoint was not created: At most \d+ webhook endpoints; delete one first\./);
  });
});
