import type { InjectOptions } from 'fastify';
import { describe, expect, it } from 'vitest';
import { setupApp } from '../helpers/app.js';
import { bearer } from '../helpers/fixtures.js';
import { orderKit } from '../helpers/orders.js';
import { connect, listen, ok } from '../mcp/helpers.js';
import { seller } from './catalog/fixtures.js';

// Every secret a client sends (API keys, purchase codes, Idempotency-Key values, MCP confirmation
// tokens), in each place it can travel, is used once here; the log of the run must hold none.

const h = await setupApp({ LOG_LEVEL: 'debug' });
const kit = orderKit(h);

describe('Every route: logs hold no key, purchase code, idempotency key or confirmation token — security', () => {
  it('hold no key, purchase code, idempotency key or confirmation token, wherever they were sent', async () => {
    const s = await seller(h.database);
    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    const unknownCode = '7d3f1c2e-9b4a-4c5d-8e6f-0a1b2c3d4e5f';
    const inject = (opts: InjectOptions) => h.app.inject(opts);

    // Interface B: in the query string, a form body, a JSON body, a header; valid and not.
    const validations = [
      await inject({ method: 'POST', url: `/api/purchases/validation?api_key=${s.readKey}&purchase_code=${s.code}` }),
      await inject({ method: 'POST', url: `/api/purchases/validation?PURCHASE%5FCODE=${unknownCode}&api_key=${s.readKey}` }),
      await inject({ method: 'POST', url: '/api/purchases/validation', headers: form, payload: `api_key=${s.readKey}&purchase_code=${s.code}` }),
      await inject({ method: 'POST', url: '/api/purchases/validation', payload: { api_key: s.readKey, purchase_code: unknownCode } }),
      await inject({ method: 'GET', url: `/api/items/all?api_key=${s.spendKey}` }),
    ];
    // The parameter names are case-sensitive (the second is a 400), but its value is still redacted.
    expect(validations.map((r) => r.statusCode)).toEqual([200, 400, 200, 404, 401]);

    // Interface A: bearer keys and Idempotency-Key values, accepted, replayed and refused.
    const { ws, p } = await kit.setup();
    const order = { offer_ids: [p.offers[0]!.id], target_url: 'https://buyer.example/', anchor_text: 'buyer' };
    const idem = 'idem-secret-4c1f0e9a';
    expect((await kit.place(ws.spendKey, order, idem)).statusCode).toBe(201);
    expect((await kit.place(ws.spendKey, order, idem)).statusCode).toBe(201);
    expect((await kit.place(ws.spendKey, { ...order, anchor_text: 'other' }, idem)).statusCode).toBe(422);
    const malformedIdem = `bad idem ${'x'.repeat(300)}`;
    expect((await kit.place(ws.spendKey, order, malformedIdem)).statusCode).toBe(400);
    expect((await inject({ method: 'GET', url: '/api/v1/me', headers: bearer(ws.readKey) })).statusCode).toBe(200);

    // MCP: a quote's confirmation token, used, then altered.
    const client = await connect(await listen(h), ws.spendKey);
    const quote = await ok<{ confirmation_token: string }>(client, 'place-orders', { ...order, offer_ids: [p.offers[0]!.id] });
    const token = quote.confirmation_token;
    await client.callTool({ name: 'place-orders', arguments: { ...order, confirmation_token: token } });
    await client.callTool({ name: 'place-orders', arguments: { ...order, confirmation_token: `${token}x` } });

    const written = h.logs.join('');
    expect(written).toContain('"msg":"request"');
    for (const secret of [s.readKey, s.spendKey, s.code, unknownCode, ws.readKey, ws.spendKey, idem, malformedIdem, token, token.split('.')[2]!]) {
      expect(written, secret).not.toContain(secret);
    }
    expect(written).toContain('purchase_code=[REDACTED]');
    expect(written).toContain('PURCHASE%5FCODE=[REDACTED]');
  });
});

describe('Every route: secrets in the logged URL, by parameter name or by shape — security', () => {
  it('logs no password, Idempotency-Key value or key-shaped string sent in a URL, and keeps the rest of it', async () => {
    const { ws } = await kit.setup();
    const password = 'QueryPw-Secret-456';
    const idem = 'idem-in-query-7b2e91';
    const pasted = ws.readKey;
    const sent = [
      `/app/sign-in?password=${password}&next=%2Fapp`,
      `/api/v1/orders/${pasted}`,
      `/api/v1/me?Idempotency-Key=${idem}`,
      `/api/v1/me?IDEMPOTENCY_KEY=${idem}x&page=1`,
      `/api/v1/outlets?q=${pasted}&per_page=5`,
      `/api/v1/outlets?q=a%26new_password%3D${password}y`,
      // A console path: its route words (`api-keys`) are no secret and stay.
      '/app/w/1/settings/api-keys/5',
    ];
    const before = h.logs.length;
    for (const url of sent) await h.app.inject({ method: 'GET', url, headers: bearer(ws.readKey) });
    const lines = h.logs.slice(before).map((l) => JSON.parse(l)).filter((l) => l.msg === 'request');
    const urls = lines.map((l) => l.url as string);
    expect(urls).toHaveLength(sent.length);
    const written = h.logs.slice(before).join('');
    for (const secret of [password, idem, pasted]) expect(written, secret).not.toContain(secret);
    expect(urls).toEqual([
      '/app/sign-in?password=[REDACTED]&next=%2Fapp',
      '/api/v1/orders/[REDACTED]',
      '/api/v1/me?Idempotency-Key=[REDACTED]',
      '/api/v1/me?IDEMPOTENCY_KEY=[REDACTED]&page=1',
      '/api/v1/outlets?q=[REDACTED]&per_page=5',
      '/api/v1/outlets?[REDACTED]',
      '/app/w/1/settings/api-keys/5',
    ]);
  });
});
