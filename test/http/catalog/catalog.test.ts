import { describe, expect, it } from 'vitest';
import { createPurchase } from '../../../src/domain/catalog/catalog-writes.js';
import { accountSchema, itemSchema, purchaseSchema } from '../../../src/schemas/catalog.js';
import { setupApp } from '../../helpers/app.js';
import { runCli } from '../../helpers/cli.js';
import { workspaceWithKeys } from '../../helpers/fixtures.js';
import { seller } from './fixtures.js';

// Interface B's success answers, field by field (seed section 2B, docs/interface-b.md).
// Mostly happy blocks: each endpoint's errors and 401s are in errors.test.ts (the contract's error table, endpoint by endpoint).

const h = await setupApp();
const s = await seller(h.database);

const get = (url: string) => h.app.inject({ method: 'GET', url });
const validate = (key: string, code: string) =>
  h.app.inject({ method: 'POST', url: '/api/purchases/validation', payload: { api_key: key, purchase_code: code } });
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;

describe('GET /api/account/details — happy', () => {
  it("answers the workspace owner's profile with the available balance as a decimal", async () => {
    await h.database.pool.query(
      `UPDATE workspaces SET owner_first_name = 'Ada', owner_last_name = 'Lovelace', username = 'ada', email = 'ada@example.com',
         profile_heading = 'Analytical goods', profile_description = 'Engines and notes.', contact_email = 'help@example.com',
         social_links = '{"facebook":"https://facebook.com/ada","x":"https://x.com/ada"}', avatar_url = 'https://cdn.example/a.png',
         cover_url = 'https://cdn.example/c.png', registered_at = '2026-01-15T08:00:00.123Z' WHERE id = $1`,
      [s.workspaceId],
    );
    const res = await get(`/api/account/details?api_key=${s.readKey}`);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.json()).toEqual({
      status: 'success',
      data: {
        name: { firstname: 'Ada', lastname: 'Lovelace', full_name: 'Ada Lovelace' },
        username: 'ada',
        email: 'ada@example.com',
        balance: 1000,
        currency: 'USD',
        profile: {
          heading: 'Analytical goods',
          description: 'Engines and notes.',
          contact: { email: 'help@example.com' },
          social_links: { facebook: 'https://facebook.com/ada', x: 'https://x.com/ada' },
          media: { avatar: 'https://cdn.example/a.png', cover: 'https://cdn.example/c.png' },
        },
        registered_at: '2026-01-15T08:00:00Z',
      },
    });
    expect(accountSchema.safeParse(res.json().data).success).toBe(true);
    // A number, never a string.
    expect(res.body).toContain('"balance":1000,');
  });

  it('converts the balance to the workspace currency, rounded to its minor unit', async () => {
    const eur = await workspaceWithKeys(h.database.pool, { currency: 'EUR', balanceCents: 12_345 });
    const { rows } = await h.database.pool.query<{ per_usd: string }>("SELECT per_usd::text FROM fx_rates WHERE currency = 'EUR'");
    const expected = Math.round(123.45 * Number(rows[0]!.per_usd) * 100) / 100;
    const res = await get(`/api/account/details?api_key=${eur.readKey}`);
    expect(res.json().data).toMatchObject({ currency: 'EUR', balance: expected });

    await h.database.pool.query("INSERT INTO fx_rates (currency, per_usd) VALUES ('JPY', 151.237) ON CONFLICT (currency) DO UPDATE SET per_usd = 151.237");
    const jpy = await workspaceWithKeys(h.database.pool, { currency: 'JPY', balanceCents: 12_345 });
    const yen = await get(`/api/account/details?api_key=${jpy.readKey}`);
    expect(yen.json().data).toMatchObject({ currency: 'JPY', balance: 18_670 }); // 123.45 × 151.237 = 18670.2
  });

  it('rounds half away from zero exactly (no binary-fraction error)', async () => {
    await h.database.pool.query("INSERT INTO fx_rates (currency, per_usd) VALUES ('SEK', 10.5) ON CONFLICT (currency) DO UPDATE SET per_usd = 10.5");
    const sek = await workspaceWithKeys(h.database.pool, { currency: 'SEK', balanceCents: 1 }); // 0.105 SEK
    expect((await get(`/api/account/details?api_key=${sek.readKey}`)).json().data.balance).toBe(0.11);
  });
});

