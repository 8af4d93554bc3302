import type pg from 'pg';
import type { Clock } from '../clock.js';
import { DomainError } from '../errors.js';
import { GroupCommit } from '../../db/group-commit.js';
import { isDatabaseUnavailable } from '../../db/errors.js';
import { inProgress, type Kept, type OnceKey, recordEach, recordOnce, type RequestKey } from '../idempotency/record-once.js';
import type { BuyerActor } from './buyer-actor.js';
import type { BuyerOrderView } from './order-view.js';
import { contentOf, type PlaceOrdersInput } from './placement-rules.js';
import { type Placement, placeAll, placeOrders } from './placement-transaction.js';
import type { Durations } from './states.js';

// The public call of placement and the queue that gathers placements into groups. The work each
// group or lone placement does in its transaction is placement-transaction.ts's.

export interface PlaceDeps {
  /** A pool, not a transaction: its size and connection timeout size the groups. */
  pool: pg.Pool;
  clock: Clock;
  durations: Durations;
}

export interface PlaceOptions {
  /** Where the outcome is kept once: a REST Idempotency-Key or an MCP confirmation. */
  once: OnceKey | undefined;
  /** Which refusals are kept with it (none unless said; the new orders always are). */
  keeps?: ((error: DomainError) => boolean) | undefined;
  /** The total a quote showed the user: any other total is refused (quote_changed). */
  quotedTotalCents?: number;
}

/**
 * Places orders: one per offer, all or nothing, each freezing the price it was bought at, the
 * total moving from the workspace's available balance into escrow. The content checks run first,
 * before any lock; then one transaction that also keeps the outcome once (`options.once`): lock
 * the balance, check, insert the orders, post the ledger movements. Placements that arrive while
 * others run are committed together (`groups`, made once by `placementGroups`).
 */
export async function place(groups: PlacementGroups, principal: BuyerActor, input: PlaceOrdersInput, options: PlaceOptions): Promise<Kept<BuyerOrderView[]>> {
  const content = contentOf(input);
  const { once } = options;
  const job: PlacementJob = {
    workspaceId: principal.workspaceId,
    orders: input.offer_ids.length,
    // A retry of a REST request waiting or running here is refused at once; every other job is
    // its own (a repeated confirmation, or a console form sent twice, waits for the first in its
    // workspace's line, then replays).
    identity: once?.book === 'request' ? `${once.apiKeyId}:${once.key}` : `job:${++jobs}`,
    // A placement with content, a confirmation, a person's or one without a key runs alone.
    grouped: once?.book === 'request' && content === undefined ? once : undefined,
    placement: { principal, input, content, quotedTotalCents: options.quotedTotalCents },
    once,
    keeps: options.keeps,
  };
  return groups.run(job);
}

let jobs = 0;

interface PlacementJob {
  workspaceId: number;
  orders: number;
  identity: string;
  grouped: RequestKey | undefined;
  placement: Placement;
  once: OnceKey | undefined;
  keeps: PlaceOptions['keeps'];
}

/** The most orders a group places (a placement may hold up to 50). */
const MAX_GROUP_ORDERS = 100;
/**
 * How long a group waits for a lock (a workspace's balance rows held by another transaction)
 * before it fails and its placements run again alone: the others in it then wait no longer.
 */
const GROUP_LOCK_TIMEOUT_MS = 250;
/**
 * While a group runs, the next starts only after this long (GroupCommit's `staggerMs`). Every
 * group pays the same two round trips whatever its size (BEGIN with the claims, the records'
 * lookup and the lock; the write with the records, and COMMIT), so bigger groups cost less per
 * order. Under ten clients, 3 ms made groups of about 2.4 placements and 8 ms about 4.2, for 0.8
 * of the server's CPU and 0.7 of the database's per order, and as many orders a second; 15 ms
 * made groups of five and fewer orders a second (bench/RESULTS.md, "A longer stagger"). With two
 * round trips, 2, 4 and 6 ms did no better than 8 ("Two round trips a group"). A lone client
 * never waits: with no group running, a group starts at once.
 */
const GROUP_STAGGER_MS = 8;

/** The placements of one pool, waiting and running: one per pool, made by whoever owns the pool. */
export type PlacementGroups = ReturnType<typeof placementGroups>;

/**
 * Group commit, per pool: placements that arrive while the groups running take all but one of the
 * pool's connections wait in the process, holding no connection, and then go together in one
 * transaction (`recordEach` and `placeAll`: one statement for each step whatever the group's
 * size, two round trips in all: BEGIN with the transaction's settings, sent with the claims of the
 * keys, the lookup of their records and the lock of the balances; then the write of the orders
 * with the records, sent with COMMIT; more for spending-limited keys, see `placeAll`). A
 * workspace has one group or lone placement running at a time per process, in arrival order, so
 * a workspace whose rows are held elsewhere ties up one connection, not the pool. A group that waits for a lock
 * longer than GROUP_LOCK_TIMEOUT_MS, or fails, puts its placements back to run alone. Waiting
 * here longer than a request may wait for a connection is the same 503.
 */
export function placementGroups(deps: PlaceDeps): GroupCommit<PlacementJob, Kept<BuyerOrderView[]>> {
  const { pool, clock, durations } = deps;
  const runAlone = (job: PlacementJob) => {
    // The order's time is when it is placed, not when it arrived.
    const now = clock.now();
    return recordOnce(
      pool,
      // Every refusal comes before the first write, so a kept one has nothing to undo.
      { key: job.once, now, keeps: job.keeps, refusesBeforeWriting: true },
      (tx) => placeOrders(tx, job.placement.principal, job.placement.input, now, durations, job.placement),
    );
  };
  const created = new GroupCommit<PlacementJob, Kept<BuyerOrderView[]>>({
    // Every connection but one for groups: the one left serves lone placements and other routes.
    inFlight: Math.max(1, (pool.options.max ?? 10) - 1),
    staggerMs: GROUP_STAGGER_MS,
    maxWeight: MAX_GROUP_ORDERS,
    weightOf: (job) => job.orders,
    maxWaitMs: pool.options.connectionTimeoutMillis ?? 2_000,
    timedOut: () => new DomainError('unavailable', 'Too many orders are being placed at once. Retry shortly.'),
    laneOf: (job) => job.workspaceId,
    identityOf: (job) => job.identity,
    identityInUse: inProgress,
    alone: (job) => job.grouped === undefined,
    // No connection to be had: each placement gets the 503 now rather than wait for another.
    retryAlone: (error) => !isDatabaseUnavailable(error),
    run: async (batch, mode) => {
      if (mode === 'alone') return [{ ok: true, value: await runAlone(batch[0]!) }];
      const now = clock.now();
      return recordEach(
        pool,
        batch.map((job) => ({ key: job.grouped!, keeps: job.keeps })),
        now,
        (tx, claims, records) => placeAll(tx, batch.map((job) => job.placement), now, durations, { claims, records }),
        GROUP_LOCK_TIMEOUT_MS,
      );
    },
  });
  return created;
}

