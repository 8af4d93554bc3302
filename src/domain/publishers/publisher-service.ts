import type pg from 'pg';
import type { Db } from '../../db/client.js';
import { publishers } from '../../db/schema/index.js';
import { createKey } from '../keys/key-service.js';
import { createPublisherAccount } from '../ledger/ledger-service.js';

/** A publisher with its payable account and a first publisher key (shown once). */
export async function createPublisher(db: Db, name: string) {
  const id = await db.transaction(async (tx) => {
    const [row] = await tx.insert(publishers).values({ name }).returning({ id: publishers.id });
    await createPublisherAccount(tx, row!.id);
    return row!.id;
  });
  const key = await createKey(db, { publisherId: id, name: `${name} key` });
  return { id, key: key.key };
}

export async function publisherExists(pool: pg.Pool, publisherId: number): Promise<boolean> {
  const { rowCount } = await pool.query('SELECT 1 FROM publishers WHERE id = $1', [publisherId]);
  return rowCount !== 0;
}
