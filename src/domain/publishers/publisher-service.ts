import type pg from 'pg';
import type { Db } from '../../db/client.js';
import { withTransaction } from '../../db/tx.js';
import { createKey } from '../keys/key-service.js';
import { createPublisherAccount } from '../ledger/ledger-service.js';

/** A publisher with its payable account and a first publisher key (shown once). */
export async function createPublisher(db: Db, name: string) {
  const id = await withTransaction(db.$client, async (tx) => {
    const { rows } = await tx.query<{ id: number }>('INSERT INTO publishers (name) VALUES ($1) RETURNING id', [name]);
    await createPublisherAccount(tx, rows[0]!.id);
    return rows[0]!.id;
  });
  const key = await createKey(db, { publisherId: id, name: `${name} key` });
  return { id, key: key.key };
}

export async function publisherExists(pool: pg.Pool, publisherId: number): Promise<boolean> {
  const { rowCount } = await pool.query('SELECT 1 FROM publishers WHERE id = $1', [publisherId]);
  return rowCount !== 0;
}
