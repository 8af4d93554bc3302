import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { setupApp } from '../../helpers/app.js';
import { expectLedgerInvariants } from '../../helpers/ledger-invariants.js';
import { linkCheckerFor } from '../../helpers/link-checker.js';
import { DAY, orderKit } from '../../helpers/orders.js';
import { html, startPages } from '../../helpers/pages.js';

// Each order moves once, whoever gets there first: a re-check against an approval, the sweep's
// refund against a restoring re-check, and two processes' checkers over the same due checks.

const DOMAIN = 'raced-news.test';
const TARGET = 'https://buyer.example/product';
const pages = {} as Record<string, ReturnType<typeof html>>;
const site = await startPages(pages);
const h = await setupApp({
  OUTBOUND_ALLOW_LOOPBACK: true,
  OUTBOUND_RESOLVE: new Map([[DOMAIN, '127.0.0.1']]),
  LINK_RECHECK_INTERVAL_MS: 10 * DAY,
  // Long enough that a loaded machine never fails a check by its clock: these races are about
  // who moves an order, and a check that timed out would leave a restored link lost.
  LINK_CHECK_TIMEOUT_MS: 30_000,
  LINK_CHECKS_PER_DOMAIN_PER_SECOND: 1000,
  RATE_LIMIT_PER_MINUTE: 100_000,
});
const { accepted, buyer, pub, sweep, setup } = orderKit(h);
const checker = linkCheckerFor(h);
const { ws, p } = await setup([{ content_by: 'buyer', publisher_price_cents: 5_000, sponsored_label: false }], 10_000_000, DOMAIN);
const withLink = `<html><body><p>See <a href="${TARGET}">our product</a>.</p></body></html>`;
const withoutLink = '<html><body><p>Gone.</p></body></html>';
let n = 0;

async function checkDue(c = checker) {
  while ((await c.runDue()) > 0);
}

/** `count` orders published on pages with the link (checked), in live_review. */
async function liveOrders(count: number) {
  const orders: Array<{ id: number; path: string }> = [];
  for (let i = 0; i < count; i++) {
    const id = await accepted(ws.spendKey, p.publisherKey, p.offers[0]!.id, TARGET);
    const path = `/race-${++n}`;
    pages[path] = html(withLink);
    expect((await pub(p.publisherKey, `${id}/publish`, { live_url: site.url(path, DOMAIN) })).statusCode).toBe(200);
    orders.push({ id, path });
  }
  await checkDue();
  return orders;
}

const transactionKinds = async (id: number) =>
  (await h.database.pool.query<{ kind: string }>('SELECT kind FROM ledger_transactions WHERE order_id = $1 ORDER BY id', [id])).rows.map((r) => r.kind);
const eventTypes = async (id: number) =>
  (await h.database.pool.query<{ type: string }>('SELECT type FROM events WHERE order_id = $1 AND workspace_id IS NOT NULL ORDER BY id', [id])).rows.map(
    (r) => r.type,
  );
const statusOf = async (id: number) => (await h.database.pool.query('SELECT status FROM orders WHERE id = $1', [id])).rows[0].status as string;

describe('link guarantee races', () => {
  it("a re-check racing the buyer's approval: approved and paid once, the re-check applied or refused", async () => {
    const orders = await liveOrders(10);
    const results = await Promise.all(
      orders.map(async ({ id }) => {
        const [recheck, approve] = await Promise.all([pub(p.publisherKey, `${id}/recheck`), buyer(ws.spendKey, `${id}/approve`)]);
        return { id, recheck: recheck.statusCode, approve: approve.statusCode };
      }),
    );
    for (const r of results) {
      expect(r.approve).toBe(200);
      expect([200, 409]).toContain(r.recheck);
      expect(await statusOf(r.id)).toBe('completed');
      expect(await transactionKinds(r.id)).toEqual(['order_placed', 'order_released']);
      expect((await eventTypes(r.id)).filter((t) => t === 'order.completed')).toHaveLength(1);
    }
    await expectLedgerInvariants(h.database);
  });

  it('the sweep refunding a lost link racing a restoring re-check: one of the two, never both', async () => {
    const orders = await liveOrders(10);
    for (const { id } of orders) expect((await buyer(ws.spendKey, `${id}/approve`)).statusCode).toBe(200);
    for (const { path } of orders) pages[path] = html(withoutLink);
    h.clock.advance(10 * DAY);
    await checkDue();
    for (const { id } of orders) expect(await statusOf(id)).toBe('link_lost');
    for (const { path } of orders) pages[path] = html(withLink);
    h.clock.advance(7 * DAY + 1);

    const [swept, ...rechecks] = await Promise.all([sweep(), ...orders.map(({ id }) => pub(p.publisherKey, `${id}/recheck`))]);
    let refunded = 0;
    for (const [i, { id }] of orders.entries()) {
      const status = await statusOf(id);
      const kinds = await transactionKinds(id);
      const events = await eventTypes(id);
      if (status === 'link_refunded') {
        refunded++;
        expect(kinds).toEqual(['order_placed', 'order_released', 'guarantee_refunded']);
        expect(events).not.toContain('order.link_restored');
        // Refused, or its claim came before the refund and its result was dropped after it.
        const r = rechecks[i]!;
        if (r.statusCode === 200) expect(r.json().data.status).toBe('link_refunded');
        else expect(r.statusCode).toBe(409);
      } else {
        // Should it fail, the last check's results say why (a check that could not fetch the page).
        const { rows } = await h.database.pool.query('SELECT live_checks FROM orders WHERE id = $1', [id]);
        expect(status, JSON.stringify(rows[0].live_checks)).toBe('completed');
        expect(kinds).toEqual(['order_placed', 'order_released']);
        expect(events.filter((t) => t === 'order.link_restored')).toHaveLength(1);
        expect(events).not.toContain('order.link_refunded');
      }
    }
    expect(swept.link_refunded).toBe(refunded);
    await expectLedgerInvariants(h.database);
  });

  it('two processes checking the same due placements: each link is lost once', async () => {
    const other = new pg.Pool({ ...h.database.pool.options, max: 4 });
    // The test database is dropped after the file, which ends this pool's idle connections.
    other.on('error', () => {});
    afterAll(() => other.end());
    const second = linkCheckerFor(h, other);
    const orders = await liveOrders(20);
    for (const { id } of orders) expect((await buyer(ws.spendKey, `${id}/approve`)).statusCode).toBe(200);
    for (const { path } of orders) pages[path] = html(withoutLink);
    h.clock.advance(10 * DAY);
    const seen = site.received.length;
    await Promise.all([checkDue(checker), checkDue(second), checkDue(checker), checkDue(second)]);
    for (const { id } of orders) {
      expect(await statusOf(id)).toBe('link_lost');
      expect((await eventTypes(id)).filter((t) => t === 'order.link_lost')).toHaveLength(1);
    }
    // One claim per order: every page was fetched once in this round (earlier tests' windows are
    // checked in it too).
    const paths = new Set(orders.map((o) => o.path));
    const fetched = site.received.slice(seen).map((req) => req.url!).filter((url) => paths.has(url));
    expect(fetched.sort()).toEqual([...paths].sort());
    await expectLedgerInvariants(h.database);
  });
});
