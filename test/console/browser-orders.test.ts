import { type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sequenceEvents } from '../../src/domain/events/sequencer.js';
import { addMember } from '../../src/domain/users/memberships.js';
import { createUser } from '../../src/domain/users/user-service.js';
import { setupApp } from '../helpers/app.js';
import { expectLedgerInvariants } from '../helpers/ledger-invariants.js';
import { articleFor, orderKit } from '../helpers/orders.js';
import { html, startPages } from '../helpers/pages.js';
import { allowBrowserFlows, checkPage, launchBrowser, NO_BROWSER, requireBrowser, skipBrowser } from './browser-harness.js';

allowBrowserFlows();

// The orders desk in Chromium: a buyer and a publisher, each in a browser context of their own,
// take an order from placement to `completed` in the console alone (the buyer finds the outlet,
// writes the brief and confirms the price; no key, no API call); then the ledger and the events
// show it.

if (skipBrowser) console.log(`browser tests skipped: ${NO_BROWSER}`);
const password = 'correct horse battery';
const DOMAIN = 'browser-news.test';
const TARGET = 'https://buyer.example/product';

describe.skipIf(skipBrowser)('Console orders desk in Chromium — happy', () => {
  let browser: Browser;
  let h: Awaited<ReturnType<typeof setupApp>>;
  let base: string;
  let site: Awaited<ReturnType<typeof startPages>>;
  const pages = {} as Record<string, ReturnType<typeof html>>;

  beforeAll(async () => {
    const executablePath = requireBrowser();
    site = await startPages(pages);
    h = await setupApp({
      OUTBOUND_ALLOW_LOOPBACK: true,
      OUTBOUND_RESOLVE: new Map([[DOMAIN, '127.0.0.1']]),
      LINK_CHECKS_PER_DOMAIN_PER_SECOND: 1000,
      SIGNIN_FAILURES_PER_ADDRESS: 1000,
    });
    base = await h.app.listen({ port: 0, host: '127.0.0.1' });
    browser = await launchBrowser(executablePath);
  });
  afterAll(async () => {
    await browser?.close();
  });

  async function person(email: string, name: string, target: { workspaceId: number } | { publisherId: number }) {
    const user = await createUser(h.database.pool, { email, name, password });
    await addMember(h.database.pool, target, user.id, 'owner');
    const context = await browser.newContext({ bypassCSP: true, viewport: { width: 1200, height: 900 }, baseURL: base });
    const page = await context.newPage();
    await page.goto('/app/sign-in');
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(/\/app\/[wp]\/\d+$/);
    return page;
  }
  const nav = (page: Page, name: string) => page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name, exact: true });
  const sequence = () => sequenceEvents(h.database.pool, h.clock.now());
  const ordered = async (id: number) =>
    (await h.database.pool.query<{ placed_by_key_id: number | null; placed_by_user_id: number | null }>('SELECT placed_by_key_id, placed_by_user_id FROM orders WHERE id = $1', [id])).rows[0];

  /** The buyer places an order in the console: search, the outlet, its offer's brief, the confirmation page. Answers its id. */
  async function placeInConsole(buyer: Page, w: string, outletId: number, offerTitle: string, brief: { anchor: string; brief?: string }, shots = false) {
    await buyer.goto(`${w}/orders`);
    await buyer.getByRole('link', { name: 'Place an order' }).click();
    // The search engine learns of a new outlet from PostgreSQL's notification: ask until it has it.
    const result = buyer.locator(`a[href="${w}/outlets/${outletId}"]`);
    await expect
      .poll(async () => {
        await buyer.getByLabel('Search outlets').fill(DOMAIN);
        await buyer.getByRole('button', { name: 'Search' }).click();
        await buyer.waitForURL(/\/outlets\?q=/);
        return result.count();
      })
      .toBe(1);
    if (shots) await checkPage(buyer, 'buyer-outlets');
    await result.click();
    if (shots) await checkPage(buyer, 'buyer-outlet');
    await buyer.getByRole('link', { name: `Order ${offerTitle}` }).click();
    await buyer.getByLabel('Link to').fill(TARGET);
    await buyer.getByLabel('Anchor text').fill(brief.anchor);
    if (brief.brief) await buyer.getByLabel('Brief').fill(brief.brief);
    if (shots) await checkPage(buyer, 'buyer-order-new');
    await buyer.getByRole('button', { name: 'Review the order' }).click();
    await expect.poll(() => buyer.getByRole('heading', { name: /^Place an order with / }).count()).toBe(1);
    if (shots) await checkPage(buyer, 'buyer-order-place');
    await buyer.getByRole('button', { name: 'Place order' }).click();
    await buyer.waitForURL(/\/orders\/\d+\?done=placed$/);
    await expect.poll(() => buyer.getByText('Placed:').count()).toBe(1);
    return Number(/\/orders\/(\d+)\?/.exec(buyer.url())![1]);
  }
  const statusOf = async (id: number) => (await h.database.pool.query<{ status: string }>('SELECT status FROM orders WHERE id = $1', [id])).rows[0]!.status;

  it('placement → accepted → draft → approved → published → re-checked → approved and paid, by two people in two browsers', async () => {
    const kit = orderKit(h);
    const { ws, p } = await kit.setup([{ content_by: 'publisher', publisher_price_cents: 10_000, link_type: 'dofollow', sponsored_label: false }], 500_000, DOMAIN);
    const buyer = await person('bea@example.com', 'Bea Buyer', { workspaceId: ws.workspaceId });
    const publisher = await person('pat@example.com', 'Pat Publisher', { publisherId: p.publisherId });
    const w = `/app/w/${ws.workspaceId}`;
    const pp = `/app/p/${p.publisherId}`;

    // The buyer places the order in the console, as a person: no key is involved.
    await nav(buyer, 'Orders').click();
    const id = await placeInConsole(buyer, w, p.outletId, 'Offer 1', { anchor: 'our product', brief: 'A hands-on review for travellers.' }, true);
    await checkPage(buyer, 'buyer-order-placed');
    expect(await statusOf(id)).toBe('awaiting_acceptance');
    expect(await ordered(id)).toMatchObject({ placed_by_key_id: null, placed_by_user_id: expect.any(Number) });
    expect(await kit.balances(ws.workspaceId)).toMatchObject({ available: 500_000 - 12_000, held: 12_000 });
    await sequence();

    // The publisher: the overview names the order needing them; the desk lists it first.
    await publisher.goto(pp);
    await checkPage(publisher, 'desk-overview');
    await nav(publisher, 'Orders').click();
    await expect.poll(() => publisher.getByRole('heading', { name: 'Waiting for you (1)' }).count()).toBe(1);
    await checkPage(publisher, 'desk-orders');
    await publisher.getByRole('link', { name: `Order ${id}`, exact: true }).click();
    await checkPage(publisher, 'desk-order');
    await publisher.getByRole('button', { name: 'Accept', exact: true }).click();
    await expect.poll(() => publisher.getByText('Accepted.').count()).toBe(1);
    expect(await statusOf(id)).toBe('writing');

    await publisher.getByLabel('Title').fill('Five days in Lisbon');
    await publisher.getByLabel('Body (Markdown)').fill(`## Day one\n\n${articleFor(TARGET)}\n\n- Pastéis\n- Trams`);
    await publisher.getByRole('button', { name: 'Preview' }).click();
    await expect.poll(() => publisher.getByRole('heading', { name: 'Preview: as the buyer will see it' }).count()).toBe(1);
    await expect.poll(() => publisher.getByRole('article', { name: 'Preview' }).getByRole('link', { name: 'our product' }).getAttribute('href')).toBe(TARGET);
    await checkPage(publisher, 'desk-draft-preview');
    expect(await statusOf(id)).toBe('writing');
    await publisher.getByRole('button', { name: 'Submit draft' }).click();
    await expect.poll(() => publisher.getByText('Draft submitted.').count()).toBe(1);
    await publisher.getByLabel('Message to the buyer').fill('The draft is ready for you.');
    await publisher.getByRole('button', { name: 'Send message' }).click();
    await expect.poll(() => publisher.getByText('Message sent.').count()).toBe(1);
    await sequence();

    // The buyer: from the overview's "Needs your action" to the draft, rendered; approve it.
    await buyer.goto(w);
    const needing = buyer.getByRole('region', { name: 'Needs your action' });
    await expect.poll(() => needing.getByRole('link', { name: `Order ${id}` }).count()).toBeGreaterThan(0);
    await checkPage(buyer, 'buyer-overview');
    await needing.getByRole('link', { name: `Order ${id}` }).first().click();
    await expect.poll(() => buyer.getByRole('article', { name: 'The article' }).getByRole('heading', { name: 'Day one' }).count()).toBe(1);
    await expect.poll(() => buyer.getByText('The draft is ready for you.').count()).toBe(1);
    await checkPage(buyer, 'buyer-order-draft');
    await buyer.getByRole('button', { name: 'Approve draft' }).click();
    await expect.poll(() => buyer.getByText('Draft approved').count()).toBe(1);
    expect(await statusOf(id)).toBe('publishing');

    // The publisher publishes on their site and asks for a re-check.
    pages['/lisbon'] = html(`<html><body><article><h2>Day one</h2><p>Read about <a href="${TARGET}">our product</a> today.</p></article></body></html>`);
    await publisher.goto(`${pp}/orders/${id}`);
    await publisher.getByLabel('Live URL').fill(site.url('/lisbon', DOMAIN));
    await publisher.getByRole('button', { name: 'Publish' }).click();
    await expect.poll(() => publisher.getByText('Published:').count()).toBe(1);
    await publisher.getByRole('button', { name: 'Re-check link' }).click();
    await expect.poll(() => publisher.getByText('Checked again').count()).toBe(1);
    await expect.poll(() => publisher.getByRole('table', { name: 'Checks of the live page' }).getByRole('cell', { name: 'fail', exact: true }).count()).toBe(0);
    await checkPage(publisher, 'desk-published');
    expect(await statusOf(id)).toBe('live_review');

    // The buyer approves the placement on its confirmation page, which shows the price and balance.
    await buyer.goto(`${w}/orders/${id}`);
    await buyer.getByRole('link', { name: 'Approve placement…' }).click();
    await expect.poll(() => buyer.getByText('$120.00').count()).toBeGreaterThan(0);
    await checkPage(buyer, 'buyer-approve');
    await buyer.getByRole('button', { name: 'Approve and pay' }).click();
    await expect.poll(() => buyer.getByText('Placement approved').count()).toBe(1);
    await checkPage(buyer, 'buyer-order-completed');
    expect(await statusOf(id)).toBe('completed');

    // The ledger and the events show it: the order's movements sum to zero, the price left the
    // buyer's held funds, the publisher's share is pending and the fee is the marketplace's.
    const { rows: moves } = await h.database.pool.query<{ kind: string; account: string; amount: string }>(
      `SELECT t.kind, a.kind AS account, e.amount FROM ledger_transactions t JOIN ledger_entries e ON e.transaction_id = t.id
         JOIN ledger_accounts a ON a.id = e.account_id WHERE t.order_id = $1 ORDER BY e.id`,
      [id],
    );
    expect(moves.reduce((sum, m) => sum + Number(m.amount), 0)).toBe(0);
    expect(moves.filter((m) => m.account === 'pending').map((m) => Number(m.amount))).toEqual([10_000]);
    expect(await kit.balances(ws.workspaceId)).toMatchObject({ available: 500_000 - 12_000, held: 0 });
    await sequence();
    const { rows } = await h.database.pool.query<{ type: string }>('SELECT type FROM events WHERE order_id = $1 AND workspace_id IS NOT NULL AND type <> $2 ORDER BY id', [id, 'order.message_received']);
    expect(rows.map((r) => r.type)).toEqual(['order.placed', 'order.accepted', 'order.draft_submitted', 'order.draft_approved', 'order.published', 'order.completed']);
    expect(await kit.pending(p.publisherId)).toBe(10_000);
    await publisher.goto(`${pp}/orders`);
    await expect.poll(() => publisher.getByRole('region', { name: 'Balances' }).getByText('$100.00').count()).toBe(1);
    await expectLedgerInvariants(h.database);

    // A state that moved on: the buyer cancels a second order while the publisher's page is open.
    const secondId = await placeInConsole(buyer, w, p.outletId, 'Offer 1', { anchor: 'our product' });
    await publisher.goto(`${pp}/orders/${secondId}`);
    await buyer.goto(`${w}/orders/${secondId}/cancel`);
    await checkPage(buyer, 'buyer-cancel');
    await buyer.getByRole('button', { name: 'Cancel order' }).click();
    await expect.poll(() => buyer.getByText('Cancelled: the price is back').count()).toBe(1);
    await publisher.getByRole('button', { name: 'Accept', exact: true }).click();
    await expect.poll(() => publisher.getByText('This order has moved on. Cannot accept: the order is cancelled.').count()).toBe(1);
    await checkPage(publisher, 'desk-moved-on');

    // Another party's order is not found; a form whose token was tampered with is refused.
    const stranger = await person('sam@example.com', 'Sam Stranger', { workspaceId: (await kit.setup()).ws.workspaceId });
    const res = await stranger.goto(`${pp}/orders/${id}`);
    expect(res!.status()).toBe(404);
    expect((await stranger.goto(`${w}/orders/${id}`))!.status()).toBe(404);
    await buyer.goto(`${w}/orders/${id}`);
    await buyer.locator('form[action$="/messages"] input[name="_csrf"]').evaluate((el) => el.setAttribute('value', 'forged'));
    await buyer.getByLabel('Message to the publisher').fill('Sent from a forged form');
    const [refused] = await Promise.all([buyer.waitForResponse((r) => r.url().endsWith('/messages')), buyer.getByRole('button', { name: 'Send message' }).click()]);
    expect(refused.status()).toBe(403);
    const { rows: messages } = await h.database.pool.query('SELECT body FROM order_messages WHERE order_id = $1', [id]);
    expect(messages.map((m) => m.body)).toEqual(['The draft is ready for you.']);
  }, 180_000);
});
