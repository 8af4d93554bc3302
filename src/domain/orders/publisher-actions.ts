import type { Db } from '../../db/handle.js';
import { type OnceOptions, runOnce } from '../idempotency/record-once.js';
import type { OrderActionDeps } from './buyer-actions.js';
import { invalidInput } from '../errors.js';
import { refuseUrl } from '../../outbound/address-policy.js';
import { recordMessageReceived, recordOrderEvent } from './order-events.js';
import { messageView } from './order-view.js';
import type { Durations } from './states.js';
import { scheduleFirstCheck } from './guarantee.js';
import { addContent, addMessage, enterState, lockOrder, refund, requireStatus } from './transitions.js';

const publisher = (publisherId: number) => ({ party: 'publisher' as const, publisherId });

/**
 * The live URL as stored, or undefined when it is not an http(s) URL on the outlet's domain or
 * one of its subdomains. Refused besides: credentials before the host (`https://outlet@evil`
 * reads as the outlet to a person) and empty labels. Stored normalised (lower-case host without
 * a trailing dot, IDNs in punycode), so the buyer sees the host that was checked.
 */
export function liveUrlOn(liveUrl: string, domain: string): string | undefined {
  let u: URL;
  try {
    u = new URL(liveUrl);
  } catch {
    return undefined;
  }
  // What every outbound URL is judged by (http or https, no user:password@, not port 0), then the domain.
  if (refuseUrl(u) !== null || /^[a-z]+:\/\/[^/?#]*@/i.test(liveUrl.trim())) return undefined;
  const host = u.hostname.toLowerCase().replace(/\.$/, '');
  if (host.split('.').some((label) => label === '')) return undefined;
  const d = domain.toLowerCase();
  if (host !== d && !host.endsWith(`.${d}`)) return undefined;
  u.hostname = host;
  return u.href;
}

/** The publisher's side of the state table (docs/orders.md), each step in the caller's transaction. */
export function publisherActions(durations: Durations) {
  return {
    /** awaiting_acceptance → writing, or publishing when the buyer supplied the content. */
    async accept(tx: Db, publisherId: number, orderId: number, now: number) {
      const order = await lockOrder(tx, orderId, publisher(publisherId));
      requireStatus(order, 'accept');
      if (order.has_content) await enterState(tx, order, 'publishing', now, durations, { publishingBuyerContent: true });
      else await enterState(tx, order, 'writing', now, durations);
      return (await recordOrderEvent(tx, 'order.accepted', orderId, { actor: 'publisher', previousStatus: 'awaiting_acceptance' }, now)).publisher;
    },

    /** awaiting_acceptance → declined, refunding the buyer. */
    async decline(tx: Db, publisherId: number, orderId: number, reason: string, now: number) {
      const order = await lockOrder(tx, orderId, publisher(publisherId));
      requireStatus(order, 'decline');
      await enterState(tx, order, 'declined', now, durations, { declineReason: reason });
      await refund(tx, order);
      return (await recordOrderEvent(tx, 'order.declined', orderId, { actor: 'publisher', previousStatus: 'awaiting_acceptance' }, now)).publisher;
    },

    /**
     * writing → draft_review, or straight to publishing when the buyer's workspace auto-approves
     * drafts (docs/orders.md: with auto_approve_drafts a publisher's draft moves straight to publishing, a revised one too,
     * when the buyer switched the rule on during the review). Otherwise a revised draft is a new
     * version in the same state, whose review_by stays where entering draft_review set it (docs/orders.md).
     */
    async submitDraft(tx: Db, publisherId: number, orderId: number, draft: { title: string; body: string }, now: number) {
      const order = await lockOrder(tx, orderId, publisher(publisherId));
      requireStatus(order, 'submitDraft');
      await addContent(tx, order, draft, 'publisher', now);
      const previousStatus = order.status;
      if (order.auto_approve_drafts) {
        await enterState(tx, order, 'publishing', now, durations, { publishingBuyerContent: false });
      } else if (order.status === 'writing') {
        await enterState(tx, order, 'draft_review', now, durations);
      } else {
        await tx.query({ name: 'order_touch', text: 'UPDATE orders SET updated_at = $2 WHERE id = $1', values: [orderId, new Date(now)] });
      }
      // A revised draft in draft_review leaves the order where it was: no state left.
      const left = order.status === previousStatus ? null : previousStatus;
      const views = await recordOrderEvent(tx, 'order.draft_submitted', orderId, { actor: 'publisher', previousStatus: left }, now);
      // The workspace's rule approved it at once: the same approval a buyer's click would record.
      if (order.auto_approve_drafts) {
        await recordOrderEvent(tx, 'order.draft_approved', orderId, { actor: 'system', previousStatus: left }, now);
      }
      return views.publisher;
    },

    /** publishing → live_review with the live URL. */
    async publish(tx: Db, publisherId: number, orderId: number, liveUrl: string, now: number) {
      const order = await lockOrder(tx, orderId, publisher(publisherId));
      // A bad URL is a 422 whatever the state (docs/http.md: 422 before 409).
      const url = liveUrlOn(liveUrl, order.outlet_domain);
      if (url === undefined) {
        throw invalidInput({
          live_url: [`must be an http(s) URL on ${order.outlet_domain} or one of its subdomains, without user:password@`],
        });
      }
      requireStatus(order, 'publish');
      await enterState(tx, order, 'live_review', now, durations, { liveUrl: url });
      await scheduleFirstCheck(tx, orderId, now);
      return (await recordOrderEvent(tx, 'order.published', orderId, { actor: 'publisher', previousStatus: 'publishing' }, now)).publisher;
    },

    async message(tx: Db, publisherId: number, orderId: number, body: string, now: number) {
      const order = await lockOrder(tx, orderId, publisher(publisherId));
      const message = await addMessage(tx, orderId, 'publisher', body, now);
      await recordMessageReceived(tx, order, message, now);
      return messageView(message);
    },
  };
}

type Steps = ReturnType<typeof publisherActions>;
type ResultOf<K extends keyof Steps> = Awaited<ReturnType<Steps[K]>>;

/**
 * The publisher's actions as routes call them: one call each, in its own transaction, kept once
 * under `options.once` (a REST Idempotency-Key; none: not kept) and answered as its outcome; each adapter encodes it.
 */
export const publisherOrders = {
  accept: (deps: OrderActionDeps, publisherId: number, orderId: number, options: OnceOptions) =>
    runOnce(deps, options, (tx, now) => publisherActions(deps.durations).accept(tx, publisherId, orderId, now)),
  decline: (deps: OrderActionDeps, publisherId: number, orderId: number, reason: string, options: OnceOptions) =>
    runOnce(deps, options, (tx, now) => publisherActions(deps.durations).decline(tx, publisherId, orderId, reason, now)),
  submitDraft: (deps: OrderActionDeps, publisherId: number, orderId: number, draft: { title: string; body: string }, options: OnceOptions) =>
    runOnce(deps, options, (tx, now) => publisherActions(deps.durations).submitDraft(tx, publisherId, orderId, draft, now)),
  publish: (deps: OrderActionDeps, publisherId: number, orderId: number, liveUrl: string, options: OnceOptions) =>
    runOnce(deps, options, (tx, now) => publisherActions(deps.durations).publish(tx, publisherId, orderId, liveUrl, now)),
  message: (deps: OrderActionDeps, publisherId: number, orderId: number, body: string, options: OnceOptions) =>
    runOnce(deps, options, (tx, now) => publisherActions(deps.durations).message(tx, publisherId, orderId, body, now)),
};
