import type { Tx } from '../../db/tx.js';
import { DomainError, invalidInput } from '../errors.js';
import type { WorkspacePrincipal } from '../keys/principal.js';
import { lockWorkspaceAccounts, postMovements } from '../ledger/movements.js';
import { formatCents } from '../money/format.js';
import { checkContent } from './content-checks.js';
import { getOrders } from './order-read.js';
import { deadlineFor, type Durations, type OrderStatus } from './states.js';

export interface PlaceOrdersInput {
  offer_ids: number[];
  target_url: string;
  anchor_text?: string | undefined;
  brief?: string | undefined;
  content?: string | undefined;
  content_title?: string | undefined;
  project_id?: number | undefined;
}

interface OfferRow {
  id: number;
  outlet_id: number;
  publisher_id: number;
  publisher_price_cents: number;
  fee_cents: number;
  price: number;
  turnaround_days: number;
  content_by: 'buyer' | 'publisher';
  min_words: number;
  max_words: number;
  max_links: number;
  active: boolean;
}

/** A spending key must still be valid inside the transaction that spends (the cache may lag 5 s). */
export async function recheckSpendingKey(tx: Tx, keyId: number): Promise<void> {
  const { rows } = await tx.query<{ ok: boolean }>({
    name: 'key_recheck_spending',
    text: 'SELECT (revoked_at IS NULL AND can_place_orders) AS ok FROM api_keys WHERE id = $1',
    values: [keyId],
  });
  if (!rows[0]?.ok) throw new DomainError('unauthenticated', 'This key has been revoked.');
}

/**
 * Creates one order per offer and moves their total from available into escrow, all in the
 * caller's transaction: every order is created and paid for, or none. Each order freezes the
 * publisher price, fee and price it was bought at.
 */
