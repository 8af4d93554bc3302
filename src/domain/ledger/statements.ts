import type { Db } from '../../db/handle.js';
import { isoSeconds } from '../../common/iso-seconds.js';
import { DomainError } from '../errors.js';
import { formatCents } from '../money/format.js';
import type { AccountKind, TransactionKind } from './ledger.js';

/**
 * Monthly statements (docs/billing.md, "Papers"): for a workspace or a publisher, each of its
 * ledger accounts over one UTC month, its opening balance, every entry, its closing balance.
 *
 * Generic over the ledger on purpose: the accounts are whatever accounts the owner has and the
 * movements whatever transactions touched them, read as text, so an account or a transaction
 * kind added later (payouts' "in payout") shows on the statement without a change here.
 * Everything is read from `ledger_entries` alone (the opening balance is the sum of the entries
 * before the month), so a statement reconciles with the ledger by construction; the tests check it
 * against the balances themselves.
 */

export type StatementOwner = { kind: 'workspace'; id: number } | { kind: 'publisher'; id: number };

export interface StatementMovement {
  entry_id: number;
  transaction_id: number;
  /** When the entry was written (the database's clock), ISO 8601 UTC to the second. */
  date: string;
  kind: TransactionKind;
  order_id: number | null;
  /** The top-up request's reference for a confirmed top-up; null otherwise. */
  reference: string | null;
  /** An adjustment's reason, as staff wrote it; null otherwise. */
  note: string | null;
  amount: number;
  amount_formatted: string;
  /** The account's balance right after this entry. */
  balance: number;
  balance_formatted: string;
}

export interface AccountStatement {
  account: AccountKind;
  opening: number;
  opening_formatted: string;
  credits: number;
  credits_formatted: string;
  debits: number;
  debits_formatted: string;
  closing: number;
  closing_formatted: string;
  movements: StatementMovement[];
}

export interface Statement {
  owner: { kind: 'workspace' | 'publisher'; id: number; name: string };
  /** YYYY-MM, UTC. */
  month: string;
  /** The first instant of the month and of the next one (UTC): entries at or after `from` and before `to`. */
  from: string;
  to: string;
  /** False for the current month: its closing balances are the balances so far. */
  complete: boolean;
  currency: 'USD';
  /** Every account of the owner, in the ledger's lock order (available, held; pending, payable, …). */
  accounts: AccountStatement[];
  /** The accounts together: what the owner has at the service. */
  opening: number;
  opening_formatted: string;
  closing: number;
  closing_formatted: string;
}

const usd = (cents: number) => formatCents(cents, 'USD', 1);

/** The first instant (ms, UTC) of a `YYYY-MM` month, and of the month after it. */
export function monthBounds(month: string): { from: number; to: number } {
  const m = /^(\d{4})-(0[1-9]|1[0-2])$/.exec(month);
  if (!m) throw new DomainError('invalid_input', 'The month is not valid.', { errors: { month: ['must be a month written YYYY-MM'] } });
  const year = Number(m[1]);
  const index = Number(m[2]) - 1;
  return { from: Date.UTC(year, index, 1), to: Date.UTC(year, index + 1, 1) };
}

/** The month (YYYY-MM, UTC) holding `ms`. */
export const monthOf = (ms: number) => new Date(ms).toISOString().slice(0, 7);

// The owner's accounts and what each held before the month: the sum of its entries written before it.
const accountsStatement = (column: 'workspace_id' | 'publisher_id', owners: string) => ({
  name: `statement_accounts_${column}`,
  text: `SELECT a.id, a.kind::text AS account, o.name,
                (SELECT COALESCE(sum(e.amount), 0) FROM ledger_entries e WHERE e.account_id = a.id AND e.created_at < $2)::float8 AS opening
           FROM ${owners} o JOIN ledger_accounts a ON a.${column} = o.id
          WHERE o.id = $1`,
});

