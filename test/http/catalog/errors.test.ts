import { Readable } from 'node:stream';
import type { InjectOptions } from 'fastify';
import { describe, expect, it, vi } from 'vitest';
import { generateRawKey } from '../../../src/domain/keys/key-format.js';
import { createPublisher } from '../../../src/domain/publishers/publisher-service.js';
import { setupApp } from '../../helpers/app.js';
import { runCli } from '../../helpers/cli.js';
import { workspaceWithKeys } from '../../helpers/fixtures.js';
import { seller } from './fixtures.js';

// Every row of docs/interface-b.md's error table, the api_key placements, and bad inputs: each
// answers {"status":"error","msg":...} with the contract's status, never a 500, never Interface A's shape.
// Per-endpoint parameter errors have their own blocks; the others cover all four endpoints at once (happy blocks are in catalog.test.ts).

const h = await setupApp({ UNKNOWN_KEY_RATE_LIMIT_PER_MINUTE: 100_000 });
const s = await seller(h.database);
const other = await seller(h.database);

type Res = Awaited<ReturnType<typeof h.app.inject>>;
const inject = (opts: InjectOptions) => h.app.inject(opts);
const get = (url: string, extra: Partial<InjectOptions> = {}) => inject({ method: 'GET', url, ...extra });
const validate = (payload: unknown, extra: Partial<InjectOptions> = {}) =>
  inject({ method: 'POST', url: '/api/purchases/validation', payload: payload as Record<string, unknown>, ...extra });
const form = (_?: string) => ({ 'content-type': 'application/x-www-form-urlencoded' });

function expectError(res: Res, status: number, msg: string) {
  expect(res.statusCode, res.body).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  expect(res.json()).toEqual({ status: 'error', msg });
}

const invalidRequest = (res: Res) => expectError(res, 401, 'Invalid request');

describe('Every Interface B endpoint: 401 Invalid request for every way the key can be wrong — security', () => {
  const endpoints: [string, (key: string | undefined) => Promise<Res>][] = [
    ['account', (k) => get(`/api/account/details${k === undefined ? '' : `?api_key=${encodeURIComponent(k)}`}`)],
    ['items', (k) => get(`/api/items/all${k === undefined ? '' : `?api_key=${encodeURIComponent(k)}`}`)],
    ['item', (k) => get(`/api/items/item?item_id=${s.itemIds[0]}${k === undefined ? '' : `&api_key=${encodeURIComponent(k)}`}`)],
    ['validation', (k) => validate(k === undefined ? { purchase_code: s.code } : { api_key: k, purchase_code: s.code })],
  ];
  for (const [name, call] of endpoints) {
    it(`${name}: missing, empty, blank, malformed, unknown`, async () => {
      for (const key of [undefined, '', '   ', 'not-a-key', generateRawKey()]) invalidRequest(await call(key));
    });
  }

  it('a revoked key', async () => {
    const ws = await workspaceWithKeys(h.database.pool);
    await runCli(['key', 'revoke', '--id', String(ws.readKeyId)], { DATABASE_URL: h.database.url });
    invalidRequest(await get(`/api/account/details?api_key=${ws.readKey}`));
  });

  it('a spending key, even a valid one, with a valid code', async () => {
    invalidRequest(await get(`/api/account/details?api_key=${s.spendKey}`));
    invalidRequest(await get(`/api/items/all?api_key=${s.spendKey}`));
    invalidRequest(await validate({ api_key: s.spendKey, purchase_code: s.code }));
    invalidRequest(await get(`/api/items/item?item_id=${s.itemIds[0]}`, { headers: { authorization: `Bearer ${s.spendKey}` } }));
  });

  it('a publisher key', async () => {
    const pub = await createPublisher(h.database.pool, 'Catalog test publisher');
    invalidRequest(await get(`/api/items/all?api_key=${pub.key}`));
  });

  it('the key twice with different values (query + body, query + bearer, repeated query)', async () => {
    const ws = await workspaceWithKeys(h.database.pool);
    invalidRequest(await validate({ api_key: s.readKey, purchase_code: s.code }, { query: { api_key: ws.readKey } }));
    invalidRequest(await get(`/api/items/all?api_key=${s.readKey}`, { headers: { authorization: `Bearer ${ws.readKey}` } }));
    invalidRequest(await get(`/api/items/all?api_key=${s.readKey}&api_key=${ws.readKey}`));
    invalidRequest(await get(`/api/items/all?api_key=${s.readKey}&api_key=`));
    // The same value twice is one key.
    expect((await get(`/api/items/all?api_key=${s.readKey}&api_key=${s.readKey}`)).statusCode).toBe(200);
    expect((await get(`/api/items/all?api_key=${s.readKey}`, { headers: { authorization: `Bearer ${s.readKey}` } })).statusCode).toBe(200);
  });

  it('a key that is not a string in JSON, or a malformed Bearer header', async () => {
    invalidRequest(await validate({ api_key: 12345, purchase_code: s.code }));
    invalidRequest(await validate({ api_key: [s.readKey], purchase_code: s.code }));
    invalidRequest(await validate({ api_key: { k: s.readKey }, purchase_code: s.code }));
    invalidRequest(await get('/api/items/all', { headers: { authorization: `Bearer ${s.readKey} ${s.readKey}` } }));
  });

  it('is checked before the other parameters (401 before 400 and 404)', async () => {
    invalidRequest(await get('/api/items/item'));
    invalidRequest(await get('/api/items/item?item_id=abc&api_key=nope'));
    invalidRequest(await validate({ api_key: s.spendKey }));
    invalidRequest(await validate({ api_key: 'nope', purchase_code: 'not-a-code' }));
  });

  it('never in Interface A shape, but with the request id and rate-limit headers', async () => {
    const res = await get('/api/items/all');
    expect(res.json()).not.toHaveProperty('code');
    expect(res.json()).not.toHaveProperty('request_id');
    expect(res.headers['x-request-id']).toBeDefined();
    // No key and an unknown key both count per address.
    expect(res.headers['x-ratelimit-limit']).toBeDefined();
    const unknown = await get(`/api/items/all?api_key=${generateRawKey()}`);
    expect(unknown.statusCode).toBe(401);
    expect(unknown.headers['x-ratelimit-limit']).toBeDefined();
    const spending = await get(`/api/items/all?api_key=${s.spendKey}`);
    expect(spending.headers['x-ratelimit-remaining']).toBeDefined();
  });
});

