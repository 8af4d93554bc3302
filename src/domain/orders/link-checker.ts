import { type Db, withTransaction } from '../../db/handle.js';
import type { Clock } from '../clock.js';
import { getOrder } from './order-read.js';
import type { PublisherOrderView } from './order-view.js';
import type { Durations } from './states.js';
import { lockOrder, requireStatus } from './transitions.js';
import { DomainError } from '../errors.js';
import { applyCheck, type CheckOutcome } from './guarantee.js';
import { HostPacing } from '../placements/host-pacing.js';
import type { LiveCheck, PlacementExpectation } from '../placements/live-checks.js';

/**
 * Fetches a live page and checks it (docs/link-checks.md); never throws for what the page does.
 * `pace` waits for a host's turn: called before every request, redirects included.
 */
export type CheckPlacement = (expectation: PlacementExpectation, pace: (host: string) => Promise<void>) => Promise<LiveCheck[]>;

export interface LinkCheckerDeps {
  pool: Db;
  clock: Clock;
  durations: Durations;
  check: CheckPlacement;
  /** How long one fetch may take (LINK_CHECK_TIMEOUT_MS): a claim outlives it. */
  timeoutMs: number;
  /** Fetches of one host per second from this process (LINK_CHECKS_PER_DOMAIN_PER_SECOND). */
  perDomainPerSecond: number;
  /** Told of a check that threw (a fault of the service's, not of the page). */
  onCheckError?: (err: unknown, orderId: number) => void;
}

/** Checks one process has in flight at most (the bounded concurrency of docs/link-guarantee.md). */
export const LINK_CHECK_CONCURRENCY = 8;

/**
 * A publisher's re-checks of one order: at most one a minute, per process (docs/link-guarantee.md).
 * A check costs the publisher's server a fetch and this service a parse; a minute is enough to fix
 * a page and ask again.
 */
export const RECHECK_MIN_INTERVAL_MS = 60_000;

interface Claimed extends PlacementExpectation {
  id: number;
  /** The claim: the due time the claim wrote. A result applies only while it is still there. */
  lease: Date;
}

/**
 * The link checker (docs/link-guarantee.md): fetches the placements whose check is due and
 * applies the results. Safe with several processes: a due order is claimed with SKIP LOCKED by
 * moving its due time past the fetch (the lease), and a result is applied only under the order's
 * lock and only if that lease is still the order's due time; a new publication, a re-check, an
 * approval or a refund in the meantime replaced it, and the stale result is dropped. No lock is
 * held while a page is fetched.
 */
export function createLinkChecker(deps: LinkCheckerDeps) {
  const leaseMs = deps.timeoutMs + 60_000 + LINK_CHECK_CONCURRENCY * Math.ceil(1000 / deps.perDomainPerSecond);
  const pacing = new HostPacing(deps.perDomainPerSecond);
  const pace = (host: string) => pacing.wait(host);
  /** Order id → when its next re-check may start (this process's clock). */
  const recheckAllowedAt = new Map<number, number>();

  /** Refuses a re-check of an order re-checked less than RECHECK_MIN_INTERVAL_MS ago, else books it. */
  function bookRecheck(orderId: number): void {
    const now = deps.clock.now();
    const allowed = recheckAllowedAt.get(orderId) ?? 0;
    if (now < allowed) {
      const seconds = Math.max(1, Math.ceil((allowed - now) / 1000));
      throw new DomainError('rate_limited', `This order was re-checked less than ${RECHECK_MIN_INTERVAL_MS / 1000} seconds ago; retry after the given number of seconds.`, {
        retry_after: seconds,
      });
    }
    if (recheckAllowedAt.size > 10_000) for (const [id, at] of recheckAllowedAt) if (at <= now) recheckAllowedAt.delete(id);
    recheckAllowedAt.set(orderId, now + RECHECK_MIN_INTERVAL_MS);
  }

  const claimColumns = `o.id, o.live_url AS "liveUrl", o.target_url AS "targetUrl", o.anchor_text AS "anchorText",
    o.link_type AS "linkType", o.sponsored_label AS "sponsoredLabel", ol.domain AS "outletDomain", ol.language`;

  /** Claims up to `limit` due checks: their due time moves to the lease's end, which marks the claim. */
  async function claimDue(limit: number): Promise<Claimed[]> {
    const now = deps.clock.now();
    const lease = new Date(now + leaseMs);
    const { rows } = await deps.pool.query<Omit<Claimed, 'lease'>>({
      name: 'link_claim_due',
      text: `WITH due AS (SELECT id FROM orders WHERE link_check_due_at <= $1
                          ORDER BY link_check_due_at LIMIT $3 FOR UPDATE SKIP LOCKED)
             UPDATE orders o SET link_check_due_at = $2 FROM due, outlets ol
              WHERE o.id = due.id AND ol.id = o.outlet_id
             RETURNING ${claimColumns}`,
      values: [new Date(now), lease, limit],
    });
    return rows.map((r) => ({ ...r, lease }));
  }

  /** Fetches one claimed placement and applies the result; null when the result came too late. */
  async function checkOne(c: Claimed): Promise<CheckOutcome | null> {
    const checks = await deps.check(c, pace).catch((err): LiveCheck[] => {
      // The checks never throw for what a page does: this is the service's own fault, and the
      // placement gets a result (a failing one) rather than a retry that never ends.
      deps.onCheckError?.(err, c.id);
      return [{ name: 'page', status: 'fail', detail: 'The check could not be run; ask for a re-check.' }];
    });
    return withTransaction(deps.pool, async (tx) => {
      const order = await lockOrder(tx, c.id, null);
      if (order.link_check_due_at?.getTime() !== c.lease.getTime()) return null;
      return applyCheck(tx, order, checks, deps.clock.now(), deps.durations);
    });
  }

  return {
    claimDue,
    /** Fetches a claimed placement and applies the result (dropped if it came too late). */
    checkClaimed: checkOne,

    /**
     * One round, for a caller that waits for it (the CLI, tests): claims what is due (up to the
     * concurrency), fetches it at once and applies each. Says how many were claimed.
     */
    async runDue(): Promise<number> {
      const claimed = await claimDue(LINK_CHECK_CONCURRENCY);
      const results = await Promise.allSettled(claimed.map(checkOne));
      // A claim whose result could not be applied is checked again when its lease ends.
      const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (failed) throw failed.reason;
      return claimed.length;
    },

    /**
     * A publisher's re-check: the placement is checked now, in this call, and the order returned
     * as it then is. Only while the link is in question (live_review or link_lost).
     */
    async recheck(publisherId: number, orderId: number): Promise<PublisherOrderView> {
      const viewer = { party: 'publisher' as const, publisherId };
      const claimed = await withTransaction(deps.pool, async (tx): Promise<Claimed> => {
        const order = await lockOrder(tx, orderId, viewer);
        requireStatus(order, 'recheck');
        bookRecheck(orderId);
        const lease = new Date(deps.clock.now() + leaseMs);
        const { rows } = await tx.query<Omit<Claimed, 'lease'>>({
          name: 'link_claim_one',
          text: `UPDATE orders o SET link_check_due_at = $2 FROM outlets ol
                  WHERE o.id = $1 AND ol.id = o.outlet_id RETURNING ${claimColumns}`,
          values: [orderId, lease],
        });
        return { ...rows[0]!, lease };
      });
      await checkOne(claimed);
      return getOrder(deps.pool, viewer, orderId);
    },
  };
}

export type LinkChecker = ReturnType<typeof createLinkChecker>;
