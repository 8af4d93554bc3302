import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { approvalOfOrder } from '../../domain/approvals/approval-read.js';
import { allows } from '../../domain/orders/action-states.js';
import { checksAgainst, TITLE_LENGTH } from '../../domain/orders/content-checks.js';
import { getContentRules, getOrder, listOrderSummaries, type Viewer } from '../../domain/orders/order-read.js';
import type { BuyerOrderView, OrderSummary, PublisherOrderView } from '../../domain/orders/order-view.js';
import { orderStatuses, type OrderStatus } from '../../domain/orders/states.js';
import { orderTimeline } from '../../domain/orders/order-timeline.js';
import { payoutsPerWeek } from '../../domain/publishers/payouts-per-week.js';
import { publisherMe } from '../../domain/publishers/publisher-service.js';
import { can } from '../../domain/users/permissions.js';
import { type ConsoleDeps, type ConsoleTarget, page, pageNumber, pathId, targetOf } from '../context.js';
import { orderTimelineChart, payoutsChart } from '../chart-specs.js';
import { moment } from '../format.js';
import { renderMarkdown } from '../markdown.js';
import { STATUS_WORDS, statusWords } from '../words.js';

// The orders desk: a workspace's orders as its buyer sees them (/app/w/{id}/orders) and a
// publisher account's as the publisher does (/app/p/{id}/orders). An order's page reads it as
// GET /api/v1/orders/{id} does (getOrder); the tables read listOrderSummaries, the orders of
// GET /api/v1/orders without their texts. Actions are in order-actions.ts.

const PER_PAGE = 25;
const MINE_SHOWN = 50;

export const viewerOf = (t: ConsoleTarget): Viewer => (t.kind === 'workspace' ? { party: 'buyer', workspaceId: t.id } : { party: 'publisher', publisherId: t.id });


const DEADLINES: Record<string, string> = { respond_by: 'Respond by', deliver_by: 'Deliver by', review_by: 'Review by', restore_by: 'Restore by' };

type AnyOrder = BuyerOrderView | PublisherOrderView;
const moneyOf = (o: AnyOrder) => ('price_formatted' in o ? o.price_formatted : o.payout_formatted);

/** An order id from the path; anything else is an order that does not exist. */
export function orderIdParam(request: FastifyRequest): number {
  return pathId((request.params as { orderId: string }).orderId, 'Order');
}

function row(target: ConsoleTarget, o: OrderSummary, now: number) {
  return {
    id: o.id,
    href: `${target.href}/orders/${o.id}`,
    status: statusWords(o.status),
    turn: o.your_turn ? 'Yours' : o.turn === null ? 'Finished' : 'Theirs',
    outlet: o.outlet.name,
    money: o.money_formatted,
    deadline: moment(o.deadline, now),
    updated: moment(o.updated_at, now),
  };
}

/** The publisher's payouts, pending (under guarantee) and payable: "Payout" is the publisher's amount on every page. */
export const payoutFigures = (me: { pending_formatted: string; payable_formatted: string }) => [
  { label: 'Payouts pending', value: me.pending_formatted },
  { label: 'Payouts payable', value: me.payable_formatted },
];

/** The publisher's balances, shown on its desk. */
async function publisherFigures(deps: ConsoleDeps, target: ConsoleTarget) {
  if (target.kind !== 'publisher') return [];
  return payoutFigures(await publisherMe(deps.pool, target.id));
}

export interface OrderPageExtras {
  status?: number;
  notice?: string;
  problem?: string;
  /** The form that was sent and failed, its fields as sent and what is wrong with them. */
  failed?: { form: string; values: Record<string, string>; errors: Record<string, string[]> };
  /** A preview of the article being written, rendered as the other party will see it. */
  preview?: { form: string; values: { title: string; body: string }; html: string };
}

/**
 * What the order asks of the article the person may write now (the offer's word range and links,
 * the link and its text), and a preview's checks against it: `checksAgainst`, the function that
 * checks a submitted version, so the preview shows what submitting will store.
 */
async function writingOf(deps: ConsoleDeps, viewer: Viewer, orderId: number, preview: OrderPageExtras['preview']) {
  const rules = await getContentRules(deps.pool, viewer, orderId);
  return {
    rules: { ...rules, min_words: rules.min_words.toLocaleString('en-US'), max_words: rules.max_words.toLocaleString('en-US'), title: TITLE_LENGTH },
    checks: preview ? checksAgainst(rules, preview.values) : null,
  };
}

