import { randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { type Db, orm, withTransaction } from '../../db/handle.js';
import { fxRates, items, workspaces } from '../../db/schema/index.js';
import { DomainError, invalidInput, notFound } from '../errors.js';
import { type ItemInput, itemInput, type NewItem, toNewItem } from './item-input.js';
import { PURCHASE_CODE_PATTERN } from './catalog-queries.js';
import { UNSTORABLE_TEXT_MESSAGE, unstorableTextPath } from '../text-input.js';
import type { License } from './views.js';

// Writes behind the admin CLI: importing items and recording, downloading and
// refunding purchases (what the seller's and buyers' apps would do).

const IMPORT_CHUNK = 1_000; // rows per INSERT, well under PostgreSQL's 65,535 parameters

/** Every item is validated before anything is written; the first problem names its index and field. */
export async function importItems(
  db: Db,
  workspaceId: number,
  input: unknown,
  /** Called with the number of items written after each chunk. */
  onProgress?: (written: number) => void,
): Promise<{ imported: number }> {
  if (!Array.isArray(input)) throw invalidInput({ file: ['must hold a JSON array of items'] });
  const [ws] = await orm(db).select({ currency: workspaces.currency }).from(workspaces).where(eq(workspaces.id, workspaceId));
  if (!ws) throw notFound('Workspace');
  const known = new Set((await orm(db).select({ c: fxRates.currency }).from(fxRates)).map((r) => r.c));

  const rows: NewItem[] = [];
  for (let i = 0; i < input.length; i++) {
    // Counted from 1, like the lines of an outlets file.
    const where = (path: string) => `item ${i + 1}${path ? `: ${path}` : ''}`;
    // PostgreSQL cannot store these as given: refused naming the field, not left to the database.
    const unstorable = unstorableTextPath(input[i]);
    if (unstorable !== undefined) throw invalidInput({ [where(unstorable)]: [UNSTORABLE_TEXT_MESSAGE] });
    const parsed = itemInput.safeParse(input[i]);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      const path = issue.path.map(String).join('.');
      const message = issue.code === 'unrecognized_keys' ? `unknown field ${issue.keys.join(', ')}` : issue.message;
      throw invalidInput({ [where(path)]: [message] });
    }
    const item: ItemInput = parsed.data;
    if (item.currency !== undefined && !known.has(item.currency)) {
      throw invalidInput({ [where('currency')]: [`unknown currency ${item.currency}; \`fx list\` shows the FX table, \`fx set\` adds to it`] });
    }
    const row = toNewItem(item, ws.currency);
    if (Array.isArray(row)) throw invalidInput({ [where(row[0])]: [row[1]] });
    rows.push(row);
  }

  await withTransaction(db, async (tx) => {
    for (let i = 0; i < rows.length; i += IMPORT_CHUNK) {
      const chunk = rows.slice(i, i + IMPORT_CHUNK);
      // Drizzle writes the statement; it runs on the transaction's connection.
      const insert = orm(db).insert(items).values(chunk.map(({ publishedAt, ...r }) => ({ ...r, workspaceId, ...(publishedAt ? { publishedAt } : {}) })));
      const { sql, params } = insert.toSQL();
      await tx.query(sql, params);
      onProgress?.(chunk.length);
    }
  });
  return { imported: rows.length };
}

/** Default support period of a purchase, as marketplaces of digital goods usually include. */
export const DEFAULT_SUPPORT_MONTHS = 6;

/**
 * Records a sale: a random UUID v4 code, the item's price of that license in the item's currency,
 * and support until purchase date + `supportMonths` (null: no support).
 */
export async function createPurchase(
  pool: Db,
  input: { itemId: number; license: License; supportMonths: number | null },
): Promise<{ purchase_code: string }> {
  const code = randomUUID();
  const { rows } = await pool.query<{ code: string }>(
    `INSERT INTO purchases (code, item_id, workspace_id, license, price_cents, currency, supported_until, purchased_at)
     SELECT $1, i.id, i.workspace_id, $2::license_type,
       CASE WHEN $2 = 'extended' THEN i.price_extended_cents ELSE i.price_regular_cents END,
       i.currency, now() + make_interval(months => $3::int), now()
     FROM items i WHERE i.id = $4
     RETURNING code`,
    [code, input.license, input.supportMonths, input.itemId],
  );
  if (!rows[0]) throw notFound('Item');
  return { purchase_code: rows[0].code };
}

function requireCode(code: string): void {
  if (!PURCHASE_CODE_PATTERN.test(code)) throw invalidInput({ code: ['must be a purchase code (a UUID)'] });
}

/** The buyer downloaded the item; refunded purchases cannot be downloaded. Idempotent. */
export async function markDownloaded(pool: Db, code: string): Promise<{ purchase_code: string; downloaded: true }> {
  requireCode(code);
  const { rows } = await pool.query<{ code: string; refunded: boolean }>(
    `UPDATE purchases SET downloaded = true WHERE code = $1 AND refunded_at IS NULL RETURNING code, false AS refunded`,
    [code],
  );
  if (rows[0]) return { purchase_code: rows[0].code, downloaded: true };
  const exists = await pool.query('SELECT 1 FROM purchases WHERE code = $1', [code]);
  if (exists.rowCount) throw new DomainError('conflict', 'This purchase was refunded; it cannot be downloaded.', { status: 'refunded' });
  throw notFound('Purchase');
}

/** Refunds a purchase: its code stops validating at once. Refunding twice keeps the first date. */
export async function refundPurchase(pool: Db, code: string): Promise<{ purchase_code: string; refunded: true }> {
  requireCode(code);
  const { rows } = await pool.query<{ code: string }>(
    'UPDATE purchases SET refunded_at = COALESCE(refunded_at, now()) WHERE code = $1 RETURNING code',
    [code],
  );
  if (!rows[0]) throw notFound('Purchase');
  return { purchase_code: rows[0].code, refunded: true };
}
