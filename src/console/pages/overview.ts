import type { FastifyInstance } from 'fastify';
import { consoleBaseUrl } from '../../config.js';
import { listApprovals } from '../../domain/approvals/approval-read.js';
import { eventsNeedingAction } from '../../domain/orders/action-needed.js';
import { latestEvents } from '../../domain/events/feed.js';
import { listOrderSummaries } from '../../domain/orders/order-read.js';
import type { OrderSummary } from '../../domain/orders/order-view.js';
import { publisherMe } from '../../domain/publishers/publisher-service.js';
import { type ConsoleDeps, page, targetOf } from '../context.js';
import { approvalRow } from './approvals.js';

const ORDERS_SHOWN = 20;
const RECENT_SHOWN = 10;
const EVENTS_SHOWN = 10;
const NEEDING_SHOWN = 30;
const APPROVALS_SHOWN = 10;

const EVENT_WORDS: Record<string, string> = { 'order.message_received': 'New message' };
const needingRow = (href: string) => (e: { created_at: string; type: string; order_id: number }) => ({
  created_at: when(e.created_at),
  type: EVENT_WORDS[e.type] ?? e.type.replace('order.', '').replace(/_/g, ' '),
  order: e.order_id,
  href: `${href}/orders/${e.order_id}`,
});

type EventData = { id?: number; order_id?: number } | null;
const eventRow = (e: { created_at: string; type: string; data: unknown }) => {
  const data = e.data as EventData;
  return { created_at: when(e.created_at), type: e.type, order: data?.order_id ?? data?.id ?? '' };
};

const orderRow = (o: OrderSummary) => ({
  id: o.id,
  href: `orders/${o.id}`,
  status: o.status,
  turn: o.your_turn ? 'Yours' : 'Theirs',
  outlet: o.outlet.name,
  price: o.money_formatted,
  deadline: when(o.deadline),
});

function when(iso: string | null) {
  return iso ? iso.replace('T', ' ').replace(/(:\d\d)?Z$/, ' UTC') : '';
}

/** The overview: money, orders whose turn it is, the latest events, read by the same functions as the API. */
export async function overviewPages(app: FastifyInstance, { deps }: { deps: ConsoleDeps }) {
  app.get('/', async (request, reply) => {
    const target = targetOf(request);
    if (target.kind === 'workspace') {
      const viewer = { party: 'buyer' as const, workspaceId: target.id };
      const now = deps.clock.now();
      const [summary, orders, recent, events, needing, approvals] = await Promise.all([
        deps.workspaces.summary(target.id),
        listOrderSummaries(deps.pool, viewer, { yourTurn: true }, 1, ORDERS_SHOWN),
        listOrderSummaries(deps.pool, viewer, {}, 1, RECENT_SHOWN),
        latestEvents(deps.pool, viewer, {}, EVENTS_SHOWN),
        eventsNeedingAction(deps.pool, viewer, now, NEEDING_SHOWN),
        listApprovals(deps.pool, target.id, { status: 'pending' }, 1, APPROVALS_SHOWN, { now, baseUrl: consoleBaseUrl(deps.config) }),
      ]);
      return page(request, reply, 'overview', {
        title: target.name,
        section: 'overview',
        figures: [
          { label: 'Balance', value: summary.balance_formatted },
          { label: 'Held for orders', value: summary.held_formatted },
        ],
        orders: orders.items.map(orderRow),
        ordersTotal: orders.total,
        recent: recent.items.map(orderRow),
        recentTotal: recent.total,
        events: events.reverse().map(eventRow),
        needing: needing.map(needingRow(target.href)),
        approvals: approvals.items.map((v) => approvalRow(target, v)),
        approvalsTotal: approvals.total,
      });
    }
    const viewer = { party: 'publisher' as const, publisherId: target.id };
    const [me, orders, recent, events, needing] = await Promise.all([
      publisherMe(deps.pool, target.id),
      listOrderSummaries(deps.pool, viewer, { yourTurn: true }, 1, ORDERS_SHOWN),
      listOrderSummaries(deps.pool, viewer, {}, 1, RECENT_SHOWN),
      latestEvents(deps.pool, viewer, {}, EVENTS_SHOWN),
      eventsNeedingAction(deps.pool, viewer, deps.clock.now(), NEEDING_SHOWN),
    ]);
    return page(request, reply, 'overview', {
      title: target.name,
      section: 'overview',
      figures: [
        { label: 'Pending', value: me.pending_formatted },
        { label: 'Payable', value: me.payable_formatted },
      ],
      orders: orders.items.map(orderRow),
      ordersTotal: orders.total,
      recent: recent.items.map(orderRow),
      recentTotal: recent.total,
      events: events.reverse().map(eventRow),
      needing: needing.map(needingRow(target.href)),
      approvals: [],
      approvalsTotal: 0,
    });
  });

  app.get('/settings', async (request, reply) => page(request, reply, 'settings', { title: 'Settings', section: 'settings' }));
}
