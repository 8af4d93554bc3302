import type { Db } from '../../db/handle.js';
import { DomainError } from '../errors.js';
import { type ClaimsInRead, noRecords, type Outcome, type RecordsInWrite } from '../idempotency/record-once.js';
import { budgetExceeded, type Exhausted, hasSpendLimits, overrun, readSpent, recordExhausted, windowsRunOut } from '../keys/budget.js';
import * as ledger from '../ledger/ledger.js';
import { type BuyerActor, isMember } from './buyer-actor.js';
import { newOrderRow, orderRecord } from './new-order-rows.js';
import { orderPlacedEvents } from './order-events.js';
import { type BuyerOrderView, orderView } from './order-view.js';
import {
  ApprovalNeeded,
  type ApprovedBy,
  contentOf,
  insufficientBalance,
  judge,
  type NewOrder,
  newOrder,
  type PlacementContent,
  type PlaceOrdersInput,
} from './placement-rules.js';
import { insertContent, type PlacementContext, readContexts, writeOrders } from './placement-statements.js';
import type { Durations } from './states.js';

// The placement's work inside its transaction: read every placement's context (locking the
// balances), judge each by the rules in turn, then write what was accepted in one statement.
// The statements are placement-statements.ts's, the rules placement-rules.ts's.

/** One placement request, as `placeAll` takes it. */
export interface Placement {
  principal: BuyerActor;
  input: PlaceOrdersInput;
  content?: PlacementContent | undefined;
  quotedTotalCents?: number | undefined;
  /** Set when a person approved this placement (an approval request): it never asks again. */
  approved?: ApprovedBy | undefined;
}

/**
 * Placement in the caller's transaction: lock the workspace's balance, check everything once,
 * insert the orders (with the buyer's content), post their escrow movements.
 */
export async function placeOrders(
  tx: Db,
  principal: BuyerActor,
  input: PlaceOrdersInput,
  now: number,
  durations: Durations,
  prepared: { content?: PlacementContent; quotedTotalCents?: number | undefined; approved?: ApprovedBy | undefined } = {},
): Promise<BuyerOrderView[]> {
  const content = prepared.content ?? contentOf(input);
  const [outcome] = await placeAll(tx, [{ principal, input, content, quotedTotalCents: prepared.quotedTotalCents, approved: prepared.approved }], now, durations);
  if (!outcome!.ok) throw outcome!.error;
  return outcome!.value;
}

/**
 * Several placements in the caller's transaction, each answered as if it ran alone, in their
 * order: lock every workspace's balance (taking the new orders' ids), check each placement
 * against what the ones before it spent, then in one statement insert all their orders, post all
 * their escrow movements, record their `order.placed` events and, for a group, store the records
 * of every placement's outcome (`records`, from `recordEach`). A refusal is that placement's
 * outcome and writes nothing; the others go on.
 */
