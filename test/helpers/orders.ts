import type { Harness } from './app.js';
import { publisherWithOutlet } from './catalog.js';
import { bearer, workspaceWithKeys } from './fixtures.js';
import type pg from 'pg';
import { sweepDeadlines } from '../../src/domain/orders/sweep.js';
import { durationsFrom, type Durations } from '../../src/domain/orders/states.js';
import { defaultConfig } from '../../src/config.js';
import { withTransaction } from '../../src/db/handle.js';
import { lockOrder } from '../../src/domain/orders/transitions.js';
import { applyCheck, type CheckOutcome } from '../../src/domain/orders/guarantee.js';
import { type LiveCheck, liveCheckNames } from '../../src/domain/placements/live-checks.js';

export const DAY = 86_400_000;
/** A timestamp as the API writes it: ISO 8601 UTC to the second. */
export const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
export const articleFor = (url: string, anchor = 'our product') =>
  `# A useful article\n\n${'Plenty of words here to satisfy the count. '.repeat(10)}\n\nRead about [${anchor}](${url}).`;

/** A publisher's two accounts: `pending` (approved, still under the link guarantee) and `payable`. */
export async function publisherBalances(pool: pg.Pool, publisherId: number): Promise<{ pending: number; payable: number }> {
  const { rows } = await pool.query(`SELECT kind, balance FROM ledger_accounts WHERE publisher_id = $1`, [publisherId]);
  const of = (kind: string) => Number(rows.find((r) => r.kind === kind)!.balance);
  return { pending: of('pending'), payable: of('payable') };
}

/** Every check of a live page passing, as the link checker reports a placement found as bought. */
export const PASSING_LIVE_CHECKS: LiveCheck[] = liveCheckNames.map((name) => ({
  name,
  status: 'pass',
  detail: 'as bought',
}));
/** The link checker's report of a page whose link to the target is gone. */
export const FAILING_LIVE_CHECKS: LiveCheck[] = PASSING_LIVE_CHECKS.map((c) =>
  c.name === 'link' ? { name: 'link', status: 'fail', detail: 'no link to the target URL' } : c,
);

/**
 * Applies a finished check of an order's live page at `now` through the same domain call the link
 * checker makes once it has fetched the page, without the fetch; says what it did. It stands for
 * "the link checker found the page so": the fetch and the checks themselves, and the checker's
 * claims, are tested with the link checker.
 */
export function recordLiveCheck(
  pool: pg.Pool,
  orderId: number,
  checks: LiveCheck[],
  now: number = Date.now(),
  durations: Durations = durationsFrom(defaultConfig()),
): Promise<CheckOutcome> {
  return withTransaction(pool, async (tx) => applyCheck(tx, await lockOrder(tx, orderId, null), checks, now, durations));
}

/**
 * A passing check of a `live_review` order's live page (see `recordLiveCheck`): the review
 * deadline auto-approves only an order whose last check passed.
 */
export async function verifyLiveLink(pool: pg.Pool, orderId: number, now: number = Date.now()): Promise<void> {
  const outcome = await recordLiveCheck(pool, orderId, PASSING_LIVE_CHECKS, now);
  if (outcome !== 'checked') throw new Error(`verifyLiveLink: order ${orderId} is not in live_review (the check was ${outcome})`);
}

/** Order helpers over one app harness: requests as buyer and publisher, balances, the sweep. */
export function orderKit(h: Harness) {
  let seq = 0;
  const pool = h.database.pool;
  return {
    place: (key: string, body: Record<string, unknown>, idem = `k-${++seq}`) =>
      h.app.inject({ method: 'POST', url: '/api/v1/orders', headers: { ...bearer(key), 'idempotency-key': idem }, payload: body }),
    buyer: (key: string, path: string, payload?: unknown) =>
      h.app.inject({ method: 'POST', url: `/api/v1/orders/${path}`, headers: bearer(key), ...(payload ? { payload: payload as object } : {}) }),
    pub: (key: string, path: string, payload?: unknown) =>
      h.app.inject({ method: 'POST', url: `/api/v1/publisher/orders/${path}`, headers: bearer(key), ...(payload ? { payload: payload as object } : {}) }),
    sweep: () => sweepDeadlines(pool, h.clock.now(), durationsFrom(h.config)),
    async balances(workspaceId: number) {
      const { rows } = await pool.query(`SELECT kind, balance FROM ledger_accounts WHERE workspace_id = $1`, [workspaceId]);
      return Object.fromEntries(rows.map((r) => [r.kind, r.balance])) as { available: number; held: number };
    },
    /** What approvals paid the publisher, held until each link's guarantee window ends. */
    pending: async (publisherId: number) => (await publisherBalances(pool, publisherId)).pending,
    /** What the publisher can be paid out: only placements whose guarantee window ended alive. */
    payable: async (publisherId: number) => (await publisherBalances(pool, publisherId)).payable,
    /** A passing check of the live page at the harness's time (see `verifyLiveLink`). */
    verifyLiveLink: (orderId: number) => verifyLiveLink(pool, orderId, h.clock.now()),
    /** A finished check of the live page at the harness's time (see `recordLiveCheck`). */
    recordLiveCheck: (orderId: number, checks: LiveCheck[]) => recordLiveCheck(pool, orderId, checks, h.clock.now(), durationsFrom(h.config)),
    async fees() {
      const { rows } = await pool.query(`SELECT balance FROM ledger_accounts WHERE kind = 'fees'`);
      return rows[0].balance as number;
    },
    /**
     * An order for `offerId` with the buyer's own article linking to `target` (anchor "our
     * product"), accepted: in `publishing`, waiting for its page. Answers its id.
     */
    async accepted(spendKey: string, publisherKey: string, offerId: number, target: string) {
      const placed = await h.app.inject({
        method: 'POST',
        url: '/api/v1/orders',
        headers: { ...bearer(spendKey), 'idempotency-key': `k-${++seq}` },
        payload: { offer_ids: [offerId], target_url: target, anchor_text: 'our product', content_title: 'Our product, reviewed', content: articleFor(target) },
      });
      if (placed.statusCode !== 201) throw new Error(`placing failed: ${placed.body}`);
      const id = placed.json().data[0].id as number;
      const accepted = await h.app.inject({ method: 'POST', url: `/api/v1/publisher/orders/${id}/accept`, headers: bearer(publisherKey) });
      if (accepted.json().data?.status !== 'publishing') throw new Error(`accepting failed: ${accepted.body}`);
      return id;
    },
    /** A workspace with a balance and a publisher whose one outlet carries these offers. */
    async setup(offers: Parameters<typeof publisherWithOutlet>[1] = [{}], balance = 1_000_000, domain?: string) {
      const ws = await workspaceWithKeys(h.database.pool, { balanceCents: balance });
      const p = await publisherWithOutlet(h.database, offers, domain);
      return { ws, p };
    },
  };
}