describe('Every Interface B endpoint: api_key placements (query, form, JSON, bearer; trimmed) — happy', () => {
  const ok = (res: Res) => expect(res.statusCode, res.body).toBe(200);

  it('on GET: query, form body, JSON body, bearer', async () => {
    ok(await get(`/api/items/all?api_key=${s.readKey}`));
    ok(await get('/api/items/all', { headers: form(''), payload: `api_key=${s.readKey}` }));
    ok(await get('/api/items/all', { headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ api_key: s.readKey }) }));
    ok(await get('/api/items/all', { headers: { authorization: `Bearer ${s.readKey}` } }));
    ok(await get('/api/account/details', { headers: form(''), payload: `api_key=${s.readKey}` }));
  });

  it('on POST: query, form body, JSON body, bearer', async () => {
    ok(await validate(undefined, { query: { api_key: s.readKey, purchase_code: s.code } }));
    ok(await validate(`api_key=${s.readKey}&purchase_code=${s.code}`, { headers: form('') }));
    ok(await validate({ api_key: s.readKey, purchase_code: s.code }));
    ok(await validate({ purchase_code: s.code }, { headers: { authorization: `Bearer ${s.readKey}` } }));
  });

  it('trims spaces, tabs and newlines around the key', async () => {
    ok(await get(`/api/items/all?api_key=${encodeURIComponent(`  ${s.readKey}\n`)}`));
    ok(await validate({ api_key: `\t${s.readKey} `, purchase_code: s.code }));
    ok(await validate(`api_key=+${s.readKey}+&purchase_code=${s.code}`, { headers: form('') }));
  });

  it('item_id and purchase_code also come from any place, on GET and POST alike', async () => {
    ok(await get(`/api/items/item?api_key=${s.readKey}`, { headers: form(''), payload: `item_id=${s.itemIds[0]}` }));
    ok(await get('/api/items/item', { headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ api_key: s.readKey, item_id: s.itemIds[0] }) }));
    ok(await get('/api/items/item', { headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ api_key: s.readKey, item_id: String(s.itemIds[0]) }) }));
    ok(await validate({ api_key: s.readKey }, { query: { purchase_code: s.code } }));
  });
});

