import { expiringCache, systemClock, type Clock } from '../clock.js';
import type { Db } from '../../db/handle.js';
import { minorToDecimal, usdCentsToDecimal } from './money.js';
import { isoSeconds } from '../../common/iso-seconds.js';
import { type ItemKind, type License, mediaRules } from './views.js';

// The seller API's reads. Each is one named (prepared) statement scoped to the key's workspace, so
// a request costs exactly one round trip once the key is cached (perf-notes: a second round trip
// costs about as much as the whole route). Items and purchases come back as typed values, built
// here from plain columns in the seed's key order; the HTTP adapter encodes them. Times are
// written by PostgreSQL (to_char) and read as text, so no timestamp is parsed into a Date and
// back on a request.

/** An item's media: the optional fields are left out (never null) when the item has none. */
export interface ItemMedia {
  readonly thumbnail: string;
  /** Not for audio items. */
  readonly preview_image?: string;
  /** Only for video items. */
  readonly preview_video?: string;
  /** Only for audio items. */
  readonly preview_audio?: string;
  /** Only when there are some. */
  readonly screenshots?: string[];
}

/**
 * A digital product the workspace sells, as the seller API shows it: keys in the seed's order,
 * prices as decimals in the item's currency, published_at ISO 8601 UTC to the second. Never
 * changed once built, its arrays included (typed plain only so that the routes' response schemas
 * accept them): one value is shared by every validation while it is cached.
 */
export interface Item {
  readonly id: number;
  readonly name: string;
  readonly description: string;
  readonly category: string;
  readonly sub_category: string;
  readonly options: string[];
  readonly version: string;
  readonly demo_link: string;
  readonly tags: string[];
  readonly media: ItemMedia;
  readonly price: { readonly regular: number; readonly extended: number };
  readonly currency: string;
  readonly published_at: string;
}

/** A sale, as a validation answers it: keys in the seed's order, supported_until only when it has support. */
export interface Purchase {
  readonly purchase_code: string;
  readonly license_type: 'Regular' | 'Extended';
  readonly price: number;
  readonly currency: string;
  readonly item: Item;
  readonly supported_until?: string;
  readonly downloaded: boolean;
  readonly date: string;
}

const isoSql = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')`;

// An item's plain columns; the media fields its kind may not carry are dropped in `toItem`.
const ITEM_COLUMNS = `i.id, i.name, i.description, i.category, i.sub_category, i.options, i.version, i.demo_link, i.tags, i.kind,
    i.thumbnail_url, i.preview_image_url, i.preview_video_url, i.preview_audio_url, i.screenshots,
    i.price_regular_cents, i.price_extended_cents, i.currency, ${isoSql('i.published_at')} AS published_at`;

interface ItemRow {
  id: number;
  name: string;
  description: string;
  category: string;
  sub_category: string;
  options: string[];
  version: string;
  demo_link: string;
  tags: string[];
  kind: ItemKind;
  thumbnail_url: string;
  preview_image_url: string | null;
  preview_video_url: string | null;
  preview_audio_url: string | null;
  screenshots: string[];
  price_regular_cents: number;
  price_extended_cents: number;
  currency: string;
  published_at: string;
}

/**
 * An item row as the API's value. Media: no preview image for audio, a video preview only for
 * video, an audio preview only for audio (mediaRules), screenshots only when there are some;
 * a field the item lacks is left out. Prices are exact: an import keeps them at most 10^9 units,
 * so a decimal has at most 15 significant digits and prints as PostgreSQL's numeric would.
 */
function toItem(r: ItemRow): Item {
  const rules = mediaRules[r.kind];
  const media: { -readonly [K in keyof ItemMedia]: ItemMedia[K] } = { thumbnail: r.thumbnail_url };
  if (rules.previewImage && r.preview_image_url !== null) media.preview_image = r.preview_image_url;
  if (rules.previewVideo && r.preview_video_url !== null) media.preview_video = r.preview_video_url;
  if (rules.previewAudio && r.preview_audio_url !== null) media.preview_audio = r.preview_audio_url;
  if (r.screenshots.length > 0) media.screenshots = r.screenshots;
  return {
    id: r.id,
    name: r.name,
    description: r.description,
    category: r.category,
    sub_category: r.sub_category,
    options: r.options,
    version: r.version,
    demo_link: r.demo_link,
    tags: r.tags,
    media,
    price: { regular: minorToDecimal(r.price_regular_cents, r.currency), extended: minorToDecimal(r.price_extended_cents, r.currency) },
    currency: r.currency,
    published_at: r.published_at,
  };
}

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