export async function placeAll(
  tx: Db,
  all: Placement[],
  now: number,
  durations: Durations,
  group?: { claims: ClaimsInRead; records: RecordsInWrite<BuyerOrderView[]> },
): Promise<Array<Outcome<BuyerOrderView[]>>> {
  const read = await readContexts(tx, all, now, { claims: group?.claims });
  // A group's placements whose keys were claimed and hold no record go on (only their balances
  // were locked, only their ids taken); the others are answered by `recordEach`.
  const admitted = group ? await group.claims.admit(read) : all.map((_, i) => i);
  const placements = admitted.map((i) => all[i]!);
  const contexts = admitted.map((i) => read[i]!);
  const accounts = ledger.lockedAccounts(
    placements.map((p) => p.principal.workspaceId),
    contexts.flatMap((c) => c.balances!),
  );
  const records = group?.records;
  // What each limited key's budget spent, read after the lock (a key without limits reads
  // nothing); each accepted order below adds to it, so the ones after count it.
  const budgets = [...new Set(contexts.filter((c) => c.key_ok && hasSpendLimits(c)).map((c) => c.budget_id))];
  const spent = await readSpent(tx, budgets, now);
  const exhausted: Exhausted[] = [];
  const outcomes: Array<Outcome<BuyerOrderView[]>> = [];
  const accepted: Array<{ at: number; p: Placement; ctx: PlacementContext; orders: NewOrder[] }> = [];
  for (const [at, p] of placements.entries()) {
    try {
      const { ctx, offers, total, fmt, asks } = judge(contexts[at], p.principal, p.input, p.quotedTotalCents, p.approved);
      const s = spent.get(ctx.budget_id) ?? { day: 0, month: 0 };
      // A person's approval is never refused by the key's budget, though it counts against it.
      const over = p.approved ? undefined : overrun(ctx, s, total, now);
      if (over) throw budgetExceeded(over.window, over.view, total, fmt);
      const w = accounts.get(p.principal.workspaceId)!;
      if (w.availableBalance < total) throw insufficientBalance(total - w.availableBalance, w.availableBalance, fmt);
      // Every check passed, and a person must decide: nothing is held while they do.
      if (asks) throw new ApprovalNeeded(asks, total, offers);
      w.availableBalance -= total;
      // A person has no key, so no budget (its limits read as none): nothing runs out.
      if (!isMember(p.principal)) {
        const { keyId, name, prefix, workspaceId } = p.principal;
        for (const r of windowsRunOut(ctx, s, total)) exhausted.push({ ...r, workspaceId, budgetId: ctx.budget_id, key: { id: keyId, name, prefix }, fmt });
      }
      s.day += total;
      s.month += total;
      const orders = offers.map((offer) => newOrder(offer, p.input, p.content, now, durations));
      accepted.push({ at, p, ctx, orders });
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      outcomes[at] = { ok: false, error };
    }
  }
  if (accepted.length === 0) return outcomes;
  // The ids the accepted placements took, given in ascending order down their orders, as the
  // column default gave them: orders placed together list in arrival order.
  const ids = accepted.flatMap((a) => contexts[a.at]!.order_ids!.map(Number)).sort((x, y) => x - y);
  let k = 0;
  const rows = accepted.flatMap((a) => a.orders.map((order) => ({ p: a.p, order, id: ids[k++]! })));
  if (k !== ids.length) throw new Error('the placements took another number of order ids than they have orders');
  // The orders as they will be written, known without reading them back under the lock: the
  // answer and both parties' `order.placed` events are views of the same rows.
  k = 0;
  const placed = accepted.map((a) => a.orders.map((o) => newOrderRow(a.p.input, a.ctx, o, rows[k++]!.id, now, a.p.content)));
  // Every outcome is known now, before the write: a group's records go in its statement.
  accepted.forEach((a, i) => {
    outcomes[a.at] = { ok: true, value: placed[i]!.map((row) => orderView(row, 'buyer')) };
  });
  const writes = [
    writeOrders(
      rows.map(({ p, order, id }) => orderRecord(p.principal, p.input, p.approved, order, id)),
      rows.map((r) => ledger.escrow(accounts.get(r.p.principal.workspaceId)!, { id: r.id, price: r.order.offer.price })),
      orderPlacedEvents(accepted.flatMap((a, i) => placed[i]!.map((row) => ({ workspaceId: a.p.principal.workspaceId, publisherId: row.publisher_id, row })))),
      now,
      records ? records.values(outcomes) : noRecords(),
    ),
    ...(rows.some((r) => r.p.content) ? [insertContent(rows.flatMap(({ p, order, id }) => (p.content ? [{ id, title: p.content.title, body: p.content.body, checks: order.checks }] : [])), now)] : []),
  ];
  // A group's write ends its transaction: sent with COMMIT, one round trip. A key whose budget
  // ran out takes statements that depend on each other's answers (`recordExhausted`), so its
  // group commits after them.
  if (records && exhausted.length === 0) {
    await records.commitWith(tx, writes);
    return outcomes;
  }
  if (records) await records.send(tx, writes);
  else for (const statement of writes) await tx.query(statement);
  await recordExhausted(tx, exhausted, now);
  return outcomes;
}

/**
 * Everything placement refuses, except the balance, for a quote (MCP's first step): a revoked
 * key, unknown or inactive offers, another workspace's project, a total above the approval limit;
 * and `asks`, whether a person will have to approve it.
 */
export async function checkPlacement(q: Db, principal: BuyerActor, input: PlaceOrdersInput, now: number) {
  return judge((await readContexts(q, [{ principal, input }], now))[0], principal, input, undefined, undefined);
}

