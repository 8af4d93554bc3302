import type { OrderStatus } from '../../common/enums.js';
import { nextStepOf } from '../orders/next-step.js';

// The words of each notification (docs/mail.md): what needs the person, by when, and the one
// console page where they act. The values come from the event (an order as its party sees it, the
// approval request, the key, the endpoint) or, for reminders, from the order and the key; names
// chosen by others (an outlet's, a key's) are escaped by the composer in HTML.

/** One notification's words, whoever it goes to: the mail's subject and body, and its line in a digest. */
export interface NoticeWords {
  subject: string;
  paragraphs: string[];
  /** The page to act on, below the workspace's or publisher's console address (`/orders/17`). */
  action: { label: string; path: string };
  line: string;
}

/** A moment as mails write it: unambiguous anywhere, to the minute. */
export function when(at: string | Date | null | undefined): string {
  if (!at) return 'its deadline';
  const d = typeof at === 'string' ? new Date(at) : at;
  return Number.isNaN(d.getTime()) ? String(at) : `${d.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

/** What an order event's data gives the words: the order as its party sees it, trimmed to what they say. */
export interface OrderFacts {
  id: number;
  outlet?: { name?: string; domain?: string } | null;
  offer?: { title?: string } | null;
  money?: string | null;
  live_url?: string | null;
  deadline?: string | Date | null;
}

const outletOf = (o: OrderFacts) => o.outlet?.name ?? o.outlet?.domain ?? 'the outlet';
const what = (o: OrderFacts) => `"${o.offer?.title ?? 'the offer'}" on ${outletOf(o)}${o.outlet?.domain && o.outlet.name ? ` (${o.outlet.domain})` : ''}`;
const openOrder = (o: OrderFacts) => ({ label: 'Open the order', path: `/orders/${o.id}` });

export function orderWords(kind: 'order_to_accept' | 'content_in' | 'draft_ready' | 'placement_live' | 'link_lost', o: OrderFacts): NoticeWords {
  const by = when(o.deadline);
  switch (kind) {
    case 'order_to_accept':
      return {
        subject: `New order #${o.id} to accept: ${outletOf(o)}`,
        paragraphs: [`A buyer ordered ${what(o)}${o.money ? `, paying you ${o.money}` : ''}.`, `Accept or decline it by ${by}; after that it expires.`],
        action: openOrder(o),
        line: `Order #${o.id} on ${outletOf(o)}: a new order to accept by ${by}`,
      };
    case 'content_in':
      return {
        subject: `Content in for order #${o.id}: ${outletOf(o)}`,
        paragraphs: [`The buyer sent the article for ${what(o)}.`, `Accept or decline the order by ${by}; after that it expires.`],
        action: openOrder(o),
        line: `Order #${o.id} on ${outletOf(o)}: the content is in, accept or decline by ${by}`,
      };
    case 'draft_ready':
      return {
        subject: `A draft to review for order #${o.id}: ${outletOf(o)}`,
        paragraphs: [`The publisher submitted a draft for ${what(o)}.`, `Approve it or ask for changes by ${by}; after that it is approved automatically.`],
        action: { label: 'Review the draft', path: `/orders/${o.id}` },
        line: `Order #${o.id} on ${outletOf(o)}: a draft to review by ${by}`,
      };
    case 'placement_live':
      return {
        subject: `Placement live to review for order #${o.id}: ${outletOf(o)}`,
        paragraphs: [
          `The publisher published ${what(o)}${o.live_url ? ` at ${o.live_url}` : ''}.`,
          `Review and approve it by ${by}; after that it is approved, and paid, automatically if its link check passed.`,
        ],
        action: { label: 'Review the placement', path: `/orders/${o.id}` },
        line: `Order #${o.id} on ${outletOf(o)}: a placement live to review by ${by}`,
      };
    case 'link_lost':
      return {
        subject: `Link lost on order #${o.id}: ${outletOf(o)}`,
        paragraphs: [
          `A check of ${o.live_url ?? 'the live page'} no longer finds the link of ${what(o)}.`,
          `Put it back by ${by}; after that the buyer is refunded.`,
        ],
        action: openOrder(o),
        line: `Order #${o.id} on ${outletOf(o)}: the link is lost, restore it by ${by}`,
      };
  }
}

export function deadlineWords(o: OrderFacts & { status: OrderStatus }): NoticeWords {
  const asks = nextStepOf(o.status) ?? { ask: 'act on the order', after: 'its deadline applies' };
  const by = when(o.deadline);
  return {
    subject: `Deadline in 24 hours: order #${o.id}, ${outletOf(o)}`,
    paragraphs: [`Order #${o.id}, ${what(o)}, waits for you: ${asks.ask} by ${by}.`, `After that, ${asks.after}.`],
    action: openOrder(o),
    line: `Order #${o.id} on ${outletOf(o)}: ${asks.ask} by ${by}`,
  };
}

export function approvalWords(a: { id: number; action?: string; total_formatted?: string; requested_by?: { key_name?: string }; expires_at?: string }): NoticeWords {
  const who = a.requested_by?.key_name ?? 'A key';
  const doing = a.action === 'approve_placement' ? 'approve and pay a placement' : 'place an order';
  const total = a.total_formatted ?? '';
  return {
    subject: `Approval needed: ${who} asks to spend ${total}`.trim(),
    paragraphs: [`${who} asks to ${doing}${total ? ` for ${total}` : ''}.`, `Approve or decline it by ${when(a.expires_at)}; after that the request expires.`],
    action: { label: 'Open the request', path: `/approvals/${a.id}` },
    line: `Approval request #${a.id}: ${who}, ${total}, by ${when(a.expires_at)}`,
  };
}