describe('GET /api/items/item — errors', () => {
  const item = (q: string) => get(`/api/items/item?api_key=${s.readKey}${q}`);

  it('item_id missing or empty → The item_id field is required.', async () => {
    expectError(await item(''), 400, 'The item_id field is required.');
    expectError(await item('&item_id='), 400, 'The item_id field is required.');
    expectError(await item('&item_id=%20%20'), 400, 'The item_id field is required.');
    expectError(await validate({ api_key: s.readKey, item_id: null }, { method: 'GET', url: '/api/items/item' }), 400, 'The item_id field is required.');
  });

  it('item_id not an integer in 1..2147483647 → The item_id must be an integer.', async () => {
    for (const bad of ['abc', '1.5', '-1', '0', '9999999999999999999', '2147483648', '1e3', '0x10', `${s.itemIds[0]}abc`, '%2B1', '%E2%80%8B1']) {
      expectError(await item(`&item_id=${bad}`), 400, 'The item_id must be an integer.');
    }
    expectError(await item(`&item_id=${s.itemIds[0]}&item_id=${s.itemIds[1]}`), 400, 'The item_id must be an integer.');
    for (const bad of [1.5, -3, true, [1], { id: 1 }, 9999999999999999999]) {
      const res = await get('/api/items/item', { headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ api_key: s.readKey, item_id: bad }) });
      expectError(res, 400, 'The item_id must be an integer.');
    }
  });

  it('item_id of another seller, or no such item → Item Not Found', async () => {
    expectError(await item(`&item_id=${other.itemIds[0]}`), 404, 'Item Not Found');
    expectError(await item('&item_id=2147483647'), 404, 'Item Not Found');
    expect((await item(`&item_id=${encodeURIComponent(` ${s.itemIds[0]} `)}`)).statusCode).toBe(200);
    // Leading zeros do not count towards the ten digits of the largest id.
    expect((await item(`&item_id=${String(s.itemIds[0]).padStart(14, '0')}`)).statusCode).toBe(200);
    expectError(await item('&item_id=02147483647'), 404, 'Item Not Found');
    expectError(await item('&item_id=0000000000000'), 400, 'The item_id must be an integer.');
    // The same id with and without leading zeros, in the query and a JSON body, is one value.
    const json = { 'content-type': 'application/json' };
    expect((await get(`/api/items/item?item_id=0${s.itemIds[0]}`, { headers: json, payload: JSON.stringify({ api_key: s.readKey, item_id: s.itemIds[0] }) })).statusCode).toBe(200);
    expectError(await get(`/api/items/item?item_id=0${s.itemIds[0]}`, { headers: json, payload: JSON.stringify({ api_key: s.readKey, item_id: s.itemIds[1] }) }), 400, 'The item_id must be an integer.');
  });
});

describe('GET /api/items/all — errors', () => {
  it('no items for the key → No items found', async () => {
    const empty = await workspaceWithKeys(h.database.pool);
    expectError(await get(`/api/items/all?api_key=${empty.readKey}`), 404, 'No items found');
    expectError(await get(`/api/items/item?api_key=${empty.readKey}&item_id=1`), 404, 'Item Not Found');
  });
});

describe('POST /api/purchases/validation — errors', () => {
  it('purchase_code missing, or empty after trimming → The purchase_code field is required.', async () => {
    const required = 'The purchase_code field is required.';
    expectError(await validate({ api_key: s.readKey }), 400, required);
    expectError(await validate({ api_key: s.readKey, purchase_code: '' }), 400, required);
    expectError(await validate({ api_key: s.readKey, purchase_code: ' \n\t ' }), 400, required);
    expectError(await validate({ api_key: s.readKey, purchase_code: null }), 400, required);
    expectError(await validate(`api_key=${s.readKey}&purchase_code=`, { headers: form('') }), 400, required);
    expectError(await validate(undefined, { query: { api_key: s.readKey } }), 400, required);
  });

  it('codes that do not validate → Invalid purchase code', async () => {
    const ws = await seller(h.database); // a fresh key: these count towards its guard (30 a minute)
    const invalid = 'Invalid purchase code';
    const cases: unknown[] = [
      '00000000-0000-4000-8000-000000000000', // well-formed, unknown
      'not-a-uuid',
      ws.code.replace(/-/g, ''), // PostgreSQL would accept it; we do not
      `{${ws.code}}`,
      `${ws.code}x`,
      'x'.repeat(65),
      'a'.repeat(4 * 1024), // 4 KB (a body over 8 KB is a 413)
      "' OR 1=1 --",
      `${ws.code}' OR '1'='1`,
      '😀🔑𝔘𝔑𝔌ℭ𝔒𝔇𝔈',
      `${ws.code.slice(0, -1)}é`,
      '\u0000',
      12345,
      true,
      { code: ws.code },
      [ws.code],
    ];
    for (const code of cases) expectError(await validate({ api_key: ws.readKey, purchase_code: code }), 404, invalid);
    // Two different codes in two places.
    expectError(await validate({ api_key: ws.readKey, purchase_code: ws.code }, { query: { purchase_code: other.code } }), 404, invalid);
    // The valid code, padded with spaces and a newline, still validates once trimmed.
    const padded = await validate({ api_key: ws.readKey, purchase_code: `  ${ws.code} \n` });
    expect(padded.statusCode).toBe(200);
    expect(padded.json().data.purchase.purchase_code).toBe(ws.code);
    const viaForm = await validate(`api_key=${ws.readKey}&purchase_code=${encodeURIComponent(` ${ws.code}\n`)}`, { headers: form('') });
    expect(viaForm.statusCode).toBe(200);
  });
});

