import { type Db, withTransaction } from '../../db/handle.js';
import { createKey } from '../keys/key-service.js';
import { createPublisherAccount } from '../ledger/ledger-service.js';
import { notFound } from '../errors.js';
import { formatCents } from '../money/format.js';

/** A publisher with its pending and payable accounts and a first publisher key (shown once). */
export async function createPublisher(db: Db, name: string) {
  const id = await withTransaction(db, async (tx) => {
    const { rows } = await tx.query<{ id: number }>('INSERT INTO publishers (name) VALUES ($1) RETURNING id', [name]);
    await createPublisherAccount(tx, rows[0]!.id);
    return rows[0]!.id;
  });
  const key = await createKey(db, { publisherId: id, name: `${name} key` });
  return { id, key: key.key };
}

export async function publisherExists(pool: Db, publisherId: number): Promise<boolean> {
  const { rowCount } = await pool.query('SELECT 1 FROM publishers WHERE id = $1', [publisherId]);
  return rowCount !== 0;
}

/** The publisher behind a key and its balances: pending, payable, in payout (docs/link-guarantee.md, docs/billing.md). */
export async function publisherMe(pool: Db, publisherId: number) {
  const { rows } = await pool.query<{ id: number; name: string; pending: number; payable: number; in_payout: number }>({
    name: 'publisher_me',
    text: `SELECT p.id, p.name,
                  COALESCE((SELECT balance FROM ledger_accounts WHERE publisher_id = p.id AND kind = 'pending'), 0) AS pending,
                  COALESCE((SELECT balance FROM ledger_accounts WHERE publisher_id = p.id AND kind = 'payable'), 0) AS payable,
                  COALESCE((SELECT balance FROM ledger_accounts WHERE publisher_id = p.id AND kind = 'in_payout'), 0) AS in_payout
             FROM publishers p WHERE p.id = $1`,
    values: [publisherId],
  });
  const p = rows[0];
  if (!p) throw notFound('Publisher');
  return {
    publisher: { id: p.id, name: p.name },
    pending: p.pending,
    pending_formatted: formatCents(p.pending, 'USD', 1),
    payable: p.payable,
    payable_formatted: formatCents(p.payable, 'USD', 1),
    in_payout: p.in_payout,
    in_payout_formatted: formatCents(p.in_payout, 'USD', 1),
  };
}
