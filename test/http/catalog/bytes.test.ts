import { afterEach, describe, expect, it, vi } from 'vitest';
import { setupApp } from '../../helpers/app.js';
import { workspaceWithKeys } from '../../helpers/fixtures.js';

// The seller API's answers byte for byte: status, content type and the raw body of every read
// (account, item list, one item, purchase validation, misses and errors), compared with literal
// strings recorded from the answers as they were when PostgreSQL still built the JSON text. Any
// change in key order, omitted keys, number or date formatting, string escaping or separators
// fails here. The rows are written with fixed ids, codes and times, including values no import
// would write (media a kind may not carry, NULL array elements, control characters), so every
// byte of the expected strings is fixed.

const h = await setupApp({ RATE_LIMIT_PER_MINUTE: 100_000 });
const a = await workspaceWithKeys(h.database.pool, { balanceCents: 123_456 });
const b = await workspaceWithKeys(h.database.pool);
const empty = await workspaceWithKeys(h.database.pool);
const pool = h.database.pool;

await pool.query(`INSERT INTO fx_rates (currency, per_usd) VALUES ('KWD', 0.307) ON CONFLICT (currency) DO NOTHING`);
await pool.query(
  `UPDATE workspaces SET owner_first_name = 'Zoë', owner_last_name = 'O''Brien "Z"', username = 'zoe_bytes', email = 'zoe@bytes.example',
     profile_heading = E'Tabs\\tand \\\\ slashes', profile_description = E'Line one\\nLine two \\u2028 😀', contact_email = 'help@bytes.example',
     social_links = '{"x":"https://x.com/zoe","facebook":"https://facebook.com/zoe"}', avatar_url = 'https://cdn.example/a.png',
     cover_url = 'https://cdn.example/c.png', registered_at = '2026-01-15T08:00:00.987654Z' WHERE id = $1`,
  [a.workspaceId],
);

// id, workspace, kind, name, description, options, tags, thumbnail, preview image/video/audio, screenshots, prices (minor units), currency, published_at
type Row = [number, number, string, string, string, string[], string[], string, string | null, string | null, string | null, (string | null)[], number, number, string, string];
const rows: Row[] = [
  [90001, a.workspaceId, 'software', 'Nova Admin', 'Every field set.', ['Dark mode', 'RTL'], ['admin', 'ui'], 'https://cdn.example/1/t.png',
    'https://cdn.example/1/p.png', null, null, ['https://cdn.example/1/s1.png', 'https://cdn.example/1/s2.png'], 1999, 9900, 'USD', '2026-03-01T09:30:00.123456Z'],
  // No preview image (a nullable column), nothing in the arrays, a half and a zero price.
  [90002, a.workspaceId, 'graphics', 'Bare graphics', '', [], [], 'https://cdn.example/2/t.png', null, null, null, [], 50, 0, 'USD', '2026-03-02T00:00:00Z'],
  // A video carrying an audio preview it may not show; the largest import price.
  [90003, a.workspaceId, 'video', 'Clip', 'Video.', ['4K'], ['stock'], 'https://cdn.example/3/t.png', 'https://cdn.example/3/p.png',
    'https://cdn.example/3/v.mp4', 'https://cdn.example/3/a.mp3', ['https://cdn.example/3/s.png'], 100_000_000_000, 1, 'USD', '2026-03-03T12:00:59.999999Z'],
  // An audio item with a preview image it may not show; yen (no minor unit).
  [90004, a.workspaceId, 'audio', 'Loop', 'Audio.', ['WAV'], ['loop'], 'https://cdn.example/4/t.png', 'https://cdn.example/4/p.png', null,
    'https://cdn.example/4/a.mp3', [], 1999, 150_000, 'JPY', '1970-01-01T00:00:00Z'],
  // Text that must be escaped, in euros.
  [90005, a.workspaceId, 'other', 'Quote " backslash \\ </script>', 'Ctrl \u0001\u0008\u000c\u001f tab\tnl\nnl cr\r del\u007f ls\u2028 é 😀',
    ['a,b', '{braces}', 'q"uote'], ['NULL', ''], 'https://cdn.example/5/t.png', null, null, null, ['https://cdn.example/5/s.png', null], 5, 12_345, 'EUR', '2026-12-31T23:59:59Z'],
  // Three-digit currency.
  [90006, a.workspaceId, 'software', 'Dinar tool', 'KWD.', ['x'], ['y'], 'https://cdn.example/6/t.png', 'https://cdn.example/6/p.png', null, null,
    ['https://cdn.example/6/s.png'], 1234, 5, 'KWD', '2026-06-15T06:07:08Z'],
  // Another seller's item.
  [90101, b.workspaceId, 'software', 'B item', 'B.', [], [], 'https://cdn.example/b/t.png', 'https://cdn.example/b/p.png', null, null, [], 100, 200, 'USD', '2026-01-01T00:00:00Z'],
];
for (const r of rows) {
  await pool.query(
    `INSERT INTO items (id, workspace_id, kind, name, description, category, sub_category, options, version, demo_link, tags,
       thumbnail_url, preview_image_url, preview_video_url, preview_audio_url, screenshots, price_regular_cents, price_extended_cents, currency, published_at)
     VALUES ($1, $2, $3, $4, $5, 'Cat', 'Sub cat', $6, '1.2.3', 'https://demo.example/' || $1::int, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)`,
    r,
  );
}

