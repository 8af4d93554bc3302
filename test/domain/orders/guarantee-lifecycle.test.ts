import { describe, expect, it } from 'vitest';
import { buyerOrder, publisherOrder } from '../../../src/schemas/orders.js';
import { ledgerEntry } from '../../../src/schemas/ledger.js';
import { setupApp } from '../../helpers/app.js';
import { bearer } from '../../helpers/fixtures.js';
import { expectLedgerInvariants } from '../../helpers/ledger-invariants.js';
import { linkCheckerFor } from '../../helpers/link-checker.js';
import { DAY, iso, orderKit } from '../../helpers/orders.js';
import { html, startPages } from '../../helpers/pages.js';

// The link guarantee end to end (docs/link-guarantee.md), with real pages on loopback served under
// the outlet's own domain (OUTBOUND_RESOLVE), a clock the test moves, and the checker and the
// deadline sweep driven one round at a time.

const DOMAIN = 'guaranteed-news.test';
const TARGET = 'https://buyer.example/product';
const INTERVAL = 10 * DAY;
const pages = {} as Record<string, ReturnType<typeof html>>;
const site = await startPages(pages);
const h = await setupApp({
  OUTBOUND_ALLOW_LOOPBACK: true,
  OUTBOUND_RESOLVE: new Map([[DOMAIN, '127.0.0.1']]),
  LINK_RECHECK_INTERVAL_MS: INTERVAL,
  LINK_CHECK_TIMEOUT_MS: 2_000,
  LINK_CHECKS_PER_DOMAIN_PER_SECOND: 1000,
});
const { accepted, buyer, pub, sweep, balances, setup } = orderKit(h);
const checker = linkCheckerFor(h);
const { ws, p } = await setup(
  [{ content_by: 'buyer', publisher_price_cents: 10_000, link_type: 'dofollow', sponsored_label: false }],
  1_000_000,
  DOMAIN,
);
const price = p.offers[0]!.price;
const fee = p.offers[0]!.fee_cents;

const withLink = `<html><body><article><p>Read about <a href="${TARGET}">our product</a> today.</p></article></body></html>`;
const withoutLink = '<html><body><article><p>Nothing to see here.</p></article></body></html>';
let n = 0;

/** An order accepted with the buyer's article, waiting in `publishing` for its page. */
async function orderInPublishing() {
  return { id: await accepted(ws.spendKey, p.publisherKey, p.offers[0]!.id, TARGET), path: `/post-${++n}` };
}

const liveUrl = (path: string) => site.url(path, DOMAIN);
const buyerView = async (id: number) =>
  buyerOrder.parse((await h.app.inject({ method: 'GET', url: `/api/v1/orders/${id}`, headers: bearer(ws.readKey) })).json().data);
const publisherMe = async () =>
  (await h.app.inject({ method: 'GET', url: '/api/v1/publisher/me', headers: bearer(p.publisherKey) })).json().data as {
    pending: number;
    payable: number;
  };
const eventsOf = async (id: number) =>
  (
    await h.database.pool.query<{ type: string; previous_status: string | null }>(
      `SELECT type, previous_status FROM events WHERE order_id = $1 AND workspace_id IS NOT NULL ORDER BY id`,
      [id],
    )
  ).rows;
const survival = async (id: number) =>
  (await h.database.pool.query('SELECT alive_30d, alive_60d, first_check_passed FROM orders WHERE id = $1', [id])).rows[0];

/** An order's ledger transactions, oldest first, each with its entries by account kind. */
const movementsOf = async (id: number) =>
  (
    await h.database.pool.query<{ kind: string; entries: Record<string, number> }>(
      `SELECT t.kind, jsonb_object_agg(a.kind, e.amount) AS entries
         FROM ledger_transactions t JOIN ledger_entries e ON e.transaction_id = t.id JOIN ledger_accounts a ON a.id = e.account_id
        WHERE t.order_id = $1 GROUP BY t.id ORDER BY t.id`,
      [id],
    )
  ).rows;

/** Runs the checker until nothing is due at the clock's time. */
async function checkDue() {
  while ((await checker.runDue()) > 0);
}

/** A placement published on a page with the link, checked, and approved by the buyer. */
async function completedOrder() {
  const { id, path } = await orderInPublishing();
  pages[path] = html(withLink);
  await pub(p.publisherKey, `${id}/publish`, { live_url: liveUrl(path) });
  await checkDue();
  const approved = await buyer(ws.spendKey, `${id}/approve`);
  expect(approved.statusCode).toBe(200);
  return { id, path, completedAt: h.clock.now() };
}

