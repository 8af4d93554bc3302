import { LRUCache } from 'lru-cache';
import type { Db } from '../../db/handle.js';
import { decimalSql, usdCentsToDecimal } from './money.js';
import { isoSeconds } from '../../common/iso-seconds.js';
import { mediaRules } from './views.js';

// The seller API's reads. Each is one named (prepared) statement scoped to the key's workspace, so
// a request costs exactly one round trip once the key is cached (perf-notes: a second round trip
// costs about as much as the whole route). Items and purchases come back as ready JSON text:
// parsing two dozen columns (arrays, timestamps) and re-serialising them cost the Node process
// more than building the JSON costs PostgreSQL.

/** The item kinds that carry an optional media field, as an SQL list: 'video', 'audio'. */
const kindsWith = (rule: keyof (typeof mediaRules)['video']) =>
  Object.entries(mediaRules)
    .filter(([, r]) => r[rule])
    .map(([kind]) => `'${kind}'`)
    .join(', ');

const isoSql = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')`;

/**
 * An item as the seller API's JSON, built by PostgreSQL. row_to_json keeps the seed's key order and
 * writes compact JSON. Optional media fields are left out, not null (json_strip_nulls): no preview
 * image for audio, a video preview only for video, an audio preview only for audio (mediaRules),
 * screenshots only when there are some.
 */
const ITEM_JSON = `(SELECT row_to_json(r) FROM (SELECT
    i.id, i.name, i.description, i.category, i.sub_category, i.options, i.version, i.demo_link, i.tags,
    json_strip_nulls(json_build_object(
      'thumbnail', i.thumbnail_url,
      'preview_image', CASE WHEN i.kind IN (${kindsWith('previewImage')}) THEN i.preview_image_url END,
      'preview_video', CASE WHEN i.kind IN (${kindsWith('previewVideo')}) THEN i.preview_video_url END,
      'preview_audio', CASE WHEN i.kind IN (${kindsWith('previewAudio')}) THEN i.preview_audio_url END,
      'screenshots', CASE WHEN cardinality(i.screenshots) > 0 THEN i.screenshots END)) AS media,
    (SELECT row_to_json(m) FROM (SELECT
      ${decimalSql('i.price_regular_cents', 'i.currency')} AS regular,
      ${decimalSql('i.price_extended_cents', 'i.currency')} AS extended) m) AS price,
    i.currency,
    ${isoSql('i.published_at')} AS published_at) r)`;

const accountStatement = {
  name: 'catalog_account',
  text: `
    SELECT w.owner_first_name, w.owner_last_name, w.username, w.email, w.currency, fx.per_usd::text AS per_usd,
      w.profile_heading, w.profile_description, w.contact_email, w.social_links, w.avatar_url, w.cover_url,
      w.registered_at,
      COALESCE((SELECT balance FROM ledger_accounts WHERE workspace_id = w.id AND kind = 'available'), 0) AS available
    FROM workspaces w JOIN fx_rates fx ON fx.currency = w.currency
    WHERE w.id = $1`,
};

// JSON comes back as text: handed to the client as is, never parsed and re-serialised in Node.
const itemsStatement = {
  name: 'catalog_items',
  text: `SELECT json_agg(${ITEM_JSON} ORDER BY i.id)::text AS items FROM items i WHERE i.workspace_id = $1`,
};

const itemStatement = {
  name: 'catalog_item',
  text: `SELECT ${ITEM_JSON}::text AS item FROM items i WHERE i.id = $1 AND i.workspace_id = $2`,
};

// The unique index on purchases.code finds the row; the workspace and refund conditions then
// decide whether this key may see it. The item's JSON comes from a short per-process cache, so a
// validation costs one index lookup of a few scalar columns.
const purchaseStatement = {
  name: 'catalog_purchase',
  text: `
    SELECT p.item_id, CASE p.license WHEN 'extended' THEN 'Extended' ELSE 'Regular' END AS license_type,
           ${decimalSql('p.price_cents', 'p.currency')}::text AS price, p.currency, p.downloaded,
           CASE WHEN p.supported_until IS NOT NULL THEN ${isoSql('p.supported_until')} END AS supported_until,
           ${isoSql('p.purchased_at')} AS date
      FROM purchases p
     WHERE p.code = $1 AND p.workspace_id = $2 AND p.refunded_at IS NULL`,
};

// Items are only ever added (items import), so their JSON can be reused; 5 s bounds any surprise.
const ITEM_TTL_MS = 5_000;

/** An item's JSON (text) by workspace and id; undefined when there is no such item. */
export type ItemJsonReader = (workspaceId: number, itemId: number) => Promise<string | undefined>;

/** Items' JSON from a short cache of its own, for one pool: the catalog module makes one. */
export function cachedItemJson(pool: Db): ItemJsonReader {
  const cache = new LRUCache<string, string>({ max: 10_000, ttl: ITEM_TTL_MS });
  return async (workspaceId, itemId) => {
    const key = `${workspaceId}:${itemId}`;
    const hit = cache.get(key);
    if (hit !== undefined) return hit;
    const json = await getItemJson(pool, workspaceId, itemId);
    if (json !== undefined) cache.set(key, json);
    return json;
  };
}

export interface Account {
  name: { firstname: string; lastname: string; full_name: string };
  username: string;
  email: string;
  balance: number;
  currency: string;
  profile: {
    heading: string;
    description: string;
    contact: { email: string };
    social_links: Record<string, string>;
    media: { avatar: string; cover: string };
  };
  registered_at: string;
}

