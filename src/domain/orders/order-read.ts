import type pg from 'pg';
import type { Db } from '../../db/handle.js';
import { notFound } from '../errors.js';
import type { ContentRules } from './content-checks.js';
import { type BuyerOrderView, type MessageRow, messageView, type OrderRow, type OrderSummary, orderSummary, type OrderSummaryRow, orderView, type PublisherOrderView } from './order-view.js';
import type { Viewer } from '../parties.js';
import { type OrderStatus, type Party, turnOf, orderStatuses } from './states.js';


export type { Viewer };

const SELECT = `
  SELECT o.id, o.workspace_id, o.publisher_id, o.status, o.project_id, o.price, o.publisher_price_cents, o.target_url, o.anchor_text, o.brief,
         o.live_url, o.decline_reason, o.deadline_at, o.created_at, o.updated_at,
         o.live_checks, o.live_checked_at, o.guarantee_ends_at,
         ol.id AS outlet_id, ol.name AS outlet_name, ol.domain AS outlet_domain,
         f.id AS offer_id, f.format, f.title AS offer_title,
         c.version, c.title AS content_title, c.body AS content_body, c.submitted_by, c.submitted_at, c.checks,
         (SELECT count(*) FROM order_messages m WHERE m.order_id = o.id)::int AS messages_count,
         w.currency, fx.per_usd::float8 AS per_usd
    FROM orders o
    JOIN outlets ol ON ol.id = o.outlet_id
    JOIN offers f ON f.id = o.offer_id
    JOIN workspaces w ON w.id = o.workspace_id
    JOIN fx_rates fx ON fx.currency = w.currency
    LEFT JOIN LATERAL (SELECT version, title, body, submitted_by, submitted_at, checks FROM order_contents
                        WHERE order_id = o.id ORDER BY version DESC LIMIT 1) c ON true`;

function ownerClause(viewer: Viewer, param: string): string {
  return viewer.party === 'buyer' ? `o.workspace_id = ${param}` : `o.publisher_id = ${param}`;
}
const ownerId = (viewer: Viewer) => (viewer.party === 'buyer' ? viewer.workspaceId : viewer.publisherId);

/**
 * What the order asks of its article (the link, the anchor text, and the offer's limits as they
 * were when it was placed), if the viewer may see the order; otherwise 404. The content checks
 * read these when content is submitted; a form shows them, and its preview checks against them.
 */
export async function getContentRules(q: Db, viewer: Viewer, orderId: number): Promise<ContentRules> {
  const { rows } = await q.query<ContentRules>({
    name: `order_content_rules_${viewer.party}`,
    text: `SELECT o.target_url, o.anchor_text, o.min_words, o.max_words, o.max_links FROM orders o WHERE o.id = $1 AND ${ownerClause(viewer, '$2')}`,
    values: [orderId, ownerId(viewer)],
  });
  if (!rows[0]) throw notFound('Order');
  return rows[0];
}

async function messagesOf(q: Db, orderId: number): Promise<MessageRow[]> {
  const { rows } = await q.query<MessageRow>({
    name: 'order_messages_last_100',
    text: `SELECT * FROM (SELECT id, body, author, created_at FROM order_messages WHERE order_id = $1
             ORDER BY id DESC LIMIT 100) m ORDER BY id`,
    values: [orderId],
  });
  return rows;
}

/** An order's messages, oldest first, a page at a time, if the viewer may see the order; otherwise 404. */
export async function listMessages(q: Db, viewer: Viewer, orderId: number, page: number, perPage: number) {
  const { rows } = await q.query<{ total: number }>({
    name: `order_messages_count_${viewer.party}`,
    text: `SELECT (SELECT count(*) FROM order_messages m WHERE m.order_id = o.id)::int AS total
             FROM orders o WHERE o.id = $1 AND ${ownerClause(viewer, '$2')}`,
    values: [orderId, ownerId(viewer)],
  });
  if (!rows[0]) throw notFound('Order');
  const messages = await q.query<MessageRow>({
    name: 'order_messages_page',
    text: 'SELECT id, body, author, created_at FROM order_messages WHERE order_id = $1 ORDER BY id LIMIT $2 OFFSET $3',
    values: [orderId, perPage, (page - 1) * perPage],
  });
  return { items: messages.rows.map(messageView), total: rows[0].total };
}

