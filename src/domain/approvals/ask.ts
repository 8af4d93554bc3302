import { hash } from 'node:crypto';
import { canonicalJson } from '../../common/canonical-json.js';
import type { ApprovalAction } from '../../common/enums.js';
import type { Db } from '../../db/handle.js';
import type { Clock } from '../clock.js';
import type { DomainError } from '../errors.js';
import { recordEvents } from '../events/record.js';
import { type Kept, type OnceKey, type OnceOptions, recordOnce } from '../idempotency/record-once.js';
import type { WorkspacePrincipal } from '../keys/principal.js';
import { approveConfirmed, buyerOrders, type OrderActionDeps, requireQuoted } from '../orders/buyer-actions.js';
import { type BuyerActor, isMember } from '../orders/buyer-actor.js';
import { getOrder } from '../orders/order-read.js';
import type { BuyerOrderView } from '../orders/order-view.js';
import { place, type PlaceOptions, type PlacementGroups } from '../orders/place-orders.js';
import { ApprovalNeeded, type PlaceOrdersInput } from '../orders/placement-rules.js';
import type { Durations } from '../orders/states.js';
import { getApproval } from './approval-read.js';
import type { ApprovalItem, ApprovalRequestView } from './approval-view.js';
import { expireApprovalsIn } from './expiry.js';

/** What the approvals need: the pool, the clock, deadlines, and the console's address for `approve_url`. */
export interface ApprovalDeps extends OrderActionDeps {
  pool: Db;
  clock: Clock;
  durations: Durations;
  /** The console's absolute base URL (no trailing slash): approve links point there. */
  baseUrl: string;
}

/** A key's spending action that waits for a person: what its call answers instead of acting. */
export interface Asked {
  approval_request: ApprovalRequestView;
}

/** The kept value of a call that may ask: an `Asked` is an object, what acting answers is not (an array) or has no such field. */
export const isAsked = (value: unknown): value is Asked => typeof value === 'object' && value !== null && 'approval_request' in value;

/** ApprovalNeeded is never kept: the request it becomes is, under the same key, by `ask`. */
const notAsking = (keeps: ((e: DomainError) => boolean) | undefined) => (e: DomainError) => !(e instanceof ApprovalNeeded) && (keeps?.(e) ?? false);

/**
 * Places orders, or, when a person must approve them first (the key's `needs_approval`, or a
 * total above the workspace's `approval_above_cents`), makes an approval request instead, after
 * every check placement makes (the balance included: 402 if it could not pay now). Nothing is
 * held for a request. Kept once under `options.once` either way: a repeat answers the orders or
 * the same request.
 */
export async function placeOrAsk(
  groups: PlacementGroups,
  deps: ApprovalDeps,
  principal: BuyerActor,
  input: PlaceOrdersInput,
  options: PlaceOptions,
): Promise<Kept<BuyerOrderView[] | Asked>> {
  try {
    return await place(groups, principal, input, { ...options, keeps: notAsking(options.keeps) });
  } catch (error) {
    if (!(error instanceof ApprovalNeeded) || isMember(principal)) throw error;
    const items = error.offers.map(
      (f): ApprovalItem => ({
        offer_id: f.id,
        order_id: null,
        outlet: { id: f.outlet_id, name: f.outlet_name, domain: f.outlet_domain },
        format: f.format,
        title: f.title,
        price: f.price,
        target_url: input.target_url,
        anchor_text: input.anchor_text ?? null,
        live_url: null,
      }),
    );
    return ask(deps, principal, { action: 'place_orders', body: input, orderId: null, total: error.total, items }, options.once, notAsking(options.keeps));
  }
}

/**
 * Approves a live placement (paying the publisher), or, for a key that needs a person's approval,
 * makes an approval request for it once every check passed.
 */
export async function approveOrAsk(deps: ApprovalDeps, principal: WorkspacePrincipal, orderId: number, options: OnceOptions) {
  const keeps = notAsking(options.keeps);
  try {
    return await buyerOrders.approve(deps, principal, orderId, { once: options.once, keeps });
  } catch (error) {
    if (!(error instanceof ApprovalNeeded)) throw error;
    return askForPlacement(deps, principal, orderId, error.total, options.once, keeps);
  }
}

