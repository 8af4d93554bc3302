import { eq } from 'drizzle-orm';
import type { Database } from '../db/client.js';
import { orm } from '../db/handle.js';
import { workspaces } from '../db/schema/index.js';
import { createPurchase, importItems, markDownloaded, refundPurchase } from '../domain/catalog/catalog-writes.js';

// The demo seller (docs/interface-b.md): the demo workspace's public profile, one item of each
// kind and a few purchases in every state, so the seller API can be tried with the demo's read-only key.

const cdn = (path: string) => `https://cdn.demo.example/${path}`;

const demoItems = [
  {
    kind: 'software',
    name: 'Nova Admin Dashboard',
    description: 'A responsive admin dashboard template with 40 ready-made pages, dark mode and RTL support.',
    category: 'Site Templates',
    sub_category: 'Admin Templates',
    options: ['Dark mode', 'RTL support', 'Figma source'],
    version: '2.4.1',
    demo_link: 'https://demo.example/nova',
    tags: ['admin', 'dashboard', 'bootstrap'],
    media: {
      thumbnail: cdn('nova/thumb.png'),
      preview_image: cdn('nova/preview.png'),
      screenshots: [cdn('nova/screen-1.png'), cdn('nova/screen-2.png'), cdn('nova/screen-3.png')],
    },
    price: { regular: 19.99, extended: 99 },
    published_at: '2026-03-01T09:30:00Z',
  },
  {
    kind: 'graphics',
    name: 'Flat Line Icon Pack',
    description: '1,200 line icons in SVG, PNG and icon-font formats.',
    category: 'Graphics',
    sub_category: 'Icons',
    options: ['SVG', 'PNG', 'Icon font'],
    version: '1.3.0',
    demo_link: 'https://demo.example/icons',
    tags: ['icons', 'line', 'svg'],
    media: { thumbnail: cdn('icons/thumb.png'), preview_image: cdn('icons/preview.png') },
    price: { regular: 12, extended: 60 },
    published_at: '2026-04-18T12:00:00Z',
  },
  {
    kind: 'video',
    name: 'Glitch Logo Reveal',
    description: 'A 10-second logo reveal with glitch transitions, 4K.',
    category: 'Stock Footage',
    sub_category: 'Logo Stings',
    options: ['4K', 'After Effects project'],
    version: '1.0.2',
    demo_link: 'https://demo.example/glitch',
    tags: ['logo', 'glitch', 'intro'],
    media: {
      thumbnail: cdn('glitch/thumb.png'),
      preview_image: cdn('glitch/preview.png'),
      preview_video: cdn('glitch/preview.mp4'),
      screenshots: [cdn('glitch/frame-1.png')],
    },
    price: { regular: 24.5, extended: 120 },
    published_at: '2026-05-02T08:15:00Z',
  },
  {
    kind: 'audio',
    name: 'Uplifting Corporate Loop',
    description: 'A bright 2-minute corporate track with a 30-second loop.',
    category: 'Music',
    sub_category: 'Corporate',
    options: ['WAV', 'MP3'],
    version: '1.0.0',
    demo_link: 'https://demo.example/uplifting',
    tags: ['corporate', 'loop', 'upbeat'],
    media: { thumbnail: cdn('uplifting/thumb.png'), preview_audio: cdn('uplifting/preview.mp3') },
    price: { regular: 15, extended: 75 },
    published_at: '2026-05-12T14:00:00Z',
  },
  {
    kind: 'other',
    name: 'Launch Checklist (PDF)',
    description: 'A 30-page checklist for launching a digital product.',
    category: 'E-books',
    sub_category: 'Business',
    options: ['PDF'],
    version: '3.0.0',
    demo_link: 'https://demo.example/checklist',
    tags: ['checklist', 'launch'],
    media: { thumbnail: cdn('checklist/thumb.png'), preview_image: cdn('checklist/preview.png') },
    price: { regular: 9, extended: 45 },
    published_at: '2026-06-20T10:00:00Z',
  },
];

export interface CatalogDemo {
  /** A valid (not refunded) purchase code of the demo workspace. */
  purchaseCode: string;
  itemIds: number[];
}

export async function seedCatalogDemo(database: Pick<Database, 'pool'>, workspaceId: number): Promise<CatalogDemo> {
  const { pool } = database;
  const db = pool;
  await orm(db)
    .update(workspaces)
    .set({
      profileHeading: 'Pixel & Sound Studio',
      profileDescription: 'Templates, icons, stock video and music for busy product teams.',
      contactEmail: 'support@demo.example',
      socialLinks: { facebook: 'https://facebook.com/pixelsound', x: 'https://x.com/pixelsound', dribbble: 'https://dribbble.com/pixelsound' },
      avatarUrl: cdn('profile/avatar.png'),
      coverUrl: cdn('profile/cover.png'),
    })
    .where(eq(workspaces.id, workspaceId));
  await importItems(db, workspaceId, demoItems);
  const { rows } = await pool.query<{ id: number }>('SELECT id FROM items WHERE workspace_id = $1 ORDER BY id', [workspaceId]);
  const ids = rows.map((r) => r.id);
  const [software, graphics, video, audio, other] = ids as [number, number, number, number, number];

  const main = await createPurchase(pool, { itemId: software, license: 'regular', supportMonths: 6 });
  await markDownloaded(pool, main.purchase_code);
  await createPurchase(pool, { itemId: video, license: 'extended', supportMonths: 12 });
  await createPurchase(pool, { itemId: audio, license: 'regular', supportMonths: null });
  await createPurchase(pool, { itemId: other, license: 'regular', supportMonths: 6 });
  const expired = await createPurchase(pool, { itemId: graphics, license: 'regular', supportMonths: 6 });
  // Bought long ago: its support has ended, and validation still shows supported_until.
  await pool.query(
    `UPDATE purchases SET purchased_at = now() - interval '400 days', supported_until = now() - interval '400 days' + interval '6 months'
     WHERE code = $1`,
    [expired.purchase_code],
  );
  const refunded = await createPurchase(pool, { itemId: graphics, license: 'extended', supportMonths: 6 });
  await refundPurchase(pool, refunded.purchase_code);
  return { purchaseCode: main.purchase_code, itemIds: ids };
}