// Every entry of the owner's accounts in the month, oldest first, with what names the movement.
const movementsStatement = (column: 'workspace_id' | 'publisher_id') => ({
  name: `statement_movements_${column}`,
  text: `SELECT e.id, e.transaction_id, e.account_id, e.amount::float8 AS amount, e.created_at, t.kind::text AS kind, t.order_id,
                tr.reference, la.reason
           FROM ledger_accounts a
           JOIN ledger_entries e ON e.account_id = a.id
           JOIN ledger_transactions t ON t.id = e.transaction_id
           LEFT JOIN top_up_requests tr ON tr.ledger_transaction_id = t.id
           LEFT JOIN ledger_adjustments la ON la.ledger_transaction_id = t.id
          WHERE a.${column} = $1 AND e.created_at >= $2 AND e.created_at < $3
          ORDER BY e.created_at, e.id`,
});

// Accounts in the ledger's documented order; a kind this file does not know yet goes last, by name.
const ORDER = ['available', 'held', 'pending', 'payable'];
const rank = (kind: string) => (ORDER.includes(kind) ? ORDER.indexOf(kind) : ORDER.length);

/**
 * The owner's statement for `month` (YYYY-MM, UTC). A month after the one holding `now` is a 422
 * naming `month`; an owner that does not exist is a 404, as is another tenant's (the caller
 * passes only its own workspace or publisher).
 */
export async function monthlyStatement(db: Db, owner: StatementOwner, month: string, now: number): Promise<Statement> {
  const { from, to } = monthBounds(month);
  if (from > now) throw new DomainError('invalid_input', 'That month has not begun.', { errors: { month: ['is in the future'] } });
  const column = owner.kind === 'workspace' ? 'workspace_id' : 'publisher_id';
  const [accounts, movements] = await Promise.all([
    db.query<{ id: number; account: AccountKind; name: string; opening: number }>({
      ...accountsStatement(column, owner.kind === 'workspace' ? 'workspaces' : 'publishers'),
      values: [owner.id, new Date(from)],
    }),
    db.query<{ id: number; transaction_id: number; account_id: number; amount: number; created_at: Date; kind: TransactionKind; order_id: number | null; reference: string | null; reason: string | null }>({
      ...movementsStatement(column),
      values: [owner.id, new Date(from), new Date(to)],
    }),
  ]);
  if (accounts.rows.length === 0) throw new DomainError('not_found', `${owner.kind === 'workspace' ? 'Workspace' : 'Publisher'} not found.`);
  const sections = [...accounts.rows]
    .sort((a, b) => rank(a.account) - rank(b.account) || a.account.localeCompare(b.account))
    .map((a): AccountStatement => {
      let balance = a.opening;
      let credits = 0;
      let debits = 0;
      const lines = movements.rows
        .filter((m) => m.account_id === a.id)
        .map((m): StatementMovement => {
          balance += m.amount;
          if (m.amount > 0) credits += m.amount;
          else debits += m.amount;
          return {
            entry_id: Number(m.id),
            transaction_id: Number(m.transaction_id),
            date: isoSeconds(m.created_at),
            kind: m.kind,
            order_id: m.order_id === null ? null : Number(m.order_id),
            reference: m.reference,
            note: m.reason,
            amount: m.amount,
            amount_formatted: usd(m.amount),
            balance,
            balance_formatted: usd(balance),
          };
        });
      return {
        account: a.account,
        opening: a.opening,
        opening_formatted: usd(a.opening),
        credits,
        credits_formatted: usd(credits),
        debits,
        debits_formatted: usd(debits),
        closing: balance,
        closing_formatted: usd(balance),
        movements: lines,
      };
    });
  const opening = sections.reduce((s, a) => s + a.opening, 0);
  const closing = sections.reduce((s, a) => s + a.closing, 0);
  return {
    owner: { kind: owner.kind, id: owner.id, name: accounts.rows[0]!.name },
    month,
    from: isoSeconds(new Date(from)),
    to: isoSeconds(new Date(to)),
    complete: to <= now,
    currency: 'USD',
    accounts: sections,
    opening,
    opening_formatted: usd(opening),
    closing,
    closing_formatted: usd(closing),
  };
}