describe('GET /api/items/all — happy', () => {
  it('lists every item of the workspace with the media each kind carries', async () => {
    const res = await get(`/api/items/all?api_key=${s.readKey}`);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(Object.keys(body)).toEqual(['status', 'items']);
    expect(body.status).toBe('success');
    expect(body.items.map((i: { id: number }) => i.id)).toEqual(s.itemIds);
    for (const item of body.items) expect(itemSchema.safeParse(item).success).toBe(true);

    const [software, graphics, video, audio, other] = body.items;
    expect(software).toEqual({
      id: s.itemIds[0],
      name: `Software ws${s.workspaceId}`,
      description: `Item 0 of ws${s.workspaceId}.`,
      category: 'Category',
      sub_category: 'Sub category',
      options: ['Option A'],
      version: '1.0.0',
      demo_link: `https://demo.example/ws${s.workspaceId}/0`,
      tags: ['tag-a', 'tag-b'],
      media: {
        thumbnail: `https://cdn.example/ws${s.workspaceId}/0/thumb.png`,
        preview_image: `https://cdn.example/ws${s.workspaceId}/0/preview.png`,
        screenshots: [`https://cdn.example/ws${s.workspaceId}/0/s1.png`, `https://cdn.example/ws${s.workspaceId}/0/s2.png`],
      },
      price: { regular: 19.99, extended: 99 },
      currency: 'USD',
      published_at: '2026-03-01T09:30:00Z',
    });
    // Field order as in the seed's table.
    expect(Object.keys(software)).toEqual([
      'id', 'name', 'description', 'category', 'sub_category', 'options', 'version', 'demo_link', 'tags', 'media', 'price', 'currency', 'published_at',
    ]);
    expect(Object.keys(graphics.media)).toEqual(['thumbnail', 'preview_image']);
    expect(graphics.price).toEqual({ regular: 5.5, extended: 55.25 });
    expect(Object.keys(video.media)).toEqual(['thumbnail', 'preview_image', 'preview_video']);
    expect(Object.keys(audio.media)).toEqual(['thumbnail', 'preview_audio']);
    // No screenshots: the field is left out, not [] and not null.
    expect(Object.keys(other.media)).toEqual(['thumbnail', 'preview_image']);
    expect(other).toMatchObject({ currency: 'EUR', price: { regular: 0, extended: 1 } });
    expect(res.body).not.toContain('null');
    expect(res.body).toContain('"regular":19.99,');
    for (const item of body.items) {
      expect(item.version).toMatch(/^\d+\.\d+\.\d+$/);
      expect(item.published_at).toMatch(ISO);
    }
  });
});

describe('GET /api/items/all — security', () => {
  it("shows only the key's own workspace's items", async () => {
    const other = await seller(h.database);
    const mine = (await get(`/api/items/all?api_key=${s.readKey}`)).json().items.map((i: { id: number }) => i.id);
    const theirs = (await get(`/api/items/all?api_key=${other.readKey}`)).json().items.map((i: { id: number }) => i.id);
    expect(mine).toEqual(s.itemIds);
    expect(theirs).toEqual(other.itemIds);
  });
});

describe('GET /api/items/item — happy', () => {
  it('answers one item by item_id', async () => {
    const res = await get(`/api/items/item?api_key=${s.readKey}&item_id=${s.itemIds[3]}`);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(Object.keys(body)).toEqual(['status', 'item']);
    expect(body.item).toMatchObject({ id: s.itemIds[3], name: `Audio ws${s.workspaceId}`, price: { regular: 15, extended: 75 } });
    expect(body.item.media).toEqual({ thumbnail: `https://cdn.example/ws${s.workspaceId}/3/thumb.png`, preview_audio: `https://cdn.example/ws${s.workspaceId}/3/preview.mp3` });
    expect(itemSchema.safeParse(body.item).success).toBe(true);
    const all = (await get(`/api/items/all?api_key=${s.readKey}`)).json().items;
    expect(body.item).toEqual(all[3]);
  });
});