const itemsStatement = {
  name: 'catalog_items',
  text: `SELECT ${ITEM_COLUMNS} FROM items i WHERE i.workspace_id = $1 ORDER BY i.id`,
};

const itemStatement = {
  name: 'catalog_item',
  text: `SELECT ${ITEM_COLUMNS} FROM items i WHERE i.id = $1 AND i.workspace_id = $2`,
};

// The unique index on purchases.code finds the row; the workspace and refund conditions then
// decide whether this key may see it. The item comes from a short per-process cache, so a
// validation costs one index lookup of a few scalar columns.
const purchaseStatement = {
  name: 'catalog_purchase',
  text: `
    SELECT p.item_id, p.license, p.price_cents, p.currency, p.downloaded,
           CASE WHEN p.supported_until IS NOT NULL THEN ${isoSql('p.supported_until')} END AS supported_until,
           ${isoSql('p.purchased_at')} AS date
      FROM purchases p
     WHERE p.code = $1 AND p.workspace_id = $2 AND p.refunded_at IS NULL`,
};

// Items are only ever added (items import), so a read one can be reused; 5 s bounds any surprise.
const ITEM_TTL_MS = 5_000;

/** An item by workspace and id; undefined when there is no such item. */
export type ItemReader = (workspaceId: number, itemId: number) => Promise<Item | undefined>;

/** Items from a short cache of its own, for one pool: the catalog module makes one. */
export function cachedItems(pool: Db, clock: Clock = systemClock): ItemReader {
  const cache = expiringCache<string, Item>(clock, { max: 10_000, ttl: ITEM_TTL_MS });
  return async (workspaceId, itemId) => {
    const key = `${workspaceId}:${itemId}`;
    const hit = cache.get(key);
    if (hit !== undefined) return hit;
    const item = await getItem(pool, workspaceId, itemId);
    if (item !== undefined) cache.set(key, item);
    return item;
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

/** The workspace's items, oldest first (none when it has none). */
export async function listItems(pool: Db, workspaceId: number): Promise<Item[]> {
  const { rows } = await pool.query<ItemRow>({ ...itemsStatement, values: [workspaceId] });
  return rows.map(toItem);
}

/** One item of the workspace; undefined when it has no such item. */
export async function getItem(pool: Db, workspaceId: number, itemId: number): Promise<Item | undefined> {
  const { rows } = await pool.query<ItemRow>({ ...itemStatement, values: [itemId, workspaceId] });
  return rows[0] && toItem(rows[0]);
}

/** A UUID in its usual 8-4-4-4-12 hex form; anything else cannot be a purchase code. */
export const PURCHASE_CODE_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface PurchaseRow {
  item_id: number;
  license: License;
  price_cents: number;
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
    SELECT q.n, p.item_id, p.license, p.price_cents, p.currency, p.downloaded,
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
    const { rows } = await pool.query<PurchaseRow & { n: number }>({
      ...purchasesStatement,
      values: [asked.map((l) => l.code), asked.map((l) => l.workspaceId)],
    });
    for (const row of rows) found[asked[row.n - 1]!.i] = row;
  }
  return found;
}

/** A purchase row with its item, as a validation answers it; none when the item is gone. */
export async function purchaseOf(items: ItemReader, lookup: PurchaseLookup, p: PurchaseRow | undefined): Promise<Purchase | undefined> {
  if (!p) return undefined;
  const item = await items(lookup.workspaceId, p.item_id);
  if (item === undefined) return undefined;
  const purchase_code = lookup.code.toLowerCase();
  const license_type = p.license === 'extended' ? 'Extended' : 'Regular';
  const price = minorToDecimal(p.price_cents, p.currency);
  // The seed's key order; supported_until only when the purchase has support.
  return p.supported_until === null
    ? { purchase_code, license_type, price, currency: p.currency, item, downloaded: p.downloaded, date: p.date }
    : { purchase_code, license_type, price, currency: p.currency, item, supported_until: p.supported_until, downloaded: p.downloaded, date: p.date };
}

/** The purchase behind each code, in order: `findPurchaseRows`, then `purchaseOf`. */
export async function findPurchases(pool: Db, items: ItemReader, lookups: PurchaseLookup[]): Promise<Array<Purchase | undefined>> {
  const rows = await findPurchaseRows(pool, lookups);
  return Promise.all(lookups.map((l, i) => purchaseOf(items, l, rows[i])));
}

/** The purchase behind one code: see `findPurchases`. */
export async function findPurchase(pool: Db, items: ItemReader, workspaceId: number, code: string): Promise<Purchase | undefined> {
  return (await findPurchases(pool, items, [{ workspaceId, code }]))[0];
}