describe('Every Interface B endpoint: 400 Invalid request for bad bodies — errors', () => {
  const json = { 'content-type': 'application/json' };

  it('unparseable JSON, on POST and GET', async () => {
    expectError(await validate('{"api_key": ', { headers: json }), 400, 'Invalid request');
    expectError(await get('/api/items/all', { headers: json, payload: '{oops' }), 400, 'Invalid request');
  });

  it('a JSON body that is not an object', async () => {
    for (const body of ['[]', '"text"', '42', 'null', 'true', `["${s.readKey}"]`]) {
      expectError(await validate(body, { headers: json }), 400, 'Invalid request');
      expectError(await get(`/api/items/all?api_key=${s.readKey}`, { headers: json, payload: body }), 400, 'Invalid request');
    }
  });

  it('a JSON member given twice: different values conflict, the same value twice is one value', async () => {
    const twice = (name: string, a: string | number, b: string | number, rest = '') =>
      `{${rest}"${name}":${JSON.stringify(a)}, "x": {"${name}": 1}, "${name}" : ${JSON.stringify(b)}}`;
    invalidRequest(await validate(twice('api_key', other.readKey, s.readKey, `"purchase_code":"${s.code}",`), { headers: json }));
    expect((await validate(twice('api_key', s.readKey, ` ${s.readKey} `, `"purchase_code":"${s.code}",`), { headers: json })).statusCode).toBe(200);
    const code = await validate(twice('purchase_code', 'ffffffff-ffff-4fff-bfff-ffffffffffff', s.code, `"api_key":"${s.readKey}",`), { headers: json });
    expectError(code, 404, 'Invalid purchase code');
    // Codes validate whatever their case, so one code in two cases is one value.
    const cased = await validate(twice('purchase_code', s.code.toUpperCase(), s.code, `"api_key":"${s.readKey}",`), { headers: json });
    expect(cased.statusCode).toBe(200);
    const acrossParts = await validate(`api_key=${s.readKey}&purchase_code=${s.code.toUpperCase()}`, { headers: form(''), query: { purchase_code: s.code } });
    expect(acrossParts.statusCode).toBe(200);
    const item = await get(`/api/items/item?api_key=${s.readKey}`, { headers: json, payload: twice('item_id', 999, s.itemIds[0]!) });
    expectError(item, 400, 'The item_id must be an integer.');
    expect((await get(`/api/items/item?api_key=${s.readKey}`, { headers: json, payload: twice('item_id', s.itemIds[0]!, String(s.itemIds[0])) })).statusCode).toBe(200);
  });

  it('an unparseable form body (bad percent-encoding)', async () => {
    expectError(await validate(`api_key=${s.readKey}&purchase_code=%ZZ`, { headers: form('') }), 400, 'Invalid request');
    expectError(await validate('api_key=%E0%A4%A', { headers: form('') }), 400, 'Invalid request');
    expectError(await get('/api/items/all', { headers: form(''), payload: 'api_key=%' }), 400, 'Invalid request');
  });

  it('a body in a media type Interface B does not read', async () => {
    expectError(await validate(`api_key=${s.readKey}`, { headers: { 'content-type': 'text/plain' } }), 400, 'Invalid request');
    expectError(await get(`/api/items/all?api_key=${s.readKey}`, { headers: { 'content-type': 'application/xml' }, payload: '<a/>' }), 400, 'Invalid request');
  });

  it('an empty body is no body, whatever its media type, on POST as on GET', async () => {
    expect((await validate('', { headers: json, query: { api_key: s.readKey, purchase_code: s.code } })).statusCode).toBe(200);
    expect((await get(`/api/items/all?api_key=${s.readKey}`, { headers: json, payload: '' })).statusCode).toBe(200);
    for (const type of ['text/plain', 'application/octet-stream', 'application/x-www-form-urlencoded']) {
      for (const body of ['', ' \n\t ']) {
        const res = await validate(body, { headers: { 'content-type': type }, query: { api_key: s.readKey, purchase_code: s.code } });
        expect(res.statusCode, `${type} ${JSON.stringify(body)}`).toBe(200);
        const onGet = await get(`/api/items/all?api_key=${s.readKey}`, { headers: { 'content-type': type }, payload: body });
        expect(onGet.statusCode, `GET ${type} ${JSON.stringify(body)}`).toBe(200);
      }
    }
  });

  it('413 Payload too large over the 8 KB limit (here 1 MB), on POST and GET', async () => {
    const big = JSON.stringify({ api_key: s.readKey, purchase_code: s.code, pad: 'x'.repeat(1024 * 1024) });
    expectError(await validate(big, { headers: json }), 413, 'Payload too large');
    expectError(await get('/api/items/all', { headers: json, payload: big }), 413, 'Payload too large');
    expectError(await validate(`api_key=${s.readKey}&pad=${'x'.repeat(1024 * 1024)}`, { headers: form('') }), 413, 'Payload too large');
    // A media type Interface B does not read is still measured first, declared or chunked.
    expectError(await validate('x'.repeat(1024 * 1024 + 1), { headers: { 'content-type': 'text/plain' } }), 413, 'Payload too large');
    const chunked = await validate(Readable.from([Buffer.alloc(600_000), Buffer.alloc(600_000)]), { headers: { 'content-type': 'application/octet-stream', 'transfer-encoding': 'chunked' } });
    expectError(chunked, 413, 'Payload too large');
  });

  it('Interface A still refuses forms', async () => {
    const res = await inject({ method: 'POST', url: '/api/v1/plan', headers: { ...form(''), authorization: `Bearer ${s.readKey}` }, payload: 'goal=x' });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 'bad_request' });
  });
});