/** The order page: everything both parties see, and the forms of the actions the person may take now. */
export async function orderPage(deps: ConsoleDeps, request: FastifyRequest, reply: FastifyReply, orderId: number, extras: OrderPageExtras = {}) {
  const target = targetOf(request);
  const viewer = viewerOf(target);
  // An order placed by an approved request names who approved it, on the buyer's side only.
  const [order, figures, approval, timeline] = await Promise.all([
    getOrder(deps.pool, viewer, orderId),
    publisherFigures(deps, target),
    target.kind === 'workspace' ? approvalOfOrder(deps.pool, target.id, orderId) : null,
    orderTimeline(deps.pool, viewer, orderId),
  ]);
  const mayAct = can(target.role, 'manage_orders');
  const buyer = target.kind === 'workspace';
  const offer = (action: Parameters<typeof allows>[0]) => mayAct && allows(action, order.status);
  const writing = offer(buyer ? 'submitContent' : 'submitDraft') ? await writingOf(deps, viewer, orderId, extras.preview) : null;
  const base = `${target.href}/orders/${order.id}`;
  if (extras.status) reply.code(extras.status);
  const now = deps.clock.now();
  const content = order.content && {
    ...order.content,
    submitted_at: moment(order.content.submitted_at, now),
    by: order.content.submitted_by === (buyer ? 'buyer' : 'publisher') ? 'you' : order.content.submitted_by,
    html: renderMarkdown(order.content.body),
  };
  return page(request, reply, 'order', {
    title: `Order ${order.id}`,
    section: 'orders',
    buyer,
    base,
    back: `${target.href}/orders`,
    order: {
      ...order,
      statusLabel: statusWords(order.status),
      turnLabel: order.your_turn ? 'Yours' : order.turn === null ? 'Nobody’s: the order is finished' : `The ${order.turn}’s`,
      money: moneyOf(order),
      created: moment(order.created_at, now),
      deadlines: Object.entries(order.deadlines)
        .filter(([, v]) => v)
        .map(([k, v]) => ({ label: DEADLINES[k], at: moment(v, now) })),
      live_checked: moment(order.live_checked_at, now, 'Not yet'),
      guarantee_ends: moment(order.guarantee_ends_at, now),
      messages: (order.messages ?? []).map((m) => ({ ...m, at: moment(m.created_at, now), from: m.author === (buyer ? 'buyer' : 'publisher') ? 'You' : m.author === 'buyer' ? 'Buyer' : 'Publisher' })),
    },
    content,
    figures,
    timeline: orderTimelineChart('timeline', timeline, now),
    approval: approval && {
      by: approval.decided_by ? approval.decided_by.name : 'a former member',
      at: moment(approval.decided_at, now),
      href: `${target.href}/approvals/${approval.request_id}`,
      requestId: approval.request_id,
    },
    actions: {
      accept: !buyer && offer('accept'),
      decline: !buyer && offer('decline'),
      draft: !buyer && offer('submitDraft'),
      publish: !buyer && offer('publish'),
      recheck: !buyer && offer('recheck'),
      content: buyer && offer('submitContent'),
      approveDraft: buyer && offer('approveDraft'),
      approve: buyer && offer('approvePlacement'),
      maySpend: can(target.role, 'spend'),
      cancel: buyer && offer('cancel'),
      message: mayAct,
    },
    failed: extras.failed ?? { form: '', values: {}, errors: {} },
    preview: extras.preview ?? null,
    writing,
    ...(extras.notice ? { notice: extras.notice } : {}),
    ...(extras.problem ? { problem: extras.problem } : {}),
  });
}

export async function orderPages(app: FastifyInstance, { deps }: { deps: ConsoleDeps }) {
  app.get('/orders', async (request, reply) => {
    const target = targetOf(request);
    const viewer = viewerOf(target);
    const query = (request.query ?? {}) as Record<string, unknown>;
    const status = orderStatuses.find((s) => s === query.status) as OrderStatus | undefined;
    const pageNo = pageNumber(query.page);
    const filter = status ? { status } : {};
    const now = deps.clock.now();
    const [mine, rest, figures, payouts] = await Promise.all([
      listOrderSummaries(deps.pool, viewer, { ...filter, yourTurn: true }, 1, MINE_SHOWN),
      listOrderSummaries(deps.pool, viewer, { ...filter, yourTurn: false }, pageNo, PER_PAGE),
      publisherFigures(deps, target),
      target.kind === 'publisher' ? payoutsPerWeek(deps.pool, target.id, now) : null,
    ]);
    const pages = Math.max(1, Math.ceil(rest.total / PER_PAGE));
    const link = (n: number) => `${target.href}/orders?${status ? `status=${status}&` : ''}page=${n}`;
    return page(request, reply, 'orders', {
      title: target.kind === 'workspace' ? 'Orders' : 'Orders desk',
      heading: target.kind === 'workspace' ? 'Orders' : 'Orders desk',
      section: 'orders',
      figures,
      payouts: payouts && payoutsChart('payouts', payouts),
      statuses: orderStatuses.map((s) => ({ value: s, label: STATUS_WORDS[s], selected: s === status })),
      status: status ?? '',
      mine: mine.items.map((o) => row(target, o, now)),
      mineTotal: mine.total,
      rest: rest.items.map((o) => row(target, o, now)),
      restTotal: rest.total,
      pageNo,
      pages,
      prev: pageNo > 1 ? link(pageNo - 1) : null,
      next: pageNo < pages ? link(pageNo + 1) : null,
      moneyLabel: target.kind === 'workspace' ? 'Price' : 'Payout',
      placeHref: target.kind === 'workspace' && can(target.role, 'spend') ? `${target.href}/outlets` : null,
      csvHref: `${target.href}/orders.csv${status ? `?status=${status}` : ''}`,
    });
  });

  app.get('/orders/:orderId', async (request, reply) => {
    const query = (request.query ?? {}) as Record<string, unknown>;
    const notice = typeof query.done === 'string' ? NOTICES[query.done] : undefined;
    return orderPage(deps, request, reply, orderIdParam(request), notice ? { notice } : {});
  });
}

/** What the page says after an action succeeded (the action redirects here with ?done=…). */
export const NOTICES: Record<string, string> = {
  accepted: 'Accepted.',
  declined: 'Declined: the buyer has been refunded.',
  draft: 'Draft submitted.',
  published: 'Published: the link is checked and the buyer reviews the placement.',
  rechecked: 'Checked again: the results are below.',
  message: 'Message sent.',
  content: 'Content submitted: the publisher reviews it.',
  'draft-approved': 'Draft approved: the publisher publishes it.',
  approved: 'Placement approved: the order is completed and the publisher paid.',
  cancelled: 'Cancelled: the price is back in your balance.',
  placed: 'Placed: the price is held from your balance until you approve the placement (or the order is cancelled, declined or expires).',
};
