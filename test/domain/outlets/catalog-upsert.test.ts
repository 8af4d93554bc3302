import { afterAll, describe, expect, it } from 'vitest';
import { upsertOutlets } from '../../../src/domain/outlets/outlet-upsert.js';
import { feeCents } from '../../../src/domain/outlets/fees.js';
import type { OutletInput } from '../../../src/domain/outlets/outlet-input.js';
import { createPublisher } from '../../../src/domain/publishers/publisher-service.js';
import { offerInput, outletInput } from '../../helpers/catalog.js';
import { createTestDatabase } from '../../helpers/db.js';

const database = await createTestDatabase();
afterAll(() => database.drop());

const offer = (over: Partial<OutletInput['offers'][number]> = {}) =>
  offerInput({ content_by: 'buyer', min_words: 500, max_words: 1500, max_links: 2, sponsored_label: false, ...over });

const outlet = (domain: string, over: Partial<OutletInput> = {}): OutletInput =>
  outletInput(domain, { description: 'Reviews of gadgets and software.', traffic: { monthly_visits: 50_000, verified: true }, offers: [offer()], ...over });

describe('fees', () => {
  it('rounds half up once', () => {
    expect(feeCents(10_000, 0.2)).toBe(2_000);
    expect(feeCents(1_234, 0.15)).toBe(185); // 185.1
    expect(feeCents(1_230, 0.15)).toBe(185); // 184.5 → 185
    expect(feeCents(1_229, 0.15)).toBe(184); // 184.35
  });
});

describe('upsertOutlets', () => {
  it('inserts outlets with fee-inclusive offers and their cheapest prices', async () => {
    const pub = await createPublisher(database.pool, 'Upsert pub');
    const r = await upsertOutlets(database.pool, pub.id, [
      outlet('a.example', { offers: [offer(), offer({ format: 'link_insertion', title: 'Link', publisher_price_cents: 5_000 })] }),
      outlet('b.example'),
    ], 0.2);
    expect(r).toEqual({ imported: 2, updated: 0 });
    const { rows } = await database.pool.query(
      `SELECT f.format, f.publisher_price_cents, f.fee_cents, f.price FROM offers f JOIN outlets o ON o.id = f.outlet_id
        WHERE o.domain = 'a.example' ORDER BY f.price`);
    expect(rows).toEqual([
      { format: 'link_insertion', publisher_price_cents: 5_000, fee_cents: 1_000, price: 6_000 },
      { format: 'guest_post', publisher_price_cents: 10_000, fee_cents: 2_000, price: 12_000 },
    ]);
    const prices = await database.pool.query(
      `SELECT min_price_any, min_price_guest_post, min_price_sponsored_article, min_price_link_insertion, min_price_press_release
         FROM outlets WHERE domain = 'a.example'`);
    expect(prices.rows).toEqual([
      { min_price_any: 6_000, min_price_guest_post: 12_000, min_price_sponsored_article: null, min_price_link_insertion: 6_000, min_price_press_release: null },
    ]);
  });

  it('updates an existing domain in place, keeps matched offer ids and deactivates dropped offers', async () => {
    const pub = await createPublisher(database.pool, 'Upsert pub 2');
    await upsertOutlets(database.pool, pub.id, [outlet('c.example', { offers: [offer(), offer({ format: 'press_release', title: 'PR' })] })], 0.2);
    const before = await database.pool.query(`SELECT f.id, f.format FROM offers f JOIN outlets o ON o.id = f.outlet_id WHERE o.domain = 'c.example' ORDER BY f.id`);
    const r = await upsertOutlets(database.pool, pub.id, [outlet('c.example', { name: 'Renamed', offers: [offer({ publisher_price_cents: 20_000 })] })], 0.2);
    expect(r).toEqual({ imported: 0, updated: 1 });
    const after = await database.pool.query(
      `SELECT f.id, f.format, f.price, f.active, o.name FROM offers f JOIN outlets o ON o.id = f.outlet_id WHERE o.domain = 'c.example' ORDER BY f.id`);
    expect(after.rows).toEqual([
      { id: before.rows[0].id, format: 'guest_post', price: 24_000, active: true, name: 'Renamed' },
      { id: before.rows[1].id, format: 'press_release', price: 12_000, active: false, name: 'Renamed' },
    ]);
    const prices = await database.pool.query(
      `SELECT min_price_any, min_price_guest_post, min_price_press_release FROM outlets WHERE domain = 'c.example'`);
    expect(prices.rows).toEqual([{ min_price_any: 24_000, min_price_guest_post: 24_000, min_price_press_release: null }]);
  });

  it("refuses to take over another publisher's domain and imports nothing", async () => {
    const p1 = await createPublisher(database.pool, 'Owner');
    const p2 = await createPublisher(database.pool, 'Intruder');
    await upsertOutlets(database.pool, p1.id, [outlet('d.example')], 0.2);
    await expect(upsertOutlets(database.pool, p2.id, [outlet('e.example'), outlet('d.example')], 0.2)).rejects.toMatchObject({ code: 'invalid_input' });
    const { rows } = await database.pool.query(`SELECT domain FROM outlets WHERE domain IN ('d.example', 'e.example')`);
    expect(rows).toEqual([{ domain: 'd.example' }]);
  });
});