describe('Unknown Interface B paths and methods: 404 Not found and 405 Method not allowed — errors', () => {
  it('unknown paths under the three prefixes answer in Interface B shape, without a key', async () => {
    for (const url of ['/api/account', '/api/account/nope', '/api/items', '/api/items/every', '/api/purchases', '/api/purchases/validate', '/api/items/all/x?api_key=1', '/api//account/details', '//api/items/all', '/api/purchases//validation']) {
      expectError(await get(url), 404, 'Not found');
    }
    // Interface A keeps its own shape.
    expect((await get('/api/v1/nope')).json()).toMatchObject({ code: 'not_found' });
    expect((await get('/api/accounting')).json()).toMatchObject({ code: 'not_found' });
  });

  it('a known path with another method', async () => {
    const cases: [InjectOptions['method'], string, string][] = [
      ['GET', '/api/purchases/validation', 'POST'],
      ['PUT', '/api/purchases/validation', 'POST'],
      ['POST', '/api/items/all', 'GET, HEAD'],
      ['DELETE', '/api/items/item', 'GET, HEAD'],
      ['PATCH', '/api/account/details', 'GET, HEAD'],
      ['OPTIONS', '/api/account/details/', 'GET, HEAD'],
    ];
    for (const [method, url, allow] of cases) {
      const res = await inject({ method, url: `${url}?api_key=${s.readKey}` });
      expectError(res, 405, 'Method not allowed');
      expect(res.headers.allow).toBe(allow);
    }
  });

  it('a path the router cannot decode: 400 in Interface B shape (Interface A keeps its own)', async () => {
    for (const url of ['/api/items/%E0%A4%A', '/api/purchases/%', `/api/account/%ZZ?api_key=${s.readKey}`]) {
      const res = await get(url);
      expectError(res, 400, 'Invalid request');
      expect(res.headers['x-request-id']).toBeDefined();
    }
    const a = await get('/api/v1/%E0%A4%A');
    expect(a.statusCode).toBe(400);
    expect(a.json()).toMatchObject({ code: 'bad_request', request_id: a.headers['x-request-id'] });
  });

  it('HEAD works where GET does', async () => {
    const res = await inject({ method: 'HEAD', url: `/api/items/all?api_key=${s.readKey}` });
    expect(res.statusCode).toBe(200);
  });
});