describe('a placement published without its link', () => {
  it('goes back to the publisher at review_by, is fixed, passes and is paid into pending', async () => {
    const { id, path } = await orderInPublishing();
    pages[path] = html(withoutLink);
    const published = await pub(p.publisherKey, `${id}/publish`, { live_url: liveUrl(path) });
    expect(published.statusCode).toBe(200);
    expect(publisherOrder.parse(published.json().data)).toMatchObject({ status: 'live_review', live_checks: [], live_checked_at: null });

    await checkDue();
    const checked = await buyerView(id);
    expect(checked.status).toBe('live_review');
    expect(checked.live_checked_at).toBe(iso(h.clock.now()));
    const link = checked.live_checks.find((c) => c.name === 'link');
    expect(link).toMatchObject({ status: 'fail' });
    expect(link!.detail).toContain('buyer.example');
    expect((await eventsOf(id)).map((e) => e.type)).toContain('order.live_check_failed');

    // review_by passes: not paid, back to the publisher once, with a fresh deadline.
    const before = await publisherMe();
    h.clock.advance(7 * DAY + 1);
    expect(await sweep()).toMatchObject({ returned: 1, auto_approved: 0, expired: 0 });
    const returned = await buyerView(id);
    expect(returned).toMatchObject({ status: 'publishing', turn: 'publisher' });
    expect(returned.deadlines.deliver_by).toBe(iso(h.clock.now() + 3 * DAY));
    expect(returned.live_checks.some((c) => c.status === 'fail')).toBe(true);
    expect((await eventsOf(id)).at(-1)).toEqual({ type: 'order.live_check_failed', previous_status: 'live_review' });
    expect(await publisherMe()).toEqual(before);

    // The publisher fixes the page and publishes again: a new check, which passes.
    pages[path] = html(withLink);
    expect((await pub(p.publisherKey, `${id}/publish`, { live_url: liveUrl(path) })).json().data.live_checks).toEqual([]);
    await checkDue();
    const fixed = await buyerView(id);
    expect(fixed.live_checks.filter((c) => c.status === 'fail')).toEqual([]);

    // review_by again: paid, into pending, and the guarantee window opens.
    h.clock.advance(7 * DAY + 1);
    expect(await sweep()).toMatchObject({ auto_approved: 1, returned: 0 });
    const paid = await buyerView(id);
    expect(paid.status).toBe('completed');
    expect(paid.guarantee_ends_at).toBe(iso(h.clock.now() + 60 * DAY));
    const after = await publisherMe();
    expect(after.pending - before.pending).toBe(10_000);
    expect(after.payable).toBe(before.payable);
    expect((await survival(id)).first_check_passed).toBe(false);
    await expectLedgerInvariants(h.database);
  });

  it('expires with a refund when the second review_by passes without a passing check', async () => {
    const { id, path } = await orderInPublishing();
    pages[path] = html(withoutLink);
    await pub(p.publisherKey, `${id}/publish`, { live_url: liveUrl(path) });
    await checkDue();
    h.clock.advance(7 * DAY + 1);
    expect(await sweep()).toMatchObject({ returned: 1 });
    await pub(p.publisherKey, `${id}/publish`, { live_url: liveUrl(path) });
    await checkDue();
    const before = await balances(ws.workspaceId);
    h.clock.advance(7 * DAY + 1);
    expect(await sweep()).toMatchObject({ expired: 1, returned: 0 });
    expect((await buyerView(id)).status).toBe('expired');
    const after = await balances(ws.workspaceId);
    expect(after.available - before.available).toBe(price);
    expect(before.held - after.held).toBe(price);
    await expectLedgerInvariants(h.database);
  });
});

