import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { setupApp } from '../helpers/app.js';
import { bearer, workspaceWithKeys } from '../helpers/fixtures.js';
import { mcpHeaders } from '../mcp/helpers.js';

// The worst bodies a client without a key (or with a read-only one) can send: each is refused with
// a 4xx before it is parsed whole, and every refusal of a request without a valid key counts in
// its address's bucket. (How little they cost is measured by `npm run bench -- hostile`.)

const h = await setupApp();
const ws = await workspaceWithKeys(h.database.pool);

const MB = 1024 * 1024;
const bodies = {
  deep: { type: 'application/json', payload: '['.repeat(499_950) + ']'.repeat(499_950) },
  form: { type: 'application/x-www-form-urlencoded', payload: Array.from({ length: 100_000 }, (_, i) => `p${i}=1`).join('&') },
  members: { type: 'application/json', payload: JSON.stringify(Object.fromEntries(Array.from({ length: 75_000 }, (_, i) => [`m${i}`, 1]))) },
  whitespace: { type: 'application/json', payload: ' '.repeat(MB - 1) },
};
const named = Object.entries(bodies);

type Status = number;
const post = (url: string, body: { type: string; payload: string }, headers: Record<string, string> = {}, remoteAddress = '127.0.0.1') =>
  h.app.inject({ method: 'POST', url, headers: { 'content-type': body.type, ...headers }, payload: body.payload, remoteAddress });

describe('POST /api/v1/orders, /api/v1/plan and /api/purchases/validation: hostile bodies — errors', () => {
  it('Interface B refuses each with 413 before reading it (8 KB is its limit)', async () => {
    for (const [name, body] of named) {
      const res = await post('/api/purchases/validation', body, {}, `10.20.0.${named.findIndex(([n]) => n === name) + 1}`);
      expect(res.statusCode, name).toBe(413);
      expect(res.json(), name).toEqual({ status: 'error', msg: 'Payload too large' });
    }
  });

  it('with a key, each is a 400 or 413 naming what is wrong, never parsed whole', async () => {
    const expected: Record<string, Record<string, Status>> = {
      // /plan takes 64 KB; the routes that take an article, 1 MB. Interface A reads no forms (400).
      '/api/v1/plan': { deep: 413, form: 400, members: 413, whitespace: 413 },
      '/api/v1/orders': { deep: 400, form: 400, members: 400, whitespace: 422 },
      '/mcp': { deep: 400, form: 400, members: 400, whitespace: 400 },
    };
    for (const [url, statuses] of Object.entries(expected)) {
      const key = url === '/api/v1/orders' ? ws.spendKey : ws.readKey;
      const headers = { ...bearer(key), 'idempotency-key': `hostile-${url}`, ...(url === '/mcp' ? { accept: mcpHeaders().accept } : {}) };
      for (const [name, body] of named) {
        const res = await post(url, body, headers);
        expect(res.statusCode, `${name} ${url}: ${res.body.slice(0, 200)}`).toBe(statuses[name]);
      }
    }
    const deep = await post('/api/v1/orders', bodies.deep, { ...bearer(ws.spendKey), 'idempotency-key': 'hostile-deep' });
    expect(deep.json().message).toMatch(/more than 32 levels deep/);
    const many = await post('/api/v1/orders', bodies.members, { ...bearer(ws.spendKey), 'idempotency-key': 'hostile-many' });
    expect(many.json().message).toMatch(/more than 10,000 members and array elements/);
  });

  it('Interface B answers a deep body under its 8 KB as its specification does, without the nesting rule (docs/http.md)', async () => {
    const nested = `{"api_key":"${ws.readKey}","x":${'{"a":'.repeat(40)}1${'}'.repeat(40)}}`;
    const res = await post('/api/purchases/validation', { type: 'application/json', payload: nested });
    expect(res.json()).toEqual({ status: 'error', msg: 'The purchase_code field is required.' });
    expect(res.statusCode).toBe(400);
  });

  it('a 422 names at most 20 fields, with errors_omitted for the rest', async () => {
    const members = Object.fromEntries(Array.from({ length: 2_000 }, (_, i) => [`unknown_${i}`, 1]));
    const res = await h.app.inject({ method: 'POST', url: '/api/v1/plan', headers: bearer(ws.readKey), payload: { goal: 'a travel app', budget_usd: 100, ...members } });
    expect(res.statusCode).toBe(422);
    expect(Object.keys(res.json().errors)).toHaveLength(20);
    expect(res.json().errors_omitted).toBe(1_980);
  });

  it('closes the connection rather than read a body it refused unread', async () => {
    if (!h.app.server.listening) await h.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = h.app.server.address() as { port: number };
    const exchange = (head: string) =>
      new Promise<{ received: string; closed: boolean }>((resolve) => {
        const socket = connect({ port, host: '127.0.0.1' });
        let received = '';
        socket.setEncoding('utf8').on('data', (d: string) => (received += d));
        socket.on('error', () => {});
        socket.on('close', () => resolve({ received, closed: true }));
        // Only the start of the declared megabyte is sent: a server reading it would wait.
        socket.write(`${head}Content-Length: ${MB}\r\n\r\n[[[[[[[[`);
        setTimeout(() => resolve({ received, closed: false }), 5_000).unref();
      });
    const plan = await exchange('POST /api/v1/plan HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n');
    expect(plan.received).toMatch(/^HTTP\/1\.1 401 /);
    expect(plan.received.toLowerCase()).toContain('connection: close');
    expect(plan.closed).toBe(true);
    const catalog = await exchange('POST /api/purchases/validation HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n');
    expect(catalog.received).toMatch(/^HTTP\/1\.1 413 /);
    expect(catalog.closed).toBe(true);
  });
});

