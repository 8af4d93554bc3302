import type { Db } from '../../db/handle.js';
import { budgetAfter, type BudgetView } from '../keys/budget.js';
import { formatCents } from '../money/format.js';
import type { WorkspacesModule } from '../workspaces/workspaces-module.js';
import { requireAllowed } from './action-states.js';
import { type BuyerActor, isMember } from './buyer-actor.js';
import { placementApprovalAsks } from './buyer-actions.js';
import { getOrder } from './order-read.js';
import type { BuyerOrderView } from './order-view.js';
import type { ApprovalReason } from '../../common/enums.js';
import type { PlaceOrdersInput } from './placement-rules.js';
import type { PlacementOfferRow } from './placement-statements.js';
import { checkPlacement } from './placement-transaction.js';

// What confirming a spending action would do, before anything is done: what is bought, paid or
// refunded, the total, and the workspace's balances now and after. MCP's spending tools answer a
// quote as their first step and the console shows one on its confirmation pages; each renders
// these values its own way, and neither does the arithmetic. A quote is a preview: the binding
// checks run again in the transaction that spends.

export interface Amount {
  cents: number;
  formatted: string;
}

/**
 * Where the total goes: held from the available balance (placing), paid from what was held to
 * the publisher (approving a placement), or given back from what was held (cancelling).
 */
export type Movement = 'hold' | 'release' | 'refund';

export interface QuoteMoney {
  movement: Movement;
  total: Amount;
  /** The available balance now. */
  balance: Amount;
  /** The available balance after confirming; never below 0: `shortfall` says what is missing. */
  balanceAfter: Amount;
  /** How much more the available balance needs before confirming can succeed; 0 when it is enough. */
  shortfall: Amount;
  /** What is held for orders now, and after confirming. */
  held: Amount;
  heldAfter: Amount;
}

export interface PlacementQuote extends QuoteMoney {
  items: Array<{ offer: PlacementOfferRow; price: Amount }>;
  /** A key's budget as it would be after the order; null for a key without one, and for a person. */
  budget: BudgetView | null;
  /** Why a person must approve it first; undefined when nobody must. */
  asks: ApprovalReason | undefined;
}

export interface OrderQuote extends QuoteMoney {
  order: BuyerOrderView;
  /** A key's budget as it is (releasing held money is never refused by it); null for a person. */
  budget: BudgetView | null;
  asks: ApprovalReason | undefined;
}

/** What a quote reads: the database and the workspaces' settings and balances. */
export interface QuoteDeps {
  db: Db;
  workspaces: WorkspacesModule;
}

type Money = (cents: number) => string;

const amount = (cents: number, fmt: Money): Amount => ({ cents, formatted: fmt(cents) });

/** The arithmetic of a quote: the balances after `total` moves as `movement` says. */
export function quoteMoney(total: number, now: { balance: number; held: number }, movement: Movement, fmt: Money): QuoteMoney {
  const spent = movement === 'hold' ? total : 0;
  const returned = movement === 'refund' ? total : 0;
  const heldAfter = movement === 'hold' ? now.held + total : Math.max(0, now.held - total);
  return {
    movement,
    total: amount(total, fmt),
    balance: amount(now.balance, fmt),
    balanceAfter: amount(Math.max(0, now.balance - spent) + returned, fmt),
    shortfall: amount(Math.max(0, spent - now.balance), fmt),
    held: amount(now.held, fmt),
    heldAfter: amount(heldAfter, fmt),
  };
}

/** The workspace's balances, and for a key its budget as it is now. */
async function accountOf(deps: QuoteDeps, actor: BuyerActor, now: number): Promise<{ balance: number; held: number; budget: BudgetView | null }> {
  if (isMember(actor)) {
    const summary = await deps.workspaces.summary(actor.workspaceId);
    return { balance: summary.balance, held: summary.held, budget: null };
  }
  const me = await deps.workspaces.me(actor, now);
  return { balance: me.balance, held: me.held, budget: me.key.budget };
}

async function moneyOf(deps: QuoteDeps, workspaceId: number): Promise<Money> {
  const w = await deps.workspaces.settings.get(workspaceId);
  return (c) => formatCents(c, w.currency, w.perUsd);
}

/**
 * The price of placing these orders now. Refuses exactly what placement would refuse outright
 * (`checkPlacement`: the key or the person's role, the offers, the project, the approval limit,
 * and a key's budget); a balance too low is a shortfall, not a refusal.
 */
export async function quotePlacement(deps: QuoteDeps, actor: BuyerActor, input: PlaceOrdersInput, now: number): Promise<PlacementQuote> {
  const [checked, account] = await Promise.all([checkPlacement(deps.db, actor, input, now), accountOf(deps, actor, now)]);
  const { offers, total, fmt, asks } = checked;
  // Refused here as placement would refuse it; else the budget left after the order.
  const budget = !isMember(actor) && account.budget && actor.budget ? budgetAfter(actor.budget.limits, account.budget, total, now, fmt) : null;
  return { items: offers.map((offer) => ({ offer, price: amount(offer.price, fmt) })), ...quoteMoney(total, account, 'hold', fmt), budget, asks };
}

/**
 * Approving a live placement pays the publisher from what was held at placement: the available
 * balance does not change. 409 unless the order is waiting for that approval.
 */
export async function quoteApproval(deps: QuoteDeps, actor: BuyerActor, orderId: number, now: number): Promise<OrderQuote> {
  const [order, account, asks] = await Promise.all([
    getOrder(deps.db, { party: 'buyer', workspaceId: actor.workspaceId }, orderId),
    accountOf(deps, actor, now),
    // A person approving in the console is the approval a key would wait for.
    isMember(actor) ? undefined : placementApprovalAsks(deps.db, actor),
  ]);
  const fmt = await moneyOf(deps, actor.workspaceId);
  requireAllowed('approvePlacement', order.status);
  return { order, ...quoteMoney(order.price, account, 'release', fmt), budget: account.budget, asks };
}

/** Cancelling gives the price back from what was held. 409 unless the order may still be cancelled. */
export async function quoteCancel(deps: QuoteDeps, actor: BuyerActor, orderId: number, now: number): Promise<OrderQuote> {
  const [order, account] = await Promise.all([getOrder(deps.db, { party: 'buyer', workspaceId: actor.workspaceId }, orderId), accountOf(deps, actor, now)]);
  const fmt = await moneyOf(deps, actor.workspaceId);
  requireAllowed('cancel', order.status);
  return { order, ...quoteMoney(order.price, account, 'refund', fmt), budget: account.budget, asks: undefined };
}
