import type pg from 'pg';
import type { Db } from '../../db/handle.js';
import { join, type Sql, sql, statement } from '../../db/sql.js';
import { notFound } from '../errors.js';
import type { ContentRules } from './content-checks.js';
import { type BuyerOrderView, type MessageRow, messageView, type OrderRow, type OrderSummary, orderSummary, type OrderSummaryRow, orderView, type PublisherOrderView } from './order-view.js';
import type { Viewer } from '../parties.js';
import { type OrderStatus, type Party, turnOf, orderStatuses } from './states.js';


export type { Viewer };

const SELECT = sql`
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

/** An order as `SELECT` reads it: its row, and whose it is. */
type OwnedOrderRow = OrderRow & { workspace_id: number; publisher_id: number };

/** The viewer's own orders (`o`): the buyer's workspace's, or the publisher's. */
const owned = (viewer: Viewer) => (viewer.party === 'buyer' ? sql`o.workspace_id = ${viewer.workspaceId}` : sql`o.publisher_id = ${viewer.publisherId}`);

/**
 * What the order asks of its article (the link, the anchor text, and the offer's limits as they
 * were when it was placed), if the viewer may see the order; otherwise 404. The content checks
 * read these when content is submitted; a form shows them, and its preview checks against them.
 */
export async function getContentRules(q: Db, viewer: Viewer, orderId: number): Promise<ContentRules> {
  const { rows } = await q.query<ContentRules>(
    statement(sql`SELECT o.target_url, o.anchor_text, o.min_words, o.max_words, o.max_links FROM orders o WHERE o.id = ${orderId} AND ${owned(viewer)}`, 'order_content_rules'),
  );
  if (!rows[0]) throw notFound('Order');
  return rows[0];
}

async function messagesOf(q: Db, orderId: number): Promise<MessageRow[]> {
  const { rows } = await q.query<MessageRow>(
    statement(
      sql`SELECT * FROM (SELECT id, body, author, created_at FROM order_messages WHERE order_id = ${orderId}
            ORDER BY id DESC LIMIT 100) m ORDER BY id`,
      'order_messages_last_100',
    ),
  );
  return rows;
}

/** An order's messages, oldest first, a page at a time, if the viewer may see the order; otherwise 404. */
export async function listMessages(q: Db, viewer: Viewer, orderId: number, page: number, perPage: number) {
  const { rows } = await q.query<{ total: number }>(
    statement(
      sql`SELECT (SELECT count(*) FROM order_messages m WHERE m.order_id = o.id)::int AS total
            FROM orders o WHERE o.id = ${orderId} AND ${owned(viewer)}`,
      'order_messages_count',
    ),
  );
  if (!rows[0]) throw notFound('Order');
  const messages = await q.query<MessageRow>(
    statement(sql`SELECT id, body, author, created_at FROM order_messages WHERE order_id = ${orderId} ORDER BY id LIMIT ${perPage} OFFSET ${(page - 1) * perPage}`, 'order_messages_page'),
  );
  return { items: messages.rows.map(messageView), total: rows[0].total };
}

/** One order with its messages, if the viewer may see it; otherwise 404. */
export async function getOrder(q: Db, viewer: Viewer & { party: 'buyer' }, orderId: number): Promise<BuyerOrderView>;
export async function getOrder(q: Db, viewer: Viewer & { party: 'publisher' }, orderId: number): Promise<PublisherOrderView>;
export async function getOrder(q: Db, viewer: Viewer, orderId: number): Promise<BuyerOrderView | PublisherOrderView>;
export async function getOrder(q: Db, viewer: Viewer, orderId: number) {
  const { rows } = await q.query<OwnedOrderRow>(statement(sql`${SELECT} WHERE o.id = ${orderId} AND ${owned(viewer)}`, 'order_get'));
  if (!rows[0]) throw notFound('Order');
  return orderView(rows[0], viewer.party, await messagesOf(q, orderId));
}

/** Several orders by id, in id order, for the response of a placement. */
export async function getOrders(q: Db, viewer: Viewer & { party: 'buyer' }, ids: number[]): Promise<BuyerOrderView[]> {
  const { rows } = await q.query<OwnedOrderRow>(statement(sql`${SELECT} WHERE o.id = ANY(${ids}::bigint[]) AND ${owned(viewer)} ORDER BY o.id`, 'order_get_many'));
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
    q.query<OwnedOrderRow>(statement(sql`${SELECT} WHERE o.id = ANY(${ids}::bigint[]) ORDER BY o.id`, 'order_views_many')),
    q.query<MessageRow & { order_id: number }>(
      statement(
        sql`SELECT order_id, id, body, author, created_at FROM (
              SELECT order_id, id, body, author, created_at, row_number() OVER (PARTITION BY order_id ORDER BY id DESC) AS n
                FROM order_messages WHERE order_id = ANY(${ids}::bigint[])) m
             WHERE n <= 100 ORDER BY order_id, id`,
        'order_views_messages',
      ),
    ),
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
  const { rows, total } = await listPage<OwnedOrderRow>(q, 'order_list', SELECT, viewer, f, page, perPage);
  return { items: rows.map((r) => orderView(r, viewer.party)), total };
}

const SUMMARY_SELECT = sql`
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

/** The viewer's orders matching `f`: the WHERE clause the list, its count and the export share. */
function matchingOrders(viewer: Viewer, f: OrderListFilters): Sql {
  const where = [owned(viewer)];
  if (f.status) where.push(sql`o.status = ${f.status}::order_status`);
  if (f.yourTurn !== undefined) {
    const mine = orderStatuses.filter((s) => turnOf[s] === (viewer.party satisfies Party));
    where.push(f.yourTurn ? sql`o.status = ANY(${mine}::order_status[])` : sql`o.status <> ALL(${mine}::order_status[])`);
  }
  return join(where, ' AND ');
}

/** One page of `select`'s rows for the viewer's orders matching `f`, newest first, and how many match. */
async function listPage<R extends pg.QueryResultRow>(q: Db, label: string, select: Sql, viewer: Viewer, f: OrderListFilters, page: number, perPage: number) {
  const matching = matchingOrders(viewer, f);
  const [rows, count] = await Promise.all([
    q.query<R>(statement(sql`${select} WHERE ${matching} ORDER BY o.id DESC LIMIT ${perPage} OFFSET ${(page - 1) * perPage}`, label)),
    q.query<{ n: number }>(statement(sql`SELECT count(*)::int AS n FROM orders o WHERE ${matching}`, 'order_count')),
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
  const matching = matchingOrders(viewer, f);
  let after = Number.MAX_SAFE_INTEGER;
  for (;;) {
    const { rows } = await q.query<OwnedOrderRow>(statement(sql`${SELECT} WHERE ${matching} AND o.id < ${after} ORDER BY o.id DESC LIMIT ${batch}`, 'order_export'));
    for (const r of rows) yield orderView(r, viewer.party);
    if (rows.length < batch) return;
    after = Number(rows[rows.length - 1]!.id);
  }
}