describe('POST /api/purchases/validation — happy', () => {
  it('answers the purchase, its item and its support for a valid code', async () => {
    const res = await validate(s.readKey, s.code);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(Object.keys(body)).toEqual(['status', 'data']);
    expect(Object.keys(body.data)).toEqual(['purchase']);
    const p = body.data.purchase;
    expect(Object.keys(p)).toEqual(['purchase_code', 'license_type', 'price', 'currency', 'item', 'supported_until', 'downloaded', 'date']);
    expect(p).toMatchObject({ purchase_code: s.code, license_type: 'Regular', price: 19.99, currency: 'USD', downloaded: false });
    expect(p.item).toEqual((await get(`/api/items/item?api_key=${s.readKey}&item_id=${s.itemIds[0]}`)).json().item);
    expect(p.date).toMatch(ISO);
    expect(p.supported_until).toMatch(ISO);
    const months = (Date.parse(p.supported_until) - Date.parse(p.date)) / (30.44 * 86_400_000);
    expect(months).toBeGreaterThan(5.8);
    expect(months).toBeLessThan(6.2);
    expect(purchaseSchema.safeParse(p).success).toBe(true);
  });

  it('an extended license without support: Extended, its price, no supported_until', async () => {
    const { purchase_code } = await createPurchase(h.database.pool, { itemId: s.itemIds[4]!, license: 'extended', supportMonths: null });
    const p = (await validate(s.readKey, purchase_code)).json().data.purchase;
    expect(p).toMatchObject({ license_type: 'Extended', price: 1, currency: 'EUR' });
    expect(p).not.toHaveProperty('supported_until');
    expect(Object.keys(p.item.media)).toEqual(['thumbnail', 'preview_image']);
  });

  it('keeps supported_until once it has passed', async () => {
    const { purchase_code } = await createPurchase(h.database.pool, { itemId: s.itemIds[2]!, license: 'regular', supportMonths: 6 });
    await h.database.pool.query(
      "UPDATE purchases SET purchased_at = '2024-01-10T12:00:00Z', supported_until = '2024-07-10T12:00:00Z' WHERE code = $1",
      [purchase_code],
    );
    const p = (await validate(s.readKey, purchase_code)).json().data.purchase;
    expect(p).toMatchObject({ supported_until: '2024-07-10T12:00:00Z', date: '2024-01-10T12:00:00Z' });
    expect(Object.keys(p.item.media)).toEqual(['thumbnail', 'preview_image', 'preview_video']);
  });

  it('says downloaded once `purchase download` ran', async () => {
    const { purchase_code } = await createPurchase(h.database.pool, { itemId: s.itemIds[1]!, license: 'regular', supportMonths: 12 });
    expect((await validate(s.readKey, purchase_code)).json().data.purchase.downloaded).toBe(false);
    const cli = await runCli(['purchase', 'download', '--code', purchase_code], { DATABASE_URL: h.database.url });
    expect(cli.stderr).toBe('');
    expect(JSON.parse(cli.stdout)).toEqual({ purchase_code, downloaded: true });
    expect((await validate(s.readKey, purchase_code)).json().data.purchase.downloaded).toBe(true);
  });

  it('accepts the code in upper case and answers it in canonical form', async () => {
    const res = await validate(s.readKey, s.code.toUpperCase());
    expect(res.json().data.purchase.purchase_code).toBe(s.code);
  });

  it('is one database round trip once the key is cached', async () => {
    await validate(s.readKey, s.code);
    const { vi } = await import('vitest');
    const spy = vi.spyOn(h.database.pool, 'query');
    try {
      expect((await validate(s.readKey, s.code)).statusCode).toBe(200);
      const statements = spy.mock.calls.map((c) => (c[0] as { name?: string }).name);
      expect(statements).toEqual(['catalog_purchase']);
    } finally {
      spy.mockRestore();
    }
  });
});

describe('POST /api/purchases/validation — errors', () => {
  it('a refunded purchase no longer validates', async () => {
    const { purchase_code } = await createPurchase(h.database.pool, { itemId: s.itemIds[1]!, license: 'regular', supportMonths: 6 });
    expect((await validate(s.readKey, purchase_code)).statusCode).toBe(200);
    const cli = await runCli(['purchase', 'refund', '--code', purchase_code], { DATABASE_URL: h.database.url });
    expect(cli.stderr).toBe('');
    expect(JSON.parse(cli.stdout)).toEqual({ purchase_code, refunded: true });
    const res = await validate(s.readKey, purchase_code);
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ status: 'error', msg: 'Invalid purchase code' });
  });
});

describe('POST /api/purchases/validation — security', () => {
  it("another seller's code is an invalid code for this key, and valid for its own", async () => {
    const other = await seller(h.database);
    expect((await validate(s.readKey, other.code)).json()).toEqual({ status: 'error', msg: 'Invalid purchase code' });
    expect((await validate(other.readKey, other.code)).json().data.purchase.purchase_code).toBe(other.code);
    expect((await validate(other.readKey, s.code)).statusCode).toBe(404);
  });
});

describe('GET /api/items/all and POST /api/purchases/validation, logs — security', () => {
  it('never contain the key, from the query string, a form or a JSON body', async () => {
    const before = h.logs.length;
    await get(`/api/items/all?api_key=${s.readKey}`);
    await h.app.inject({
      method: 'POST',
      url: '/api/purchases/validation',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: `api_key=${s.readKey}&purchase_code=${s.code}`,
    });
    await validate(s.readKey, s.code);
    await get(`/api/items/nope?api_key=${s.readKey}`);
    const written = h.logs.slice(before).join('');
    expect(written).toContain('"route":"/api/items/all"');
    expect(written).not.toContain(s.readKey);
  });
});