export function budgetWords(b: {
  key?: { id?: number; name?: string; prefix?: string };
  window?: string;
  limit_formatted?: string;
  resets_at?: string;
  byApp: boolean;
}): NoticeWords {
  const name = b.key?.name ?? 'a key';
  const period = b.window === 'month' ? 'monthly' : 'daily';
  return {
    subject: `Budget used up: ${name}`,
    paragraphs: [
      `The ${period} budget${b.limit_formatted ? ` of ${b.limit_formatted}` : ''} of ${b.byApp ? 'the connected app' : 'the key'} ${name}${b.key?.prefix ? ` (${b.key.prefix}…)` : ''} is used up: it places no more orders until ${when(b.resets_at)}.`,
      'Raise the budget if it should go on sooner.',
    ],
    // A connected app's budget is changed on Connected apps; a key's on its page.
    action: b.byApp ? { label: 'Open Connected apps', path: '/settings/connected-apps' } : { label: 'Open the key', path: `/settings/api-keys/${b.key?.id ?? ''}` },
    line: `${name}: the ${period} budget is used up until ${when(b.resets_at)}`,
  };
}

export function webhookWords(e: { id?: number; url?: string }): NoticeWords {
  const url = e.url ?? 'an endpoint';
  return {
    subject: `Webhook endpoint disabled: ${url}`,
    paragraphs: [`Deliveries to ${url} kept failing, so the endpoint was disabled: it gets no more events.`, 'Its delivery log shows what went wrong. Add the endpoint again once it answers.'],
    action: { label: 'Open the delivery log', path: `/settings/webhooks/${e.id ?? ''}/deliveries` },
    line: `Webhook endpoint ${url} was disabled`,
  };
}

export function keyExpiryWords(k: { id: number; name: string; prefix: string; expires_at: Date }): NoticeWords {
  return {
    subject: `Key expiring on ${when(k.expires_at).slice(0, 10)}: ${k.name}`,
    paragraphs: [`The key ${k.name} (${k.prefix}…) stops working at ${when(k.expires_at)}.`, 'Roll it on its page for a new key with the same abilities and budget, or change its expiry.'],
    action: { label: 'Open the key', path: `/settings/api-keys/${k.id}` },
    line: `Key ${k.name} (${k.prefix}…) expires at ${when(k.expires_at)}`,
  };
}

/** `balance.topped_up`: the money of a top-up request arrived and is in the balance (docs/billing.md). */
export function fundsWords(e: { amount_formatted?: string; balance_formatted?: string; top_up?: { id?: number; reference?: string; amount_formatted?: string; received_formatted?: string | null } }): NoticeWords {
  const reference = e.top_up?.reference ?? 'your top-up';
  const amount = e.amount_formatted ?? e.top_up?.received_formatted ?? '';
  const asked = e.top_up?.amount_formatted;
  const differs = asked && e.top_up?.received_formatted && asked !== e.top_up.received_formatted;
  return {
    subject: `Funds added: ${amount} (${reference})`.trim(),
    paragraphs: [
      `We received the payment for ${reference} and added ${amount} to the available balance${e.balance_formatted ? `, which is now ${e.balance_formatted}` : ''}.`,
      ...(differs ? [`The request was for ${asked}; ${e.top_up!.received_formatted} arrived, and that is what was added.`] : []),
    ],
    action: { label: 'Open the top-up', path: `/funds/${e.top_up?.id ?? ''}` },
    line: `${reference}: ${amount} added to the balance`,
  };
}

/** `payout.*`: a publisher's payout asked for, sent, or failed (docs/billing.md). */
export function payoutWords(
  type: 'payout.requested' | 'payout.sent' | 'payout.failed',
  e: { payable_formatted?: string; payout?: { id?: number; reference?: string; amount_formatted?: string; destination?: string; sent_reference?: string | null; failure_reason?: string | null } },
): NoticeWords {
  const p = e.payout ?? {};
  const reference = p.reference ?? 'your payout';
  const amount = p.amount_formatted ?? '';
  const action = { label: 'Open the payout', path: `/payouts/${p.id ?? ''}` };
  if (type === 'payout.requested') {
    return {
      subject: `Payout requested: ${amount} (${reference})`,
      paragraphs: [`A payout of ${amount} was asked for, to ${p.destination ?? 'the account on file'}. The operator sends it; you get a mail when it is sent.`],
      action,
      line: `${reference}: a payout of ${amount} requested`,
    };
  }
  if (type === 'payout.sent') {
    return {
      subject: `Payout sent: ${amount} (${reference})`,
      paragraphs: [`The payout ${reference} of ${amount} was sent to ${p.destination ?? 'the account on file'}${p.sent_reference ? `, with the bank's reference ${p.sent_reference}` : ''}.`],
      action,
      line: `${reference}: ${amount} sent`,
    };
  }
  return {
    subject: `Payout failed: ${amount} (${reference})`,
    paragraphs: [
      `The payout ${reference} of ${amount} could not be sent${p.failure_reason ? `: ${p.failure_reason}` : '.'}`,
      `The money is back in the payable balance${e.payable_formatted ? ` (now ${e.payable_formatted})` : ''}. Check where you are paid, then ask again.`,
    ],
    action,
    line: `${reference}: the payout of ${amount} failed`,
  };
}