interface AccountRow {
  owner_first_name: string;
  owner_last_name: string;
  username: string;
  email: string;
  currency: string;
  per_usd: string;
  profile_heading: string;
  profile_description: string;
  contact_email: string;
  social_links: Record<string, string>;
  avatar_url: string;
  cover_url: string;
  registered_at: Date;
  available: number;
}

/** The workspace owner's profile; undefined only if the workspace vanished under a cached key. */
export async function getAccount(pool: Db, workspaceId: number): Promise<Account | undefined> {
  const { rows } = await pool.query<AccountRow>({ ...accountStatement, values: [workspaceId] });
  const r = rows[0];
  if (!r) return undefined;
  return {
    name: { firstname: r.owner_first_name, lastname: r.owner_last_name, full_name: `${r.owner_first_name} ${r.owner_last_name}`.trim() },
    username: r.username,
    email: r.email,
    balance: usdCentsToDecimal(r.available, r.per_usd, r.currency),
    currency: r.currency,
    profile: {
      heading: r.profile_heading,
      description: r.profile_description,
      contact: { email: r.contact_email },
      social_links: r.social_links,
      media: { avatar: r.avatar_url, cover: r.cover_url },
    },
    registered_at: isoSeconds(r.registered_at),
  };
}

/** The workspace's items as a JSON array (text), oldest first; undefined when it has none. */
export async function listItemsJson(pool: Db, workspaceId: number): Promise<string | undefined> {
  const { rows } = await pool.query<{ items: string | null }>({ ...itemsStatement, values: [workspaceId] });
  return rows[0]?.items ?? undefined;
}

/** One item of the workspace as JSON (text). */
export async function getItemJson(pool: Db, workspaceId: number, itemId: number): Promise<string | undefined> {
  const { rows } = await pool.query<{ item: string }>({ ...itemStatement, values: [itemId, workspaceId] });
  return rows[0]?.item;
}

/** A UUID in its usual 8-4-4-4-12 hex form; anything else cannot be a purchase code. */
export const PURCHASE_CODE_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface PurchaseRow {
  item_id: number;
  license_type: string;
  price: string;
  currency: string;
  downloaded: boolean;
  supported_until: string | null;
  date: string;
}

// Several codes in one statement, answered by position: the same index lookup per code, with
// the statement's own cost (protocol, planning, executor start) paid once for all of them.
const purchasesStatement = {
  name: 'catalog_purchases',
  text: `
    SELECT q.n, p.item_id, CASE p.license WHEN 'extended' THEN 'Extended' ELSE 'Regular' END AS license_type,
           ${decimalSql('p.price_cents', 'p.currency')}::text AS price, p.currency, p.downloaded,
           CASE WHEN p.supported_until IS NOT NULL THEN ${isoSql('p.supported_until')} END AS supported_until,
           ${isoSql('p.purchased_at')} AS date
      FROM unnest($1::uuid[], $2::int[]) WITH ORDINALITY AS q(code, workspace_id, n)
      JOIN purchases p ON p.code = q.code AND p.workspace_id = q.workspace_id AND p.refunded_at IS NULL`,
};

export interface PurchaseLookup {
  workspaceId: number;
  code: string;
}

/**
 * The purchase row behind each code, in order, when it is a sale of that workspace that was not
 * refunded: one query for all of them. Ill-formed codes are answered without a query (and
 * without a cast error from PostgreSQL).
 */
export async function findPurchaseRows(pool: Db, lookups: PurchaseLookup[]): Promise<Array<PurchaseRow | undefined>> {
  const asked = lookups.flatMap((l, i) => (PURCHASE_CODE_PATTERN.test(l.code) ? [{ ...l, i }] : []));
  const found: Array<PurchaseRow | undefined> = new Array(lookups.length).fill(undefined);
  if (asked.length === 1) {
    const { rows } = await pool.query<PurchaseRow>({ ...purchaseStatement, values: [asked[0]!.code, asked[0]!.workspaceId] });
    found[asked[0]!.i] = rows[0];
  } else if (asked.length > 1) {
    const { rows } = await pool.query<PurchaseRow & { n: string }>({
      ...purchasesStatement,
      values: [asked.map((l) => l.code), asked.map((l) => l.workspaceId)],
    });
    for (const row of rows) found[asked[Number(row.n) - 1]!.i] = row;
  }
  return found;
}

/** A purchase row with its item, as the JSON (text) a validation answers; none when the item is gone. */
export async function purchaseJson(items: ItemJsonReader, lookup: PurchaseLookup, p: PurchaseRow | undefined): Promise<string | undefined> {
  if (!p) return undefined;
  const item = await items(lookup.workspaceId, p.item_id);
  if (item === undefined) return undefined;
  // The seed's key order; supported_until only when the purchase has support.
  return (
    `{"purchase_code":${JSON.stringify(lookup.code.toLowerCase())},"license_type":"${p.license_type}","price":${p.price},` +
    `"currency":${JSON.stringify(p.currency)},"item":${item}` +
    (p.supported_until ? `,"supported_until":"${p.supported_until}"` : '') +
    `,"downloaded":${p.downloaded},"date":"${p.date}"}`
  );
}

/** The purchase behind each code as JSON (text), in order: `findPurchaseRows`, then `purchaseJson`. */
export async function findPurchasesJson(pool: Db, items: ItemJsonReader, lookups: PurchaseLookup[]): Promise<Array<string | undefined>> {
  const rows = await findPurchaseRows(pool, lookups);
  return Promise.all(lookups.map((l, i) => purchaseJson(items, l, rows[i])));
}

/** The purchase behind one code: see `findPurchasesJson`. */
export async function findPurchaseJson(pool: Db, items: ItemJsonReader, workspaceId: number, code: string): Promise<string | undefined> {
  return (await findPurchasesJson(pool, items, [{ workspaceId, code }]))[0];
}