export async function placeOrders(tx: Tx, principal: WorkspacePrincipal, input: PlaceOrdersInput, now: number, durations: Durations) {
  await recheckSpendingKey(tx, principal.keyId);
  const { rows: found } = await tx.query<OfferRow>({
    name: 'orders_offers_for_placement',
    text: `SELECT f.id, f.outlet_id, o.publisher_id, f.publisher_price_cents, f.fee_cents, f.price, f.turnaround_days,
                  f.content_by, f.min_words, f.max_words, f.max_links, f.active
             FROM offers f JOIN outlets o ON o.id = f.outlet_id WHERE f.id = ANY($1::int[])`,
    values: [input.offer_ids],
  });
  const byId = new Map(found.map((f) => [f.id, f]));
  const unknown = input.offer_ids.filter((id) => !byId.get(id)?.active);
  if (unknown.length) {
    throw invalidInput({ offer_ids: [`unknown or inactive offers: ${unknown.join(', ')}`] });
  }
  if (input.project_id !== undefined) {
    const p = await tx.query({
      name: 'orders_project_check',
      text: 'SELECT 1 FROM projects WHERE id = $1 AND workspace_id = $2',
      values: [input.project_id, principal.workspaceId],
    });
    if (p.rowCount === 0) throw invalidInput({ project_id: ['is not a project of this workspace'] });
  }
  const offersInOrder = input.offer_ids.map((id) => byId.get(id)!);
  const total = offersInOrder.reduce((s, f) => s + f.price, 0);

  // The lock on the balance rows serialises every spend of this workspace.
  const accounts = await lockWorkspaceAccounts(tx, principal.workspaceId);
  const { rows: wsRows } = await tx.query<{ max_order_cents: number | null; currency: string; per_usd: number }>({
    name: 'orders_workspace_rules',
    text: `SELECT w.max_order_cents, w.currency, fx.per_usd::float8 AS per_usd
             FROM workspaces w JOIN fx_rates fx ON fx.currency = w.currency WHERE w.id = $1`,
    values: [principal.workspaceId],
  });
  const ws = wsRows[0]!;
  const fmt = (c: number) => formatCents(c, ws.currency, ws.per_usd);
  if (ws.max_order_cents !== null && total > ws.max_order_cents) {
    throw new DomainError(
      'approval_required',
      `This order totals ${fmt(total)}, above the workspace's approval limit of ${fmt(ws.max_order_cents)}. Ask an owner to raise the limit or order less.`,
      { total_cents: total, max_order_cents: ws.max_order_cents },
    );
  }
  if (accounts.availableBalance < total) {
    const needed = total - accounts.availableBalance;
    throw new DomainError('insufficient_balance', `The balance is too low: ${fmt(needed)} more is needed.`, {
      needed_cents: needed,
      needed_formatted: fmt(needed),
      balance: accounts.availableBalance,
      balance_formatted: fmt(accounts.availableBalance),
    });
  }

  const hasContent = input.content !== undefined;
  const at = new Date(now);
  const statuses: OrderStatus[] = offersInOrder.map((f) =>
    hasContent || f.content_by === 'publisher' ? 'awaiting_acceptance' : 'awaiting_content',
  );
  const { rows: created } = await tx.query<{ id: number }>({
    name: 'orders_insert',
    text: `INSERT INTO orders (workspace_id, project_id, placed_by_key_id, outlet_id, offer_id, publisher_id, status,
             publisher_price_cents, fee_cents, price, content_by, turnaround_days, target_url, anchor_text, brief,
             deadline_at, state_entered_at, created_at, updated_at)
           SELECT $1, $2, $3, t.outlet_id, t.offer_id, t.publisher_id, t.status::order_status, t.pp, t.fee, t.price,
                  t.content_by::content_by, t.turnaround, $4, $5, $6, t.deadline, $7, $7, $7
             FROM unnest($8::int[], $9::int[], $10::int[], $11::text[], $12::bigint[], $13::bigint[], $14::bigint[],
                         $15::text[], $16::int[], $17::timestamptz[])
                  WITH ORDINALITY AS t(outlet_id, offer_id, publisher_id, status, pp, fee, price, content_by, turnaround, deadline, n)
            ORDER BY t.n
           RETURNING id`,
    values: [
      principal.workspaceId,
      input.project_id ?? null,
      principal.keyId,
      input.target_url,
      input.anchor_text ?? null,
      input.brief ?? null,
      at,
      offersInOrder.map((f) => f.outlet_id),
      offersInOrder.map((f) => f.id),
      offersInOrder.map((f) => f.publisher_id),
      statuses,
      offersInOrder.map((f) => f.publisher_price_cents),
      offersInOrder.map((f) => f.fee_cents),
      offersInOrder.map((f) => f.price),
      offersInOrder.map((f) => f.content_by),
      offersInOrder.map((f) => f.turnaround_days),
      statuses.map((s, i) => deadlineFor(s, now, durations, { turnaroundDays: offersInOrder[i]!.turnaround_days })),
    ],
  });
  const ids = created.map((r) => r.id);

  if (hasContent) {
    const content = { title: input.content_title!, body: input.content! };
    const checks = offersInOrder.map((f) =>
      JSON.stringify(
        checkContent(content, {
          targetUrl: input.target_url,
          anchorText: input.anchor_text ?? null,
          minWords: f.min_words,
          maxWords: f.max_words,
          maxLinks: f.max_links,
        }),
      ),
    );
    await tx.query({
      name: 'orders_insert_buyer_content',
      text: `INSERT INTO order_contents (order_id, version, title, body, submitted_by, submitted_at, checks)
             SELECT t.id, 1, $2, $3, 'buyer', $4, t.checks::jsonb FROM unnest($1::bigint[], $5::text[]) AS t(id, checks)`,
      values: [ids, content.title, content.body, at, checks],
    });
  }

  await postMovements(
    tx,
    offersInOrder.map((f, i) => ({
      kind: 'order_placed' as const,
      orderId: ids[i]!,
      workspaceId: principal.workspaceId,
      postings: [
        { accountId: accounts.available, kind: 'available' as const, amount: -f.price },
        { accountId: accounts.held, kind: 'held' as const, amount: f.price },
      ],
    })),
  );
  return getOrders(tx, { party: 'buyer', workspaceId: principal.workspaceId }, ids);
}