/** `approveOrAsk` for an MCP confirmation: the quoted price and page must still hold. */
export async function approveConfirmedOrAsk(deps: ApprovalDeps, principal: WorkspacePrincipal, orderId: number, options: Parameters<typeof approveConfirmed>[3]) {
  try {
    return await approveConfirmed(deps, principal, orderId, options);
  } catch (error) {
    if (!(error instanceof ApprovalNeeded)) throw error;
    // The person is asked about the placement the user confirmed: one changed since is refused as the quote would be.
    return askForPlacement(deps, principal, orderId, error.total, options.once, undefined, ([item]) =>
      requireQuoted({ price: item!.price, live_url: item!.live_url }, options),
    );
  }
}

function askForPlacement(
  deps: ApprovalDeps,
  principal: WorkspacePrincipal,
  orderId: number,
  total: number,
  once: OnceKey | undefined,
  keeps: OnceOptions['keeps'],
  check?: (items: ApprovalItem[]) => void,
) {
  return ask(deps, principal, { action: 'approve_placement', body: { order_id: orderId }, orderId, total, items: undefined, check }, once, keeps);
}

interface AskFor {
  action: ApprovalAction;
  body: unknown;
  orderId: number | null;
  total: number;
  /** undefined: the order's, read in the request's transaction. */
  items: ApprovalItem[] | undefined;
  /** Refuses (throws) what must not be asked about, given the items as read. */
  check?: ((items: ApprovalItem[]) => void) | undefined;
}

/** The same body from the same key answers the request that waits (`approval_requests_pending_body_uq`). */
const fingerprintOf = (action: ApprovalAction, body: unknown) => hash('sha256', canonicalJson([action, body]), 'hex');

/**
 * Makes the approval request, or answers the one that waits for the same body from the same key,
 * in one transaction kept under `once`, with its `approval_request.created` event.
 */
async function ask(deps: ApprovalDeps, principal: WorkspacePrincipal, req: AskFor, once: OnceKey | undefined, keeps: OnceOptions['keeps']): Promise<Kept<Asked>> {
  const now = deps.clock.now();
  const { workspaceId, keyId } = principal;
  return recordOnce(deps.pool, { key: once, now, keeps, refusesBeforeWriting: true }, async (tx) => {
    const items = req.items ?? (await orderItems(tx, workspaceId, req.orderId!));
    req.check?.(items);
    const fingerprint = fingerprintOf(req.action, req.body);
    // A pending one past its time holds the body's place until the sweep comes: it expires now.
    await expireApprovalsIn(tx, now, deps.baseUrl, { keyId, fingerprint });
    // A concurrent identical request waits here for the other's transaction, then finds its row.
    for (let attempt = 0; attempt < 3; attempt++) {
      const inserted = await tx.query<{ id: number }>({
        name: 'approval_insert',
        text: `INSERT INTO approval_requests (workspace_id, action, requested_by_key_id, body, fingerprint, order_id, total_cents, items, requested_at, expires_at)
               VALUES ($1, $2, $3, $4::jsonb, $5, $6, $7, $8::jsonb, $9, $10)
               ON CONFLICT (requested_by_key_id, fingerprint) WHERE status = 'pending' DO NOTHING
               RETURNING id`,
        values: [workspaceId, req.action, keyId, JSON.stringify(req.body), fingerprint, req.orderId, req.total, JSON.stringify(items), new Date(now), new Date(now + deps.durations.approvalMs)],
      });
      const created = inserted.rows[0];
      const id =
        created?.id ??
        (
          await tx.query<{ id: number }>({
            name: 'approval_pending_of',
            text: `SELECT id FROM approval_requests WHERE requested_by_key_id = $1 AND fingerprint = $2 AND status = 'pending'`,
            values: [keyId, fingerprint],
          })
        ).rows[0]?.id;
      // The one that waited was decided between the two statements: try again.
      if (id === undefined) continue;
      const view = await getApproval(tx, workspaceId, id, { now, baseUrl: deps.baseUrl });
      if (created) {
        await recordEvents(tx, [{ type: 'approval_request.created', owner: { party: 'buyer', workspaceId }, actor: 'buyer', data: view }], now);
      }
      return { approval_request: view };
    }
    throw new Error('an approval request could be neither made nor found');
  });
}

/** A live placement to approve, as its request shows it. */
async function orderItems(tx: Db, workspaceId: number, orderId: number): Promise<ApprovalItem[]> {
  const o = await getOrder(tx, { party: 'buyer', workspaceId }, orderId);
  return [
    {
      offer_id: o.offer.id,
      order_id: o.id,
      outlet: o.outlet,
      format: o.offer.format,
      title: o.offer.title,
      price: o.price,
      target_url: o.target_url,
      anchor_text: o.anchor_text,
      live_url: o.live_url,
    },
  ];
}
