import type { FastifyInstance } from 'fastify';
import { consoleBaseUrl } from '../../config.js';
import { listApprovals } from '../../domain/approvals/approval-read.js';
import { eventsNeedingAction } from '../../domain/orders/action-needed.js';
import { latestEvents } from '../../domain/events/feed.js';
import { listOrderSummaries } from '../../domain/orders/order-read.js';
import type { OrderSummary } from '../../domain/orders/order-view.js';
import { spendingPerDay } from '../../domain/orders/spending.js';
import { publisherMe } from '../../domain/publishers/publisher-service.js';
import type { Party } from '../../domain/parties.js';
import { type ConsoleDeps, page, targetOf } from '../context.js';
import { spendingChart } from '../chart-specs.js';
import { moment } from '../format.js';
import { actionWords, eventWords, statusWords } from '../words.js';
import { approvalRow } from './approvals.js';
import { payoutFigures } from './orders.js';

const ORDERS_SHOWN = 20;
const RECENT_SHOWN = 10;
const EVENTS_SHOWN = 10;
const NEEDING_SHOWN = 30;
const APPROVALS_SHOWN = 10;

/** A "Needs your action" row: what happened, the order, and what it asks of this side now. */
const needingRow = (href: string, party: Party, now: number) => (e: { created_at: string; type: string; order_id: number; data: unknown }) => ({
  created_at: moment(e.created_at, now),
  type: eventWords(e.type),
  action: actionWords(e.type, (e.data as { status?: string } | null)?.status, party),
  order: e.order_id,
  href: `${href}/orders/${e.order_id}`,
});

type EventData = { id?: number; order_id?: number; key?: { id?: number } } | null;

/** Where an event's row links: its order, approval request, key or endpoint's deliveries; a top-up has no page. */
function eventLink(href: string, type: string, data: EventData): { href: string; label: string } | null {
  if (type === 'order.message_received' && data?.order_id) return { href: `${href}/orders/${data.order_id}`, label: `Order ${data.order_id}` };
  if (type.startsWith('order.') && data?.id) return { href: `${href}/orders/${data.id}`, label: `Order ${data.id}` };
  if (type.startsWith('approval_request.') && data?.id) return { href: `${href}/approvals/${data.id}`, label: `Request ${data.id}` };
  if (type === 'key.budget_exhausted' && data?.key?.id) return { href: `${href}/settings/api-keys/${data.key.id}`, label: 'The key' };
  if (type === 'webhook_endpoint.disabled' && data?.id) return { href: `${href}/settings/webhooks/${data.id}/deliveries`, label: 'Its deliveries' };
  return null;
}

const eventRow = (href: string, now: number) => (e: { created_at: string; type: string; data: unknown }) => ({
  created_at: moment(e.created_at, now),
  type: eventWords(e.type),
  link: eventLink(href, e.type, e.data as EventData),
});

const orderRow = (now: number) => (o: OrderSummary) => ({
  id: o.id,
  href: `orders/${o.id}`,
  status: statusWords(o.status),
  turn: o.your_turn ? 'Yours' : 'Theirs',
  outlet: o.outlet.name,
  price: o.money_formatted,
  deadline: moment(o.deadline, now),
});

/** The overview: money, orders whose turn it is, the latest events, read by the same functions as the API. */
export async function overviewPages(app: FastifyInstance, { deps }: { deps: ConsoleDeps }) {
  app.get('/', async (request, reply) => {
    const target = targetOf(request);
    const now = deps.clock.now();
    if (target.kind === 'workspace') {
      const viewer = { party: 'buyer' as const, workspaceId: target.id };
      const [summary, settings, spending, orders, recent, events, needing, approvals] = await Promise.all([
        deps.workspaces.summary(target.id),
        deps.workspaces.settings.get(target.id),
        spendingPerDay(deps.pool, { workspaceId: target.id }, now),
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
        moneyLabel: 'Price',
        spending: spendingChart('spending', spending, settings),
        orders: orders.items.map(orderRow(now)),
        ordersTotal: orders.total,
        recent: recent.items.map(orderRow(now)),
        recentTotal: recent.total,
        events: events.reverse().map(eventRow(target.href, now)),
        needing: needing.map(needingRow(target.href, 'buyer', now)),
        approvals: approvals.items.map((v) => approvalRow(target, v, now)),
        approvalsTotal: approvals.total,
      });
    }
    const viewer = { party: 'publisher' as const, publisherId: target.id };
    const [me, orders, recent, events, needing] = await Promise.all([
      publisherMe(deps.pool, target.id),
      listOrderSummaries(deps.pool, viewer, { yourTurn: true }, 1, ORDERS_SHOWN),
      listOrderSummaries(deps.pool, viewer, {}, 1, RECENT_SHOWN),
      latestEvents(deps.pool, viewer, {}, EVENTS_SHOWN),
      eventsNeedingAction(deps.pool, viewer, now, NEEDING_SHOWN),
    ]);
    return page(request, reply, 'overview', {
      title: target.name,
      section: 'overview',
      figures: payoutFigures(me),
      moneyLabel: 'Payout',
      spending: null,
      orders: orders.items.map(orderRow(now)),
      ordersTotal: orders.total,
      recent: recent.items.map(orderRow(now)),
      recentTotal: recent.total,
      events: events.reverse().map(eventRow(target.href, now)),
      needing: needing.map(needingRow(target.href, 'publisher', now)),
      approvals: [],
      approvalsTotal: 0,
    });
  });

  app.get('/settings', async (request, reply) => page(request, reply, 'settings', { title: 'Settings', section: 'settings' }));
}