describe('the guarantee window', () => {
  it('a link removed on day 20 is lost, not restored by restore_by, and refunded in full', async () => {
    const { id, path, completedAt } = await completedOrder();
    const start = await balances(ws.workspaceId);
    const pendingStart = (await publisherMe()).pending;
    const { rows: feesRow } = await h.database.pool.query(`SELECT balance FROM ledger_accounts WHERE kind = 'fees'`);

    h.clock.set(completedAt + INTERVAL); // day 10: alive
    await checkDue();
    expect((await buyerView(id)).status).toBe('completed');

    pages[path] = html(withoutLink); // removed on day 20
    h.clock.set(completedAt + 2 * INTERVAL);
    await checkDue();
    const lost = await buyerView(id);
    expect(lost).toMatchObject({ status: 'link_lost', turn: 'publisher' });
    expect(lost.deadlines.restore_by).toBe(iso(h.clock.now() + 7 * DAY));
    expect((await eventsOf(id)).at(-1)).toEqual({ type: 'order.link_lost', previous_status: 'completed' });
    // Nothing has moved yet: the money waits in pending.
    expect(await balances(ws.workspaceId)).toEqual(start);

    h.clock.advance(7 * DAY + 1);
    // The check due at restore_by decides (the sweep waits for it): still gone, refunded.
    await checkDue();
    expect(await sweep()).toMatchObject({ link_refunded: 1 });
    expect((await buyerView(id)).status).toBe('link_refunded');
    const end = await balances(ws.workspaceId);
    expect(end.available - start.available).toBe(price);
    expect(pendingStart - (await publisherMe()).pending).toBe(10_000);
    const { rows: feesAfter } = await h.database.pool.query(`SELECT balance FROM ledger_accounts WHERE kind = 'fees'`);
    expect(Number(feesRow[0].balance) - Number(feesAfter[0].balance)).toBe(fee);
    const { rows: kinds } = await h.database.pool.query(`SELECT kind FROM ledger_transactions WHERE order_id = $1 ORDER BY id`, [id]);
    expect(kinds.map((k) => k.kind)).toEqual(['order_placed', 'order_released', 'guarantee_refunded']);
    // The buyer's ledger shows the refund in the documented shape (REST and MCP share ledgerEntry).
    const ledgerRes = await h.app.inject({ method: 'GET', url: '/api/v1/ledger', headers: bearer(ws.readKey) });
    expect(ledgerRes.statusCode).toBe(200);
    for (const line of ledgerRes.json().data) ledgerEntry.parse(line);
    expect((await eventsOf(id)).at(-1)).toEqual({ type: 'order.link_refunded', previous_status: 'link_lost' });
    expect(await survival(id)).toMatchObject({ alive_30d: false, alive_60d: false, first_check_passed: true });
    // A final state: no more checks are planned.
    const { rows } = await h.database.pool.query('SELECT link_check_due_at FROM orders WHERE id = $1', [id]);
    expect(rows[0].link_check_due_at).toBeNull();
    await expectLedgerInvariants(h.database);
  });

  it('a link alive to day 60 makes the payout payable, and survival is recorded', async () => {
    // The publisher's totals also move with earlier tests' windows: this order's own entries tell.
    const { id, completedAt } = await completedOrder();
    for (let day = 10; day <= 60; day += 10) {
      h.clock.set(completedAt + day * DAY);
      await checkDue();
      expect((await buyerView(id)).status).toBe('completed');
      expect((await movementsOf(id)).map((m) => m.kind)).toEqual(
        day < 60 ? ['order_placed', 'order_released'] : ['order_placed', 'order_released', 'payout_released'],
      );
    }
    const payout = (await movementsOf(id)).at(-1)!;
    expect(payout.entries).toEqual({ pending: -10_000, payable: 10_000 });
    expect(await survival(id)).toMatchObject({ alive_30d: true, alive_60d: true });
    // The window is over: a later removal changes nothing.
    h.clock.advance(INTERVAL);
    expect(await checker.runDue()).toBe(0);
    await expectLedgerInvariants(h.database);
  });

  it('a link lost at the window\'s last check and put back is restored by the due checks, without a re-check', async () => {
    const { id, path, completedAt } = await completedOrder();
    for (let day = 10; day <= 50; day += 10) {
      h.clock.set(completedAt + day * DAY);
      await checkDue();
      expect((await buyerView(id)).status).toBe('completed');
    }
    pages[path] = html(withoutLink);
    h.clock.set(completedAt + 60 * DAY); // the window's last check finds it gone
    await checkDue();
    const lost = await buyerView(id);
    expect(lost).toMatchObject({ status: 'link_lost' });
    // Right after the loss, a check is planned, no later than restore_by.
    const { rows } = await h.database.pool.query('SELECT link_check_due_at, deadline_at FROM orders WHERE id = $1', [id]);
    expect(rows[0].link_check_due_at).not.toBeNull();
    expect(rows[0].link_check_due_at.getTime()).toBeLessThanOrEqual(rows[0].deadline_at.getTime());
    expect(Math.floor(rows[0].deadline_at.getTime() / 1000)).toBe(Date.parse(lost.deadlines.restore_by!) / 1000);

    pages[path] = html(withLink); // put back, no re-check pressed
    h.clock.advance(7 * DAY);
    await checkDue();
    expect(await sweep()).toMatchObject({ link_refunded: 0 });
    expect((await buyerView(id)).status).toBe('completed');
    expect((await movementsOf(id)).map((m) => m.kind)).toEqual(['order_placed', 'order_released', 'payout_released']);
    await expectLedgerInvariants(h.database);
  });

  it('the sweep at restore_by waits for the check due then: a link put back is not refunded because the sweep ran first', async () => {
    const { id, path, completedAt } = await completedOrder();
    for (let day = 10; day <= 50; day += 10) {
      h.clock.set(completedAt + day * DAY);
      await checkDue();
    }
    pages[path] = html(withoutLink);
    h.clock.set(completedAt + 60 * DAY);
    await checkDue();
    expect((await buyerView(id)).status).toBe('link_lost');
    pages[path] = html(withLink); // put back before restore_by, no re-check pressed

    // The deadline passes; the sweep runs before the checker has made the check due at restore_by.
    const { rows } = await h.database.pool.query('SELECT deadline_at FROM orders WHERE id = $1', [id]);
    h.clock.set(rows[0].deadline_at.getTime() + 1);
    expect(await sweep()).toMatchObject({ link_refunded: 0 });
    expect((await buyerView(id)).status).toBe('link_lost');
    await checkDue();
    expect((await buyerView(id)).status).toBe('completed');
    expect(await sweep()).toMatchObject({ link_refunded: 0 });
    expect((await movementsOf(id)).map((m) => m.kind)).toEqual(['order_placed', 'order_released', 'payout_released']);

    // Gone at that last check: the next sweep refunds.
    const again = await completedOrder();
    for (let day = 10; day <= 60; day += 10) {
      if (day === 60) pages[again.path] = html(withoutLink);
      h.clock.set(again.completedAt + day * DAY);
      await checkDue();
    }
    expect((await buyerView(again.id)).status).toBe('link_lost');
    const { rows: r2 } = await h.database.pool.query('SELECT deadline_at FROM orders WHERE id = $1', [again.id]);
    h.clock.set(r2[0].deadline_at.getTime() + 1);
    expect(await sweep()).toMatchObject({ link_refunded: 0 });
    await checkDue();
    expect(await sweep()).toMatchObject({ link_refunded: 1 });
    expect((await buyerView(again.id)).status).toBe('link_refunded');
    await expectLedgerInvariants(h.database);
  });

  it("a lost link restored by the publisher's re-check is completed again, and nothing moves", async () => {
    const { id, path, completedAt } = await completedOrder();
    pages[path] = html(withoutLink);
    h.clock.set(completedAt + INTERVAL);
    await checkDue();
    expect((await buyerView(id)).status).toBe('link_lost');
    const before = { me: await publisherMe(), balances: await balances(ws.workspaceId) };

    pages[path] = html(withLink);
    h.clock.advance(DAY);
    const recheck = await pub(p.publisherKey, `${id}/recheck`);
    expect(recheck.statusCode).toBe(200);
    const restored = publisherOrder.parse(recheck.json().data);
    expect(restored).toMatchObject({ status: 'completed', deadlines: { restore_by: null } });
    expect(restored.live_checks.every((c) => c.status !== 'fail')).toBe(true);
    expect((await eventsOf(id)).at(-1)).toEqual({ type: 'order.link_restored', previous_status: 'link_lost' });
    expect(await publisherMe()).toEqual(before.me);
    expect(await balances(ws.workspaceId)).toEqual(before.balances);
    // The window goes on: a check is planned before its end.
    const { rows } = await h.database.pool.query('SELECT link_check_due_at, guarantee_ends_at FROM orders WHERE id = $1', [id]);
    expect(rows[0].link_check_due_at.getTime()).toBeLessThanOrEqual(rows[0].guarantee_ends_at.getTime());
    await expectLedgerInvariants(h.database);
  });

  it('a re-check outside live_review and link_lost is 409 with the status', async () => {
    const { id } = await orderInPublishing();
    const r = await pub(p.publisherKey, `${id}/recheck`);
    expect(r.statusCode).toBe(409);
    expect(r.json()).toMatchObject({ code: 'conflict', status: 'publishing' });
  });
});

describe('the terms checked are the terms bought', () => {
  it('a later change of the offer (a re-import turning it nofollow) does not change what an order is checked against', async () => {
    const { id, completedAt } = await completedOrder();
    // What a catalog re-import does (outlet-upsert): the offer's link_type is updated in place.
    await h.database.pool.query(`UPDATE offers SET link_type = 'nofollow' WHERE id = $1`, [p.offers[0]!.id]);
    try {
      h.clock.set(completedAt + INTERVAL);
      await checkDue();
      // The page still carries the dofollow link the buyer paid for.
      expect((await buyerView(id)).status).toBe('completed');
    } finally {
      await h.database.pool.query(`UPDATE offers SET link_type = 'dofollow' WHERE id = $1`, [p.offers[0]!.id]);
    }
  });
});