/** One order with its messages, if the viewer may see it; otherwise 404. */
export async function getOrder(q: Db, viewer: Viewer & { party: 'buyer' }, orderId: number): Promise<BuyerOrderView>;
export async function getOrder(q: Db, viewer: Viewer & { party: 'publisher' }, orderId: number): Promise<PublisherOrderView>;
export async function getOrder(q: Db, viewer: Viewer, orderId: number): Promise<BuyerOrderView | PublisherOrderView>;
export async function getOrder(q: Db, viewer: Viewer, orderId: number) {
  const { rows } = await q.query<OrderRow>({
    name: `order_get_${viewer.party}`,
    text: `${SELECT} WHERE o.id = $1 AND ${ownerClause(viewer, '$2')}`,
    values: [orderId, ownerId(viewer)],
  });
  if (!rows[0]) throw notFound('Order');
  return orderView(rows[0], viewer.party, await messagesOf(q, orderId));
}

/** Several orders by id, in id order, for the response of a placement. */
export async function getOrders(q: Db, viewer: Viewer & { party: 'buyer' }, ids: number[]): Promise<BuyerOrderView[]> {
  const { rows } = await q.query<OrderRow>({
    name: `order_get_many_${viewer.party}`,
    text: `${SELECT} WHERE o.id = ANY($1::bigint[]) AND ${ownerClause(viewer, '$2')} ORDER BY o.id`,
    values: [ids, ownerId(viewer)],
  });
  return rows.map((r) => orderView(r, 'buyer'));
}

export interface OrderViews {
  workspaceId: number;
  publisherId: number;
  buyer: BuyerOrderView;
  publisher: PublisherOrderView;
}

/**
 * Both parties' views of several orders as a single-order read shows them (with the last 100
 * messages), in id order, whoever owns them: for events, which each party receives in its own view.
 */
export async function getOrderViews(q: Db, ids: number[]): Promise<OrderViews[]> {
  const [orders, messages] = await Promise.all([
    q.query<OrderRow & { workspace_id: number; publisher_id: number }>({
      name: 'order_views_many',
      text: `${SELECT} WHERE o.id = ANY($1::bigint[]) ORDER BY o.id`,
      values: [ids],
    }),
    q.query<MessageRow & { order_id: number }>({
      name: 'order_views_messages',
      text: `SELECT order_id, id, body, author, created_at FROM (
               SELECT order_id, id, body, author, created_at, row_number() OVER (PARTITION BY order_id ORDER BY id DESC) AS n
                 FROM order_messages WHERE order_id = ANY($1::bigint[])) m
              WHERE n <= 100 ORDER BY order_id, id`,
      values: [ids],
    }),
  ]);
  const byOrder = new Map<number, MessageRow[]>();
  for (const m of messages.rows) {
    const list = byOrder.get(m.order_id) ?? [];
    list.push({ id: m.id, body: m.body, author: m.author, created_at: m.created_at });
    byOrder.set(m.order_id, list);
  }
  return orders.rows.map((r) => ({
    workspaceId: r.workspace_id,
    publisherId: r.publisher_id,
    buyer: orderView(r, 'buyer', byOrder.get(r.id) ?? []),
    publisher: orderView(r, 'publisher', byOrder.get(r.id) ?? []),
  }));
}

export interface OrderListFilters {
  status?: OrderStatus;
  yourTurn?: boolean;
}

/** The viewer's orders, newest first. */
export async function listOrders(q: Db, viewer: Viewer & { party: 'buyer' }, f: OrderListFilters, page: number, perPage: number): Promise<{ items: BuyerOrderView[]; total: number }>;
export async function listOrders(q: Db, viewer: Viewer & { party: 'publisher' }, f: OrderListFilters, page: number, perPage: number): Promise<{ items: PublisherOrderView[]; total: number }>;
export async function listOrders(q: Db, viewer: Viewer, f: OrderListFilters, page: number, perPage: number) {
  const { rows, total } = await listPage<OrderRow>(q, 'order_list', SELECT, viewer, f, page, perPage);
  return { items: rows.map((r) => orderView(r, viewer.party)), total };
}

const SUMMARY_SELECT = `
  SELECT o.id, o.status, o.price, o.publisher_price_cents, o.deadline_at, o.updated_at,
         ol.id AS outlet_id, ol.name AS outlet_name, ol.domain AS outlet_domain, w.currency, fx.per_usd::float8 AS per_usd
    FROM orders o
    JOIN outlets ol ON ol.id = o.outlet_id
    JOIN workspaces w ON w.id = o.workspace_id
    JOIN fx_rates fx ON fx.currency = w.currency`;