const code = (n: number) => `${String(n).repeat(8)}-${String(n).repeat(4)}-4${String(n).repeat(3)}-8${String(n).repeat(3)}-${String(n).repeat(12)}`;
// code, item, workspace, license, price (minor units), currency, supported_until, downloaded, purchased_at, refunded_at
const purchases: [string, number, number, string, number, string, string | null, boolean, string, string | null][] = [
  [code(1), 90001, a.workspaceId, 'regular', 1999, 'USD', '2027-05-22T10:00:00.5Z', true, '2026-11-22T10:00:00.999Z', null],
  [code(2), 90004, a.workspaceId, 'extended', 150_000, 'JPY', null, false, '2026-11-23T01:02:03Z', null],
  [code(3), 90005, a.workspaceId, 'regular', 5, 'EUR', '2026-01-01T00:00:00Z', false, '2025-07-01T00:00:00Z', null],
  [code(4), 90006, a.workspaceId, 'extended', 5, 'KWD', null, true, '2026-02-02T02:02:02Z', null],
  [code(5), 90001, a.workspaceId, 'regular', 1999, 'USD', null, false, '2026-03-03T03:03:03Z', '2026-03-04T00:00:00Z'], // refunded
  [code(6), 90101, b.workspaceId, 'regular', 100, 'USD', null, false, '2026-04-04T04:04:04Z', null], // another seller's
  [code(7), 90003, a.workspaceId, 'regular', 100_000_000_000, 'USD', '2030-01-01T00:00:00Z', false, '2026-05-05T05:05:05Z', null],
];
for (const p of purchases) {
  await pool.query(
    `INSERT INTO purchases (code, item_id, workspace_id, license, price_cents, currency, supported_until, downloaded, purchased_at, refunded_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
    p,
  );
}

/** Status, content type and the raw body, as one string. */
async function answer(method: 'GET' | 'POST' | 'HEAD', url: string, payload?: Record<string, unknown>): Promise<string> {
  const res = await h.app.inject({ method, url, ...(payload ? { payload } : {}) });
  const length = method === 'HEAD' ? ` length=${res.headers['content-length']}` : '';
  return `${res.statusCode} ${res.headers['content-type']}${length}\n${res.body}`;
}
afterEach(() => vi.restoreAllMocks());

const validate = (key: string, purchaseCode: string) => answer('POST', '/api/purchases/validation', { api_key: key, purchase_code: purchaseCode });

describe('GET /api/account/details, /api/items/all, /api/items/item, POST /api/purchases/validation: bytes on the wire — happy', () => {
  it('account', async () => {
    expect(await answer('GET', `/api/account/details?api_key=${a.readKey}`)).toBe(expected.account);
  });

  it('item list, and its HEAD', async () => {
    expect(await answer('GET', `/api/items/all?api_key=${a.readKey}`)).toBe(expected.items);
    expect(await answer('HEAD', `/api/items/all?api_key=${a.readKey}`)).toBe(expected.itemsHead);
    expect(await answer('GET', `/api/items/all?api_key=${b.readKey}`)).toBe(expected.itemsB);
  });

  it('one item, each of them', async () => {
    const got = [];
    for (const r of rows.filter((r) => r[1] === a.workspaceId)) got.push(await answer('GET', `/api/items/item?item_id=${r[0]}&api_key=${a.readKey}`));
    expect(got).toEqual(expected.item);
    expect(await answer('HEAD', `/api/items/item?item_id=90005&api_key=${a.readKey}`)).toBe(expected.itemHead);
  });

  it('validation: the item read fresh, then from the cache, then with the code in capitals', async () => {
    expect(await validate(a.readKey, code(1))).toBe(expected.validation1);
    expect(await validate(a.readKey, code(1))).toBe(expected.validation1);
    expect(await validate(a.readKey, ` ${code(1).toUpperCase()} `)).toBe(expected.validation1);
  });

  it('validations gathered into one lookup, each its own answer', async () => {
    const query = vi.spyOn(pool, 'query');
    const codes = [code(2), code(3), code(4), code(7), code(2), code(5), code(6)];
    expect(await Promise.all(codes.map((c) => validate(a.readKey, c)))).toEqual(expected.gathered);
    // They were answered by the statement for several codes, not one by one.
    expect(query.mock.calls.some(([config]) => (config as { name?: string }).name === 'catalog_purchases')).toBe(true);
  });
});

describe('GET /api/items/all, /api/items/item, POST /api/purchases/validation: bytes on the wire — errors', () => {
  it('misses and bad parameters', async () => {
    const got = [
      await answer('GET', `/api/items/all?api_key=${empty.readKey}`),
      await answer('GET', `/api/items/item?item_id=90101&api_key=${a.readKey}`),
      await answer('GET', `/api/items/item?item_id=99999&api_key=${a.readKey}`),
      await answer('GET', `/api/items/item?item_id=abc&api_key=${a.readKey}`),
      await answer('GET', `/api/items/item?api_key=${a.readKey}`),
      await validate(a.readKey, code(8)),
      await validate(a.readKey, code(5)),
      await validate(a.readKey, code(6)),
      await validate(a.readKey, 'not-a-code'),
      await validate(a.readKey, ''),
      await answer('GET', '/api/items/all?api_key=nope'),
    ];
    expect(got).toEqual(expected.errors);
  });
});

// Recorded from the answers while PostgreSQL built the JSON (row_to_json, json_agg): json_agg set
// the list's items apart with ", ", and the answers keep that.
const expected = {
  account:
    '200 application/json; charset=utf-8\n' +
    '{"status":"success","data":{"name":{"firstname":"Zoë","lastname":"O\'Brien \\"Z\\"","full_name":"Zoë O\'Brien \\"Z\\""},"username":"zoe_bytes","email":"zoe@bytes.example","balance":1234.56,"currency":"USD","profile":{"heading":"Tabs\\tand \\\\ slashes","description":"Line one\\nLine two \u2028 😀","contact":{"email":"help@bytes.example"},"social_links":{"x":"https://x.com/zoe","facebook":"https://facebook.com/zoe"},"media":{"avatar":"https://cdn.example/a.png","cover":"https://cdn.example/c.png"}},"registered_at":"2026-01-15T08:00:00Z"}}',
  items:
    '200 application/json; charset=utf-8\n' +
    '{"status":"success","items":[' +
    '{"id":90001,"name":"Nova Admin","description":"Every field set.","category":"Cat","sub_category":"Sub cat","options":["Dark mode","RTL"],"version":"1.2.3","demo_link":"https://demo.example/90001","tags":["admin","ui"],"media":{"thumbnail":"https://cdn.example/1/t.png","preview_image":"https://cdn.example/1/p.png","screenshots":["https://cdn.example/1/s1.png","https://cdn.example/1/s2.png"]},"price":{"regular":19.99,"extended":99},"currency":"USD","published_at":"2026-03-01T09:30:00Z"}, ' +
    '{"id":90002,"name":"Bare graphics","description":"","category":"Cat","sub_category":"Sub cat","options":[],"version":"1.2.3","demo_link":"https://demo.example/90002","tags":[],"media":{"thumbnail":"https://cdn.example/2/t.png"},"price":{"regular":0.5,"extended":0},"currency":"USD","published_at":"2026-03-02T00:00:00Z"}, ' +
    '{"id":90003,"name":"Clip","description":"Video.","category":"Cat","sub_category":"Sub cat","options":["4K"],"version":"1.2.3","demo_link":"https://demo.example/90003","tags":["stock"],"media":{"thumbnail":"https://cdn.example/3/t.png","preview_image":"https://cdn.example/3/p.png","preview_video":"https://cdn.example/3/v.mp4","screenshots":["https://cdn.example/3/s.png"]},"price":{"regular":1000000000,"extended":0.01},"currency":"USD","published_at":"2026-03-03T12:00:59Z"}, ' +
    '{"id":90004,"name":"Loop","description":"Audio.","category":"Cat","sub_category":"Sub cat","options":["WAV"],"version":"1.2.3","demo_link":"https://demo.example/90004","tags":["loop"],"media":{"thumbnail":"https://cdn.example/4/t.png","preview_audio":"https://cdn.example/4/a.mp3"},"price":{"regular":1999,"extended":150000},"currency":"JPY","published_at":"1970-01-01T00:00:00Z"}, ' +
    '{"id":90005,"name":"Quote \\" backslash \\\\ </script>","description":"Ctrl \\u0001\\b\\f\\u001f tab\\tnl\\nnl cr\\r del\u007f ls\u2028 é 😀","category":"Cat","sub_category":"Sub cat","options":["a,b","{braces}","q\\"uote"],"version":"1.2.3","demo_link":"https://demo.example/90005","tags":["NULL",""],"media":{"thumbnail":"https://cdn.example/5/t.png","screenshots":["https://cdn.example/5/s.png",null]},"price":{"regular":0.05,"extended":123.45},"currency":"EUR","published_at":"2026-12-31T23:59:59Z"}, ' +
    '{"id":90006,"name":"Dinar tool","description":"KWD.","category":"Cat","sub_category":"Sub cat","options":["x"],"version":"1.2.3","demo_link":"https://demo.example/90006","tags":["y"],"media":{"thumbnail":"https://cdn.example/6/t.png","preview_image":"https://cdn.example/6/p.png","screenshots":["https://cdn.example/6/s.png"]},"price":{"regular":1.234,"extended":0.005},"currency":"KWD","published_at":"2026-06-15T06:07:08Z"}]}',
  itemsHead:
    '200 application/json; charset=utf-8 length=2618\n',
  itemsB:
    '200 application/json; charset=utf-8\n' +
    '{"status":"success","items":[' +
    '{"id":90101,"name":"B item","description":"B.","category":"Cat","sub_category":"Sub cat","options":[],"version":"1.2.3","demo_link":"https://demo.example/90101","tags":[],"media":{"thumbnail":"https://cdn.example/b/t.png","preview_image":"https://cdn.example/b/p.png"},"price":{"regular":1,"extended":2},"currency":"USD","published_at":"2026-01-01T00:00:00Z"}]}',
  item: [
    '200 application/json; charset=utf-8\n' +
      '{"status":"success","item":' +
      '{"id":90001,"name":"Nova Admin","description":"Every field set.","category":"Cat","sub_category":"Sub cat","options":["Dark mode","RTL"],"version":"1.2.3","demo_link":"https://demo.example/90001","tags":["admin","ui"],"media":{"thumbnail":"https://cdn.example/1/t.png","preview_image":"https://cdn.example/1/p.png","screenshots":["https://cdn.example/1/s1.png","https://cdn.example/1/s2.png"]},"price":{"regular":19.99,"extended":99},"currency":"USD","published_at":"2026-03-01T09:30:00Z"}}',
    '200 application/json; charset=utf-8\n' +
      '{"status":"success","item":' +
      '{"id":90002,"name":"Bare graphics","description":"","category":"Cat","sub_category":"Sub cat","options":[],"version":"1.2.3","demo_link":"https://demo.example/90002","tags":[],"media":{"thumbnail":"https://cdn.example/2/t.png"},"price":{"regular":0.5,"extended":0},"currency":"USD","published_at":"2026-03-02T00:00:00Z"}}',
    '200 application/json; charset=utf-8\n' +
      '{"status":"success","item":' +
      '{"id":90003,"name":"Clip","description":"Video.","category":"Cat","sub_category":"Sub cat","options":["4K"],"version":"1.2.3","demo_link":"https://demo.example/90003","tags":["stock"],"media":{"thumbnail":"https://cdn.example/3/t.png","preview_image":"https://cdn.example/3/p.png","preview_video":"https://cdn.example/3/v.mp4","screenshots":["https://cdn.example/3/s.png"]},"price":{"regular":1000000000,"extended":0.01},"currency":"USD","published_at":"2026-03-03T12:00:59Z"}}',
    '200 application/json; charset=utf-8\n' +
      '{"status":"success","item":' +
      '{"id":90004,"name":"Loop","description":"Audio.","category":"Cat","sub_category":"Sub cat","options":["WAV"],"version":"1.2.3","demo_link":"https://demo.example/90004","tags":["loop"],"media":{"thumbnail":"https://cdn.example/4/t.png","preview_audio":"https://cdn.example/4/a.mp3"},"price":{"regular":1999,"extended":150000},"currency":"JPY","published_at":"1970-01-01T00:00:00Z"}}',
    '200 application/json; charset=utf-8\n' +
      '{"status":"success","item":' +
      '{"id":90005,"name":"Quote \\" backslash \\\\ </script>","description":"Ctrl \\u0001\\b\\f\\u001f tab\\tnl\\nnl cr\\r del\u007f ls\u2028 é 😀","category":"Cat","sub_category":"Sub cat","options":["a,b","{braces}","q\\"uote"],"version":"1.2.3","demo_link":"https://demo.example/90005","tags":["NULL",""],"media":{"thumbnail":"https://cdn.example/5/t.png","screenshots":["https://cdn.example/5/s.png",null]},"price":{"regular":0.05,"extended":123.45},"currency":"EUR","published_at":"2026-12-31T23:59:59Z"}}',
    '200 application/json; charset=utf-8\n' +
      '{"status":"success","item":' +
      '{"id":90006,"name":"Dinar tool","description":"KWD.","category":"Cat","sub_category":"Sub cat","options":["x"],"version":"1.2.3","demo_link":"https://demo.example/90006","tags":["y"],"media":{"thumbnail":"https://cdn.example/6/t.png","preview_image":"https://cdn.example/6/p.png","screenshots":["https://cdn.example/6/s.png"]},"price":{"regular":1.234,"extended":0.005},"currency":"KWD","published_at":"2026-06-15T06:07:08Z"}}',
  ],
  itemHead:
    '200 application/json; charset=utf-8 length=515\n',
  validation1:
    '200 application/json; charset=utf-8\n' +
    '{"status":"success","data":{"purchase":{"purchase_code":"11111111-1111-4111-8111-111111111111","license_type":"Regular","price":19.99,"currency":"USD","item":' +
    '{"id":90001,"name":"Nova Admin","description":"Every field set.","category":"Cat","sub_category":"Sub cat","options":["Dark mode","RTL"],"version":"1.2.3","demo_link":"https://demo.example/90001","tags":["admin","ui"],"media":{"thumbnail":"https://cdn.example/1/t.png","preview_image":"https://cdn.example/1/p.png","screenshots":["https://cdn.example/1/s1.png","https://cdn.example/1/s2.png"]},"price":{"regular":19.99,"extended":99},"currency":"USD","published_at":"2026-03-01T09:30:00Z"},"supported_until":"2027-05-22T10:00:00Z","downloaded":true,"date":"2026-11-22T10:00:00Z"}}}',
  gathered: [
    '200 application/json; charset=utf-8\n' +
      '{"status":"success","data":{"purchase":{"purchase_code":"22222222-2222-4222-8222-222222222222","license_type":"Extended","price":150000,"currency":"JPY","item":' +
      '{"id":90004,"name":"Loop","description":"Audio.","category":"Cat","sub_category":"Sub cat","options":["WAV"],"version":"1.2.3","demo_link":"https://demo.example/90004","tags":["loop"],"media":{"thumbnail":"https://cdn.example/4/t.png","preview_audio":"https://cdn.example/4/a.mp3"},"price":{"regular":1999,"extended":150000},"currency":"JPY","published_at":"1970-01-01T00:00:00Z"},"downloaded":false,"date":"2026-11-23T01:02:03Z"}}}',
    '200 application/json; charset=utf-8\n' +
      '{"status":"success","data":{"purchase":{"purchase_code":"33333333-3333-4333-8333-333333333333","license_type":"Regular","price":0.05,"currency":"EUR","item":' +
      '{"id":90005,"name":"Quote \\" backslash \\\\ </script>","description":"Ctrl \\u0001\\b\\f\\u001f tab\\tnl\\nnl cr\\r del\u007f ls\u2028 é 😀","category":"Cat","sub_category":"Sub cat","options":["a,b","{braces}","q\\"uote"],"version":"1.2.3","demo_link":"https://demo.example/90005","tags":["NULL",""],"media":{"thumbnail":"https://cdn.example/5/t.png","screenshots":["https://cdn.example/5/s.png",null]},"price":{"regular":0.05,"extended":123.45},"currency":"EUR","published_at":"2026-12-31T23:59:59Z"},"supported_until":"2026-01-01T00:00:00Z","downloaded":false,"date":"2025-07-01T00:00:00Z"}}}',
    '200 application/json; charset=utf-8\n' +
      '{"status":"success","data":{"purchase":{"purchase_code":"44444444-4444-4444-8444-444444444444","license_type":"Extended","price":0.005,"currency":"KWD","item":' +
      '{"id":90006,"name":"Dinar tool","description":"KWD.","category":"Cat","sub_category":"Sub cat","options":["x"],"version":"1.2.3","demo_link":"https://demo.example/90006","tags":["y"],"media":{"thumbnail":"https://cdn.example/6/t.png","preview_image":"https://cdn.example/6/p.png","screenshots":["https://cdn.example/6/s.png"]},"price":{"regular":1.234,"extended":0.005},"currency":"KWD","published_at":"2026-06-15T06:07:08Z"},"downloaded":true,"date":"2026-02-02T02:02:02Z"}}}',
    '200 application/json; charset=utf-8\n' +
      '{"status":"success","data":{"purchase":{"purchase_code":"77777777-7777-4777-8777-777777777777","license_type":"Regular","price":1000000000,"currency":"USD","item":' +
      '{"id":90003,"name":"Clip","description":"Video.","category":"Cat","sub_category":"Sub cat","options":["4K"],"version":"1.2.3","demo_link":"https://demo.example/90003","tags":["stock"],"media":{"thumbnail":"https://cdn.example/3/t.png","preview_image":"https://cdn.example/3/p.png","preview_video":"https://cdn.example/3/v.mp4","screenshots":["https://cdn.example/3/s.png"]},"price":{"regular":1000000000,"extended":0.01},"currency":"USD","published_at":"2026-03-03T12:00:59Z"},"supported_until":"2030-01-01T00:00:00Z","downloaded":false,"date":"2026-05-05T05:05:05Z"}}}',
    '200 application/json; charset=utf-8\n' +
      '{"status":"success","data":{"purchase":{"purchase_code":"22222222-2222-4222-8222-222222222222","license_type":"Extended","price":150000,"currency":"JPY","item":' +
      '{"id":90004,"name":"Loop","description":"Audio.","category":"Cat","sub_category":"Sub cat","options":["WAV"],"version":"1.2.3","demo_link":"https://demo.example/90004","tags":["loop"],"media":{"thumbnail":"https://cdn.example/4/t.png","preview_audio":"https://cdn.example/4/a.mp3"},"price":{"regular":1999,"extended":150000},"currency":"JPY","published_at":"1970-01-01T00:00:00Z"},"downloaded":false,"date":"2026-11-23T01:02:03Z"}}}',
    '404 application/json; charset=utf-8\n' +
      '{"status":"error","msg":"Invalid purchase code"}',
    '404 application/json; charset=utf-8\n' +
      '{"status":"error","msg":"Invalid purchase code"}',
  ],
  errors: [
    '404 application/json; charset=utf-8\n' +
      '{"status":"error","msg":"No items found"}',
    '404 application/json; charset=utf-8\n' +
      '{"status":"error","msg":"Item Not Found"}',
    '404 application/json; charset=utf-8\n' +
      '{"status":"error","msg":"Item Not Found"}',
    '400 application/json; charset=utf-8\n' +
      '{"status":"error","msg":"The item_id must be an integer."}',
    '400 application/json; charset=utf-8\n' +
      '{"status":"error","msg":"The item_id field is required."}',
    '404 application/json; charset=utf-8\n' +
      '{"status":"error","msg":"Invalid purchase code"}',
    '404 application/json; charset=utf-8\n' +
      '{"status":"error","msg":"Invalid purchase code"}',
    '404 application/json; charset=utf-8\n' +
      '{"status":"error","msg":"Invalid purchase code"}',
    '404 application/json; charset=utf-8\n' +
      '{"status":"error","msg":"Invalid purchase code"}',
    '400 application/json; charset=utf-8\n' +
      '{"status":"error","msg":"The purchase_code field is required."}',
    '401 application/json; charset=utf-8\n' +
      '{"status":"error","msg":"Invalid request"}',
  ],
};
