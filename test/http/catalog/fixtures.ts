import type { Database } from '../../../src/db/client.js';
import { createPurchase, importItems } from '../../../src/domain/catalog/catalog-writes.js';
import { workspaceWithKeys, type WorkspaceFixture } from '../../helpers/fixtures.js';

/** One item of each kind in the `items import` shape (without id). */
export function itemsOfEachKind(tag = 'x') {
  const base = (n: number) => ({
    description: `Item ${n} of ${tag}.`,
    category: 'Category',
    sub_category: 'Sub category',
    options: ['Option A'],
    version: `1.${n}.0`,
    demo_link: `https://demo.example/${tag}/${n}`,
    tags: ['tag-a', 'tag-b'],
  });
  const img = (n: number, what: string) => `https://cdn.example/${tag}/${n}/${what}.png`;
  return [
    {
      ...base(0),
      kind: 'software',
      name: `Software ${tag}`,
      media: { thumbnail: img(0, 'thumb'), preview_image: img(0, 'preview'), screenshots: [img(0, 's1'), img(0, 's2')] },
      price: { regular: 19.99, extended: 99 },
      published_at: '2026-03-01T09:30:00Z',
    },
    {
      ...base(1),
      kind: 'graphics',
      name: `Graphics ${tag}`,
      media: { thumbnail: img(1, 'thumb'), preview_image: img(1, 'preview') },
      price: { regular: 5.5, extended: 55.25 },
    },
    {
      ...base(2),
      kind: 'video',
      name: `Video ${tag}`,
      media: { thumbnail: img(2, 'thumb'), preview_image: img(2, 'preview'), preview_video: `https://cdn.example/${tag}/2/preview.mp4` },
      price: { regular: 30, extended: 150 },
    },
    {
      ...base(3),
      kind: 'audio',
      name: `Audio ${tag}`,
      media: { thumbnail: img(3, 'thumb'), preview_audio: `https://cdn.example/${tag}/3/preview.mp3` },
      price: { regular: 15, extended: 75 },
    },
    {
      ...base(4),
      kind: 'other',
      name: `Other ${tag}`,
      media: { thumbnail: img(4, 'thumb'), preview_image: img(4, 'preview'), screenshots: [] },
      price: { regular: 0, extended: 1 },
      currency: 'EUR',
    },
  ];
}

export interface Seller extends WorkspaceFixture {
  itemIds: number[];
  /** A regular purchase of the first item, with support. */
  code: string;
}

/** A workspace with a key pair, one item of each kind and one purchase. */
export async function seller(database: Pick<Database, 'pool'>, opts: { currency?: string; balanceCents?: number } = {}): Promise<Seller> {
  const ws = await workspaceWithKeys(database.pool, opts);
  await importItems(database.pool, ws.workspaceId, itemsOfEachKind(`ws${ws.workspaceId}`));
  const { rows } = await database.pool.query<{ id: number }>('SELECT id FROM items WHERE workspace_id = $1 ORDER BY id', [ws.workspaceId]);
  const itemIds = rows.map((r) => r.id);
  const { purchase_code } = await createPurchase(database.pool, { itemId: itemIds[0]!, license: 'regular', supportMonths: 6 });
  return { ...ws, itemIds, code: purchase_code };
}