/**
 * The viewer's orders as the console's tables list them, newest first, with the filters of
 * `listOrders`: without the content (up to 200,000 characters) and the brief (up to 10,000), which
 * a list does not show (60 orders with long articles took 30–41 ms of CPU a page with them).
 */
export async function listOrderSummaries(q: Db, viewer: Viewer, f: OrderListFilters, page: number, perPage: number): Promise<{ items: OrderSummary[]; total: number }> {
  const { rows, total } = await listPage<OrderSummaryRow>(q, 'order_summaries', SUMMARY_SELECT, viewer, f, page, perPage);
  return { items: rows.map((r) => orderSummary(r, viewer.party)), total };
}

/** The WHERE clause of the viewer's orders matching `f`, its values, and a name for its shape. */
function orderFilter(viewer: Viewer, f: OrderListFilters) {
  const values: unknown[] = [ownerId(viewer)];
  const where = [ownerClause(viewer, '$1')];
  if (f.status) {
    values.push(f.status);
    where.push(`o.status = $${values.length}::order_status`);
  }
  if (f.yourTurn !== undefined) {
    const mine = orderStatuses.filter((s) => turnOf[s] === (viewer.party satisfies Party));
    values.push(mine);
    where.push(`o.status ${f.yourTurn ? '=' : '<>'} ${f.yourTurn ? 'ANY' : 'ALL'}($${values.length}::order_status[])`);
  }
  // Every distinct statement text needs its own name: pg refuses to re-prepare a name differently.
  const shape = `${viewer.party}_${f.status ? 's' : ''}${f.yourTurn === undefined ? '' : f.yourTurn ? 'mine' : 'theirs'}`;
  return { values, where, shape };
}

/** One page of `select`'s rows for the viewer's orders matching `f`, newest first, and how many match. */
async function listPage<R extends pg.QueryResultRow>(q: Db, name: string, select: string, viewer: Viewer, f: OrderListFilters, page: number, perPage: number) {
  const { values, where, shape } = orderFilter(viewer, f);
  const countValues = [...values];
  values.push(perPage, (page - 1) * perPage);
  const [rows, count] = await Promise.all([
    q.query<R>({
      name: `${name}_${shape}`,
      text: `${select} WHERE ${where.join(' AND ')} ORDER BY o.id DESC LIMIT $${values.length - 1} OFFSET $${values.length}`,
      values,
    }),
    q.query<{ n: number }>({
      name: `order_count_${shape}`,
      text: `SELECT count(*)::int AS n FROM orders o WHERE ${where.join(' AND ')}`,
      values: countValues,
    }),
  ]);
  return { rows: rows.rows, total: count.rows[0]!.n };
}

/** How many orders an export reads a statement: enough to keep round trips few, small enough to hold little memory. */
export const EXPORT_BATCH = 200;

/**
 * Every order of the viewer matching `f`, newest first, as `listOrders` shows them, read in
 * batches by keyset (`o.id <` the last id read), never all at once: for the CSV exports, which
 * stream what this yields. Each batch is its own statement; an order placed while the export
 * runs has a higher id than the first batch's and is not in it.
 */
export function eachOrder(q: Db, viewer: Viewer & { party: 'buyer' }, f: OrderListFilters, batch?: number): AsyncGenerator<BuyerOrderView>;
export function eachOrder(q: Db, viewer: Viewer & { party: 'publisher' }, f: OrderListFilters, batch?: number): AsyncGenerator<PublisherOrderView>;
export async function* eachOrder(q: Db, viewer: Viewer, f: OrderListFilters, batch = EXPORT_BATCH): AsyncGenerator<BuyerOrderView | PublisherOrderView> {
  const { values, where, shape } = orderFilter(viewer, f);
  const text = `${SELECT} WHERE ${where.join(' AND ')} AND o.id < $${values.length + 1} ORDER BY o.id DESC LIMIT $${values.length + 2}`;
  let after = Number.MAX_SAFE_INTEGER;
  for (;;) {
    const { rows } = await q.query<OrderRow>({ name: `order_export_${shape}`, text, values: [...values, after, batch] });
    for (const r of rows) yield orderView(r, viewer.party);
    if (rows.length < batch) return;
    after = Number(rows[rows.length - 1]!.id);
  }
}
