import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { eachLedgerEntry } from '../../domain/ledger/ledger-queries.js';
import { monthBounds, monthlyStatement, monthOf } from '../../domain/ledger/statements.js';
import { notFound } from '../../domain/errors.js';
import { eachOrder } from '../../domain/orders/order-read.js';
import { orderStatuses, type OrderStatus } from '../../domain/orders/states.js';
import { csvStream } from '../../schemas/csv.js';
import { ledgerCsvColumns } from '../../schemas/ledger.js';
import { buyerOrderCsvColumns, publisherOrderCsvColumns } from '../../schemas/orders.js';
import { type ConsoleDeps, type ConsoleTarget, page, targetOf } from '../context.js';
import { renderDocument } from '../documents.js';

// Papers (docs/billing.md): monthly statements, a printable document per month like the invoice,
// and the CSV downloads of the orders and of the ledger. Every member reads them, viewers included,
// as they read the pages the figures come from; each is its own workspace's or publisher's (the
// target gate answers 404 for anyone else's). The same domain calls as the API's.

/** A ledger account as a person reads it; an account added later shows by its name. */
const ACCOUNT_WORDS: Record<string, string> = {
  available: 'Available balance',
  held: 'Held for orders',
  pending: 'Pending (in the guarantee window)',
  payable: 'Payable',
  in_payout: 'In payout',
};

/** A movement's kind as a person reads it; a kind added later shows by its name. */
const KIND_WORDS: Record<string, string> = {
  top_up: 'Funds added',
  order_placed: 'Order placed (held)',
  order_released: 'Order approved (paid)',
  order_refunded: 'Order refunded',
  guarantee_refunded: 'Refunded: link lost',
  payout_released: 'Guarantee ended: payable',
  adjustment: 'Adjustment',
  opening_balance: 'Opening balance',
  payout_requested: 'Payout requested',
  payout_sent: 'Payout sent',
  payout_failed: 'Payout failed: returned',
};

const words = (table: Record<string, string>, key: string) => table[key] ?? key.replace(/_/g, ' ');

const MONTH_NAMES = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
export const monthWords = (month: string) => `${MONTH_NAMES[Number(month.slice(5, 7)) - 1]} ${month.slice(0, 4)}`;

/** The 12 months up to the one holding `now`, newest first. */
function recentMonths(now: number): string[] {
  const d = new Date(now);
  return Array.from({ length: 12 }, (_, i) => monthOf(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() - i, 1)));
}

const ownerOf = (target: ConsoleTarget) => ({ kind: target.kind, id: target.id });

/** A download: the file's name and its rows streamed as CSV. */
function download(reply: FastifyReply, filename: string, columns: string[], rows: AsyncIterable<unknown>) {
  return reply
    .header('content-type', 'text/csv; charset=utf-8')
    .header('content-disposition', `attachment; filename="${filename}"`)
    .send(csvStream(columns, rows));
}

export async function paperPages(app: FastifyInstance, { deps }: { deps: ConsoleDeps }) {
  /** The statements page: a month picker and the last twelve months. */
  app.get('/statements', async (request, reply) => {
    const target = targetOf(request);
    const query = (request.query ?? {}) as Record<string, unknown>;
    // The picker sends ?month=YYYY-MM; the statement itself lives at its own address.
    if (typeof query.month === 'string' && query.month !== '') {
      return reply.redirect(`${target.href}/statements/${encodeURIComponent(query.month)}`, 303);
    }
    const months = recentMonths(deps.clock.now());
    return page(request, reply, 'statements', {
      title: 'Statements',
      section: 'statements',
      current: months[0],
      months: months.map((m) => ({ month: m, words: monthWords(m), href: `${target.href}/statements/${m}` })),
      downloads: downloads(target),
    });
  });

  /** One month's statement: a document of its own with a print style sheet, like the invoice. */
  app.get('/statements/:month', async (request, reply) => {
    const target = targetOf(request);
    const month = (request.params as { month: string }).month;
    const s = await monthlyStatement(deps.pool, ownerOf(target), month, deps.clock.now());
    const { to } = monthBounds(month);
    // A statement is a document of its own, like the invoice: no navigation, its own print style sheet.
    const html = await renderDocument('statement', {
      s,
      title: `Statement, ${monthWords(month)}`,
      period: `${s.from.slice(0, 10)} to ${new Date(to - 1).toISOString().slice(0, 10)} (UTC)`,
      ownerWords: `${s.owner.name} (${target.kind === 'workspace' ? 'workspace' : 'publisher'} ${s.owner.id})`,
      accounts: s.accounts.map((a) => ({
        ...a,
        words: words(ACCOUNT_WORDS, a.account),
        movements: a.movements.map((m) => ({ ...m, day: m.date.slice(0, 10), kindWords: words(KIND_WORDS, m.kind) })),
      })),
      back: `${target.href}/statements`,
    });
    return reply.type('text/html; charset=utf-8').send(html);
  });

  /** The orders as CSV, with the Orders page's status filter: every matching order. */
  app.get('/orders.csv', async (request, reply) => {
    const target = targetOf(request);
    const query = (request.query ?? {}) as Record<string, unknown>;
    const status = orderStatuses.find((s) => s === query.status) as OrderStatus | undefined;
    const filters = status ? { status } : {};
    if (target.kind === 'workspace') return download(reply, 'orders.csv', buyerOrderCsvColumns, eachOrder(deps.pool, { party: 'buyer', workspaceId: target.id }, filters));
    return download(reply, 'publisher-orders.csv', publisherOrderCsvColumns, eachOrder(deps.pool, { party: 'publisher', publisherId: target.id }, filters));
  });

  /** A workspace's ledger as CSV, as GET /api/v1/ledger exports it. */
  app.get('/ledger.csv', async (request: FastifyRequest, reply) => {
    const target = targetOf(request);
    if (target.kind !== 'workspace') throw notFound('Page');
    return download(reply, 'ledger.csv', ledgerCsvColumns, eachLedgerEntry(deps.pool, target.id));
  });
}

/** The downloads a target's pages link to. */
export function downloads(target: ConsoleTarget): Array<{ href: string; label: string }> {
  return [
    { href: `${target.href}/orders.csv`, label: 'All orders (CSV)' },
    ...(target.kind === 'workspace' ? [{ href: `${target.href}/ledger.csv`, label: 'The whole ledger (CSV)' }] : []),
  ];
}