describe('POST /api/v1/orders, /api/v1/plan and /api/purchases/validation: hostile bodies without a valid key — security', () => {
  it('Interface A without a key: 401 before the body is read', async () => {
    for (const [name, body] of named) {
      for (const url of ['/api/v1/plan', '/api/v1/orders', '/mcp']) {
        const res = await post(url, body, url === '/mcp' ? { accept: mcpHeaders().accept } : {}, '10.21.0.1');
        expect(res.statusCode, `${name} ${url}`).toBe(401);
      }
    }
  });

  it('refusals of requests without a valid key count in the address bucket; a valid key from it still works', async () => {
    const address = '10.22.0.1';
    const statuses: Status[] = [];
    for (let i = 0; i < h.config.UNKNOWN_KEY_RATE_LIMIT_PER_MINUTE; i++) {
      statuses.push((await post('/api/purchases/validation', i % 2 ? bodies.deep : bodies.form, {}, address)).statusCode);
    }
    expect(new Set(statuses)).toEqual(new Set([413]));
    const limited = await post('/api/purchases/validation', bodies.deep, {}, address);
    expect(limited.statusCode).toBe(429);
    expect(limited.headers['retry-after']).toBeDefined();
    // An unparseable small body and no key at all are limited there too, on both interfaces.
    expect((await post('/api/purchases/validation', { type: 'application/json', payload: '{"a' }, {}, address)).statusCode).toBe(429);
    expect((await h.app.inject({ method: 'GET', url: '/api/v1/me', remoteAddress: address })).statusCode).toBe(429);
    // A valid key counts in its own bucket, never the address's.
    const me = await h.app.inject({ method: 'GET', url: '/api/v1/me', headers: bearer(ws.readKey), remoteAddress: address });
    expect(me.statusCode).toBe(200);
    const account = await h.app.inject({ method: 'GET', url: '/api/account/details', remoteAddress: address, headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: `api_key=${ws.readKey}` });
    expect(account.statusCode).toBe(200);
  });
});
