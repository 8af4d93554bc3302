import type { z } from 'zod';
import type { Item, Purchase } from '../../domain/catalog/catalog-queries.js';
import type { itemSchema, purchaseSchema } from '../../schemas/catalog.js';

// The seller API's success bodies for items and purchases, encoded from the catalog's values.
// They are the bytes PostgreSQL wrote when it built this JSON (test/http/catalog/bytes.test.ts):
// compact, keys in the values' order, and in the item list ", " between items, as json_agg wrote
// it, so that no client sees its answers change.

/** `{"status":"success","items":[…]}`. */
export function itemsBody(items: readonly Item[]): string {
  return `{"status":"success","items":[${items.map((item) => JSON.stringify(item)).join(', ')}]}`;
}

// The values have the documented shapes (OpenAPI): a field renamed on one side fails to compile.
const documented: [Item, Purchase] extends [z.infer<typeof itemSchema>, z.infer<typeof purchaseSchema>] ? true : false = true;
void documented;

// Every field of Purchase, in its order, is written by `purchaseBodies`; a field added to Purchase
// and not there fails to compile here.
type Written = 'purchase_code' | 'license_type' | 'price' | 'currency' | 'item' | 'supported_until' | 'downloaded' | 'date';
const everyFieldWritten: [Exclude<keyof Purchase, Written>] extends [never] ? true : false = true;
void everyFieldWritten;

/**
 * Encodes validations' answers, `{"status":"success","data":{"purchase":…}}`. A validation's item
 * is the catalog's cached value, one object for every validation of that item while it is cached,
 * so its JSON is kept alongside it (by identity, and dropped with it) and a request writes only the
 * purchase's few fields: writing the whole item each time cost about four times as much on this
 * hot path. Made once per app, with the routes.
 */
export function purchaseBodies(): (purchase: Purchase) => string {
  const encodedItems = new WeakMap<Item, string>();
  const itemJson = (item: Item): string => {
    let text = encodedItems.get(item);
    if (text === undefined) {
      text = JSON.stringify(item);
      encodedItems.set(item, text);
    }
    return text;
  };
  return (p) =>
    `{"status":"success","data":{"purchase":{"purchase_code":${JSON.stringify(p.purchase_code)},` +
    `"license_type":${JSON.stringify(p.license_type)},"price":${JSON.stringify(p.price)},"currency":${JSON.stringify(p.currency)},` +
    `"item":${itemJson(p.item)}` +
    (p.supported_until === undefined ? '' : `,"supported_until":${JSON.stringify(p.supported_until)}`) +
    `,"downloaded":${JSON.stringify(p.downloaded)},"date":${JSON.stringify(p.date)}}}}`;
}