describe('Every Interface B endpoint: 503 Service unavailable — errors', () => {
  it('when the database cannot be reached (a cached key, the query fails)', async () => {
    expect((await get(`/api/items/all?api_key=${s.readKey}`)).statusCode).toBe(200); // key cached
    const down = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    for (const call of [
      () => get(`/api/items/all?api_key=${s.readKey}`),
      () => get(`/api/account/details?api_key=${s.readKey}`),
      () => get(`/api/items/item?api_key=${s.readKey}&item_id=${s.itemIds[0]}`),
      () => validate({ api_key: s.readKey, purchase_code: s.code }),
    ]) {
      const spy = vi.spyOn(h.database.pool, 'query').mockRejectedValueOnce(down);
      try {
        const res = await call();
        expectError(res, 503, 'Service unavailable');
        expect(res.body).not.toMatch(/ECONNREFUSED|127\.0\.0\.1/);
      } finally {
        spy.mockRestore();
      }
    }
  });
});

describe("What Node's HTTP parser refuses answers in the path's own shape — errors", () => {
  /** Sends raw bytes on a real socket and reads the reply until the server closes it. */
  async function raw(request: string): Promise<{ status: number; body: unknown }> {
    if (!h.app.server.listening) await h.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = h.app.server.address() as import('node:net').AddressInfo;
    const { connect } = await import('node:net');
    const socket = connect({ host: '127.0.0.1', port });
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.write(request, 'latin1');
    await new Promise((r) => socket.once('close', r));
    const text = Buffer.concat(chunks).toString('utf8');
    const [head, body] = text.split('\r\n\r\n') as [string, string];
    return { status: Number(head.split(' ')[1]), body: JSON.parse(body) };
  }

  it.each([
    ['a Content-Length that is not a number', 'POST /api/purchases/validation HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n'],
    ['two different Content-Lengths', 'GET /api/account/details HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nx'],
    ['a raw 0xFF byte in the path', 'GET /api/items/all\xff HTTP/1.1\r\nHost: x\r\n\r\n'],
  ])('Interface B: %s → 400 Invalid request', async (_name, request) => {
    expect(await raw(request)).toEqual({ status: 400, body: { status: 'error', msg: 'Invalid request' } });
  });

  it('each refused request still writes its one log line, its secrets redacted', async () => {
    const before = h.logs.length;
    const key = s.readKey;
    const res = await raw(`GET /api/account/details?api_key=${key} HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nx`);
    expect(res.status).toBe(400);
    const lines = h.logs.slice(before).map((l) => JSON.parse(l)).filter((l) => l.msg === 'request');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ method: 'GET', route: null, url: '/api/account/details?api_key=[REDACTED]', status: 400 });
    expect(typeof lines[0].request_id).toBe('string');
    expect(h.logs.slice(before).join('')).not.toContain(key);
  });

  it('two Authorization headers with different keys → 401 (Invalid request on Interface B); the same key twice is one key', async () => {
    const twice = (a: string, b: string) =>
      raw(`GET /api/account/details HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${a}\r\nAuthorization: Bearer ${b}\r\nConnection: close\r\n\r\n`);
    expect(await twice(s.readKey, other.readKey)).toEqual({ status: 401, body: { status: 'error', msg: 'Invalid request' } });
    expect((await twice(s.readKey, s.readKey)).status).toBe(200);
    // Interface A refuses them too: Node keeps the first header, so which key acted depended on the order.
    const twiceA = (a: string, b: string) =>
      raw(`GET /api/v1/me HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${a}\r\nAuthorization: Bearer ${b}\r\nConnection: close\r\n\r\n`);
    const refused = await twiceA(s.readKey, other.readKey);
    expect(refused.status).toBe(401);
    expect(refused.body).toMatchObject({ code: 'unauthenticated' });
    expect((await twiceA(other.readKey, s.readKey)).status).toBe(401);
    expect((await twiceA(s.readKey, s.readKey)).status).toBe(200);
  });

  it('Interface A, and a request line that cannot be read, keep Interface A\'s shape', async () => {
    for (const request of ['GET /api/v1/me HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n', '\x01\x02 nonsense\r\n\r\n']) {
      const res = await raw(request);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: 'bad_request', message: 'The request could not be understood.' });
    }
  });
});
