import { describe, expect, it } from 'vitest';
import { setApprovalRules } from '../../src/domain/workspaces/workspace-service.js';
import { createProject } from '../../src/domain/workspaces/projects.js';
import { setupApp } from '../helpers/app.js';
import { publisherWithOutlet } from '../helpers/catalog.js';
import { bearer, workspaceWithKeys } from '../helpers/fixtures.js';
import { expectLedgerInvariants } from '../helpers/ledger-invariants.js';

// POST /api/v1/orders (errors first: they assert ws's untouched balance), then checks that span the order routes; GET /api/v1/orders is in orders-list.test.ts.

const h = await setupApp();
const ws = await workspaceWithKeys(h.database.pool, { balanceCents: 50_000 });
const other = await workspaceWithKeys(h.database.pool, { balanceCents: 50_000 });
const p = await publisherWithOutlet(h.database, [{}, { title: 'Inactive', active: false }, { title: 'Pricey', publisher_price_cents: 100_000 }]);
const otherPub = await publisherWithOutlet(h.database);
const [offer, inactive, pricey] = p.offers as [typeof p.offers[0], typeof p.offers[0], typeof p.offers[0]];
let seq = 0;

const place = (body: unknown, opts: { key?: string; idem?: string | null; contentType?: string } = {}) =>
  h.app.inject({
    method: 'POST',
    url: '/api/v1/orders',
    headers: {
      ...bearer(opts.key ?? ws.spendKey),
      ...(opts.idem === null ? {} : { 'idempotency-key': opts.idem ?? `e-${++seq}` }),
      ...(opts.contentType ? { 'content-type': opts.contentType } : {}),
    },
    payload: typeof body === 'string' ? body : (body as object),
  });
const valid = () => ({ offer_ids: [offer.id], target_url: 'https://buyer.example/' });

async function balance(workspaceId: number) {
  const { rows } = await h.database.pool.query(`SELECT balance FROM ledger_accounts WHERE workspace_id = $1 AND kind = 'available'`, [workspaceId]);
  return rows[0].balance as number;
}

describe('POST /api/v1/orders — errors', () => {
  const cases: [string, unknown, string][] = [
    ['missing offer_ids', { target_url: 'https://x.example/' }, 'offer_ids'],
    ['empty offer_ids', { offer_ids: [], target_url: 'https://x.example/' }, 'offer_ids'],
    ['duplicate offer ids', { offer_ids: [1, 1], target_url: 'https://x.example/' }, 'offer_ids'],
    ['more than 50 offers', { offer_ids: Array.from({ length: 51 }, (_, i) => i + 1), target_url: 'https://x.example/' }, 'offer_ids'],
    ['non-integer offer id', { offer_ids: ['1'], target_url: 'https://x.example/' }, 'offer_ids.0'],
    ['ftp target_url', { offer_ids: [1], target_url: 'ftp://x.example/' }, 'target_url'],
    ['not a URL', { offer_ids: [1], target_url: 'nope' }, 'target_url'],
    ['a space in target_url', { offer_ids: [1], target_url: 'https://x.example/a b' }, 'target_url'],
    // z.url alone trims and drops tabs and newlines: the URL stored was another than the one sent.
    ['a tab in target_url', { offer_ids: [1], target_url: 'https://ex\tample.com/' }, 'target_url'],
    ['a newline in target_url', { offer_ids: [1], target_url: 'https://example.com/a\nb' }, 'target_url'],
    ['a no-break space in target_url', { offer_ids: [1], target_url: 'https://example.com/\u00a0x' }, 'target_url'],
    ['a zero-width space in target_url', { offer_ids: [1], target_url: 'https://example.com/\u200bx' }, 'target_url'],
    ['user:password@ in target_url', { offer_ids: [1], target_url: 'https://user:pass@example.com/' }, 'target_url'],
    ['a backslash in target_url', { offer_ids: [1], target_url: 'https://x.example\\evil.example/' }, 'target_url'],
    ['content without title', { offer_ids: [1], target_url: 'https://x.example/', content: '# hi' }, 'content_title'],
    ['title without content', { offer_ids: [1], target_url: 'https://x.example/', content_title: 'A long enough title' }, 'content'],
    ['anchor text too long', { offer_ids: [1], target_url: 'https://x.example/', anchor_text: 'a'.repeat(201) }, 'anchor_text'],
    ['project_id not an integer', { offer_ids: [1], target_url: 'https://x.example/', project_id: 'x' }, 'project_id'],
    ['a field the endpoint does not know', { offer_ids: [1], target_url: 'https://x.example/', dry_run: true }, 'dry_run'],
    // PostgreSQL text cannot store these: they were 500s.
    ['a NUL in anchor_text', { offer_ids: [1], target_url: 'https://x.example/', anchor_text: 'a\u0000b' }, 'anchor_text'],
    ['a NUL in brief (the batched placement)', { offer_ids: [1], target_url: 'https://x.example/', brief: '\u0000' }, 'brief'],
    ['an unpaired surrogate in content', { offer_ids: [1], target_url: 'https://x.example/', content_title: 'A long enough title', content: 'x\ud800y' }, 'content'],
    // It has no canonical JSON, so the Idempotency-Key check refuses it before the fingerprint.
    ['an unpaired surrogate in a field name', { offer_ids: [1], target_url: 'https://x.example/', ['x\udc00']: 1 }, 'body'],
  ];
  for (const [name, body, field] of cases) {
    it(`${name} → 422 naming ${field}`, async () => {
      const res = await place(body);
      expect(res.statusCode, res.body).toBe(422);
      expect(res.json().code).toBe('invalid_input');
      expect(Object.keys(res.json().errors)).toContain(field);
    });
  }

  it('says what is wrong in words: required, wrong type (once per field), a body that is not an object', async () => {
    const own = await workspaceWithKeys(h.database.pool, { balanceCents: 50_000 });
    const placed = (await place(valid(), { key: own.spendKey })).json().data[0];
    const content = (payload: unknown) =>
      h.app.inject({ method: 'POST', url: `/api/v1/orders/${placed.id}/content`, headers: bearer(own.readKey), payload: payload as object });
    expect((await content({ title: 5, body: [] })).json().errors).toEqual({ title: ['must be a string'], body: ['must be a string'] });
    expect((await content({})).json().errors).toEqual({ title: ['is required'], body: ['is required'] });
    expect((await content([])).json().errors).toEqual({ body: ['the request body must be a JSON object'] });
    // No body at all (or JSON null) names the missing fields, not the body.
    const none = await h.app.inject({ method: 'POST', url: `/api/v1/orders/${placed.id}/content`, headers: bearer(own.readKey) });
    expect(none.json().errors).toEqual({ title: ['is required'], body: ['is required'] });
    const decline = await h.app.inject({ method: 'POST', url: `/api/v1/publisher/orders/${placed.id}/decline`, headers: { ...bearer(p.publisherKey), 'content-type': 'application/json' }, payload: 'null' });
    expect(decline.json().errors).toEqual({ reason: ['is required'] });
    const order = await place('', { key: own.spendKey, contentType: 'text/plain' });
    expect(order.json().errors).toEqual({ offer_ids: ['is required'], target_url: ['is required'] });
    // A number beyond every bound of the field names the field's own bound, once.
    const huge = await place('{"offer_ids":[1],"target_url":"https://x.example/","project_id":1e20}', { key: own.spendKey, contentType: 'application/json' });
    expect(huge.json().errors).toEqual({ project_id: ['must be at most 2,147,483,647'] });
    const below = await place('{"offer_ids":[1],"target_url":"https://x.example/","project_id":-1e20}', { key: own.spendKey, contentType: 'application/json' });
    expect(below.json().errors).toEqual({ project_id: ['must be greater than 0'] });
  });

  it('text PostgreSQL cannot store → 422 everywhere: query strings, messages, publisher replies', async () => {
    const own = await workspaceWithKeys(h.database.pool, { balanceCents: 50_000 });
    const search = await h.app.inject({ method: 'GET', url: '/api/v1/outlets?q=a%00', headers: bearer(own.readKey) });
    expect(search.statusCode).toBe(422);
    expect(search.json().errors).toEqual({ q: ['must not contain NUL characters or unpaired UTF-16 surrogates'] });
    const placed = (await place(valid(), { key: own.spendKey })).json().data[0];
    const message = await h.app.inject({ method: 'POST', url: `/api/v1/orders/${placed.id}/messages`, headers: bearer(own.readKey), payload: { body: 'hi\u0000' } });
    expect(message.statusCode).toBe(422);
    expect(Object.keys(message.json().errors)).toEqual(['body']);
    const decline = await h.app.inject({ method: 'POST', url: `/api/v1/publisher/orders/${placed.id}/decline`, headers: bearer(p.publisherKey), payload: { reason: 'no\ud800' } });
    expect(decline.statusCode).toBe(422);
    expect(Object.keys(decline.json().errors)).toEqual(['reason']);
    // A well-formed pair is one character, stored and returned as sent.
    const emoji = await place({ ...valid(), brief: 'ok \ud83d\ude00' }, { key: own.spendKey });
    expect(emoji.statusCode).toBe(201);
    expect(emoji.json().data[0].brief).toBe('ok 😀');
  });

  it('unknown and inactive offers → 422 naming them', async () => {
    const res = await place({ offer_ids: [offer.id, inactive.id, 99_999], target_url: 'https://x.example/' });
    expect(res.statusCode).toBe(422);
    expect(res.json().errors.offer_ids[0]).toContain(String(inactive.id));
    expect(res.json().errors.offer_ids[0]).toContain('99999');
    expect(await balance(ws.workspaceId)).toBe(50_000);
  });

  it("another workspace's project → 422", async () => {
    const project = await createProject(h.database.pool, other.workspaceId, 'Theirs');
    const res = await place({ ...valid(), project_id: project.id });
    expect(res.statusCode).toBe(422);
    expect(Object.keys(res.json().errors)).toEqual(['project_id']);
  });

  it('two Idempotency-Key headers → 400 saying so', async () => {
    const res = await h.app.inject({
      method: 'POST',
      url: '/api/v1/orders',
      headers: { ...bearer(ws.spendKey), 'idempotency-key': ['dup1', 'dup1'] },
      payload: valid(),
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().message).toBe('Send one Idempotency-Key header, not several.');
  });

  it('a missing Idempotency-Key → 400, before validation', async () => {
    const res = await place({}, { idem: null });
    expect(res.statusCode).toBe(400);
    expect(res.json().code).toBe('idempotency_key_required');
    // An empty header is no key either.
    for (const idem of ['', '   ']) {
      const empty = await place(valid(), { idem });
      expect(empty.statusCode).toBe(400);
      expect(empty.json().code).toBe('idempotency_key_required');
    }
  });

  it('a body over 1 MB → 413', async () => {
    const res = await place({ ...valid(), content: 'x'.repeat(1_100_000), content_title: 'Too big a body' });
    expect(res.statusCode).toBe(413);
    expect(res.json().code).toBe('payload_too_large');
  });

  it('unparseable JSON → 400', async () => {
    const res = await place('{"offer_ids": [', { contentType: 'application/json' });
    expect(res.statusCode).toBe(400);
    expect(res.json().code).toBe('bad_request');
  });

  it('too little balance → 402 with needed_cents, nothing spent', async () => {
    const res = await place({ offer_ids: [pricey.id], target_url: 'https://x.example/' });
    expect(res.statusCode).toBe(402);
    expect(res.json()).toMatchObject({
      code: 'insufficient_balance',
      needed_cents: pricey.price - 50_000,
      needed_formatted: expect.stringMatching(/^\$/),
      balance: 50_000,
      balance_formatted: '$500.00',
    });
    expect(await balance(ws.workspaceId)).toBe(50_000);
  });

  it('above the approval limit → 403 approval_required', async () => {
    const limited = await workspaceWithKeys(h.database.pool, { balanceCents: 500_000 });
    await setApprovalRules(h.database.pool, limited.workspaceId, { maxOrderCents: 10_000 });
    const res = await place(valid(), { key: limited.spendKey });
    expect(res.statusCode).toBe(403);
    expect(res.json().code).toBe('approval_required');
    expect(await balance(limited.workspaceId)).toBe(500_000);
  });

  it('the same key with another body → 422 idempotency_key_reused', async () => {
    const w = await workspaceWithKeys(h.database.pool, { balanceCents: 100_000 });
    await place(valid(), { key: w.spendKey, idem: 'k1' });
    const res = await place({ ...valid(), anchor_text: 'changed' }, { key: w.spendKey, idem: 'k1' });
    expect(res.statusCode).toBe(422);
    expect(res.json().code).toBe('idempotency_key_reused');
  });

  it('the fingerprint is the body as sent: spaces zod trims make another request; an unknown field is refused by name', async () => {
    const w = await workspaceWithKeys(h.database.pool, { balanceCents: 100_000 });
    const body = { ...valid(), anchor_text: 'hello' };
    expect((await place(body, { key: w.spendKey, idem: 'as-sent' })).statusCode).toBe(201);
    const trimmed = await place({ ...body, anchor_text: '  hello  ' }, { key: w.spendKey, idem: 'as-sent' });
    expect(trimmed.statusCode).toBe(422);
    expect(trimmed.json().code).toBe('idempotency_key_reused');
    // A field the endpoint does not know (a `dry_run` it would otherwise drop) places nothing.
    const extra = await place({ ...body, dry_run: true }, { key: w.spendKey, idem: 'as-sent-2' });
    expect(extra.statusCode).toBe(422);
    expect(extra.json()).toMatchObject({ code: 'invalid_input', errors: { dry_run: ['is not a field of this request'] } });
    // Nor does one hidden under __proto__, which a JSON parser could drop before validation sees it.
    const hidden = await place(`{"offer_ids":[${offer.id}],"target_url":"https://buyer.example/","__proto__":{"dry_run":true}}`, { key: w.spendKey, idem: 'as-sent-3', contentType: 'application/json' });
    expect(hidden.statusCode).toBe(400);
    expect(hidden.json().code).toBe('bad_request');
    // Nor does a field named twice, which JSON.parse would read as its last value.
    const twice = await place(`{"offer_ids":[${offer.id}],"offer_ids":[${pricey.id}],"target_url":"https://buyer.example/"}`, { key: w.spendKey, idem: 'as-sent-4', contentType: 'application/json' });
    expect(twice.statusCode).toBe(400);
    expect(twice.json()).toMatchObject({ code: 'bad_request', message: 'The request body names "offer_ids" twice; send each field once.' });
    // Key order is not part of it.
    const reordered = Object.fromEntries(Object.entries(body).reverse());
    const replay = await place(reordered, { key: w.spendKey, idem: 'as-sent' });
    expect(replay.statusCode).toBe(201);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(await balance(w.workspaceId)).toBe(100_000 - offer.price);
  });

  it('a body nested thousands of levels deep → 400 before it is parsed, with or without the idempotency key', async () => {
    // Written as text: JSON.stringify itself cannot go that deep.
    const deep = '[{"a":'.repeat(10_000) + '"x"' + '}]'.repeat(10_000);
    const body = JSON.stringify(valid()).replace(/}$/, `,"brief":${deep}}`);
    for (const idem of ['deep-1', null]) {
      const res = await place(body, { idem, contentType: 'application/json' });
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json().message).toMatch(/more than 32 levels deep/);
    }
    const search = await h.app.inject({
      method: 'POST',
      url: '/api/v1/plan',
      headers: { ...bearer(ws.readKey), 'content-type': 'application/json' },
      payload: `{"goal":${'['.repeat(5_000)}"x"${']'.repeat(5_000)}}`,
    });
    expect(search.statusCode, search.body).toBe(400);
  });

  it('a 402 is replayed as a 402 even after a top-up; a new key then succeeds', async () => {
    const w = await workspaceWithKeys(h.database.pool, { balanceCents: 1 });
    expect((await place(valid(), { key: w.spendKey, idem: 'poor' })).statusCode).toBe(402);
    await h.database.pool.query('SELECT 1');
    const { topUp } = await import('../../src/domain/ledger/ledger-service.js');
    await topUp(h.database.pool, w.workspaceId, 100_000);
    const replay = await place(valid(), { key: w.spendKey, idem: 'poor' });
    expect(replay.statusCode).toBe(402);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect((await place(valid(), { key: w.spendKey, idem: 'rich' })).statusCode).toBe(201);
  });

  it('a refusal is kept 24 h, then the key runs again; a later refusal replaces the expired record', async () => {
    const w = await workspaceWithKeys(h.database.pool, { balanceCents: 1 });
    const first = await place(valid(), { key: w.spendKey, idem: 'poor-twice' });
    expect(first.statusCode).toBe(402);
    h.clock.advance(24 * 3_600_000 + 1);
    const again = await place(valid(), { key: w.spendKey, idem: 'poor-twice' });
    expect(again.statusCode).toBe(402);
    expect(again.headers['idempotent-replayed']).toBeUndefined();
    const { rows } = await h.database.pool.query(
      `SELECT outcome, created_at FROM idempotency_records WHERE key = 'poor-twice'`,
    );
    expect(rows).toHaveLength(1);
    expect(rows[0].created_at.getTime()).toBe(h.clock.now());
    const replay = await place(valid(), { key: w.spendKey, idem: 'poor-twice' });
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toBe(again.body);
  });

  it('422s are not stored: fixing the body under the same key works', async () => {
    const w = await workspaceWithKeys(h.database.pool, { balanceCents: 100_000 });
    expect((await place({ offer_ids: [] , target_url: 'https://x.example/' }, { key: w.spendKey, idem: 'fixme' })).statusCode).toBe(422);
    // A different fingerprint, but nothing was stored for the first attempt.
    expect((await place(valid(), { key: w.spendKey, idem: 'fixme' })).statusCode).toBe(201);
  });
});

describe('POST /api/v1/orders — happy', () => {
  it('replays the first response with Idempotent-Replayed and spends once', async () => {
    const w = await workspaceWithKeys(h.database.pool, { balanceCents: 100_000 });
    const first = await place(valid(), { key: w.spendKey, idem: 'same-key' });
    const second = await place(valid(), { key: w.spendKey, idem: 'same-key' });
    expect(first.statusCode).toBe(201);
    expect(second.statusCode).toBe(201);
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    // Byte for byte, key order included, with the same content type.
    expect(second.body).toBe(first.body);
    expect(second.headers['content-type']).toBe(first.headers['content-type']);
    expect(await balance(w.workspaceId)).toBe(100_000 - offer.price);
  });

  it('takes URLs as browsers show them: IDNs, ports, IPv6, percent-encoding, and | ^ { } in a query', async () => {
    const w = await workspaceWithKeys(h.database.pool, { balanceCents: 1_000_000 });
    for (const target_url of [
      'https://fonts.googleapis.com/css?family=Roboto|Open+Sans',
      'https://bücher.example/straße?q=a^b&t={x}',
      'https://[2001:db8::1]:8443/a%20b',
      'HTTPS://Example.COM/@user',
    ]) {
      const res = await place({ offer_ids: [offer.id], target_url }, { key: w.spendKey });
      expect(res.statusCode, `${target_url}: ${res.body}`).toBe(201);
      expect(res.json().data[0].target_url).toBe(target_url);
    }
  });
});

describe('POST /api/v1/orders — security', () => {
  it('a read-only key → 403, before anything else', async () => {
    const res = await place({}, { key: ws.readKey, idem: null });
    expect(res.statusCode).toBe(403);
    expect(res.json().code).toBe('forbidden');
  });

  it('a publisher key → 403', async () => {
    const res = await place(valid(), { key: p.publisherKey });
    expect(res.statusCode).toBe(403);
  });

  it('keys are scoped to the API key', async () => {
    const w = await workspaceWithKeys(h.database.pool, { balanceCents: 100_000 });
    const a = await place(valid(), { key: w.spendKey, idem: 'common' });
    const b = await place(valid(), { key: ws.spendKey, idem: 'common' });
    expect(a.statusCode).toBe(201);
    expect(b.statusCode).toBe(201);
    expect(b.headers['idempotent-replayed']).toBeUndefined();
  });
});

describe('POST /api/v1/orders/{id}/approve — errors', () => {
  it("the same key on another order's approve → 422, not a replay", async () => {
    const w = await workspaceWithKeys(h.database.pool, { balanceCents: 100_000 });
    const [a, b] = (await place({ offer_ids: [offer.id, pricey.id].slice(0, 1), target_url: 'https://x.example/' }, { key: w.spendKey })).json().data.concat(
      (await place(valid(), { key: w.spendKey })).json().data,
    );
    const approve = (id: number) =>
      h.app.inject({ method: 'POST', url: `/api/v1/orders/${id}/approve`, headers: { ...bearer(w.spendKey), 'idempotency-key': 'approve-key' } });
    const first = await approve(a.id);
    expect(first.statusCode).toBe(409); // not yet live: a 409 from the order's state is stored
    expect((await approve(a.id)).headers['idempotent-replayed']).toBe('true');
    const res = await approve(b.id);
    expect(res.statusCode).toBe(422);
    expect(res.json().code).toBe('idempotency_key_reused');
    // The same order written with a leading zero is the same request: replayed, not reused.
    const padded = await h.app.inject({ method: 'POST', url: `/api/v1/orders/0${a.id}/approve`, headers: { ...bearer(w.spendKey), 'idempotency-key': 'approve-key' } });
    expect(padded.statusCode).toBe(409);
    expect(padded.headers['idempotent-replayed']).toBe('true');
  });
});

describe('POST /api/v1/orders/{id}/… and /api/v1/publisher/orders/{id}/… actions — errors', () => {
  it('a field an action does not take → 422 naming it, and the order does not move', async () => {
    const order = (await place(valid())).json().data[0];
    const cases: [string, string, object, string][] = [
      [`/api/v1/orders/${order.id}/cancel`, ws.spendKey, { reason: 'changed my mind' }, 'reason'],
      [`/api/v1/orders/${order.id}/approve`, ws.spendKey, { foo: 1 }, 'foo'],
      [`/api/v1/orders/${order.id}/messages`, ws.readKey, { body: 'hi', to: 'publisher' }, 'to'],
      [`/api/v1/publisher/orders/${order.id}/accept`, p.publisherKey, { note: 'ok' }, 'note'],
      [`/api/v1/publisher/orders/${order.id}/decline`, p.publisherKey, { reason: 'no', refund: false }, 'refund'],
    ];
    for (const [url, key, payload, field] of cases) {
      const res = await h.app.inject({ method: 'POST', url, headers: bearer(key), payload });
      expect(res.statusCode, url).toBe(422);
      expect(res.json().errors, url).toEqual({ [field]: ['is not a field of this request'] });
    }
    const after = await h.app.inject({ method: 'GET', url: `/api/v1/orders/${order.id}`, headers: bearer(ws.readKey) });
    expect(after.json().data.status).toBe(order.status);
    // No body, an empty one and {} stay accepted.
    const cancel = await h.app.inject({ method: 'POST', url: `/api/v1/orders/${order.id}/cancel`, headers: bearer(ws.spendKey), payload: {} });
    expect(cancel.statusCode, cancel.body).toBe(200);
  });
});

describe('GET and POST /api/v1/orders/{id}/… and /api/v1/publisher/orders/… — security', () => {
  it("another workspace's order → 404 on every buyer route", async () => {
    const order = (await place(valid())).json().data[0];
    for (const [method, path] of [
      ['GET', `/api/v1/orders/${order.id}`],
      ['POST', `/api/v1/orders/${order.id}/cancel`],
      ['POST', `/api/v1/orders/${order.id}/approve-draft`],
      ['POST', `/api/v1/orders/${order.id}/approve`],
    ] as const) {
      const res = await h.app.inject({ method, url: path, headers: bearer(other.spendKey) });
      expect(res.statusCode, path).toBe(404);
    }
    const msg = await h.app.inject({ method: 'POST', url: `/api/v1/orders/${order.id}/messages`, headers: bearer(other.readKey), payload: { body: 'hi' } });
    expect(msg.statusCode).toBe(404);
    const list = await h.app.inject({ method: 'GET', url: '/api/v1/orders', headers: bearer(other.readKey) });
    expect(list.json().data.map((o: { id: number }) => o.id)).not.toContain(order.id);
  });

  it("another publisher's key → 404; a buyer key on publisher routes → 403", async () => {
    const order = (await place(valid())).json().data[0];
    const theirs = await h.app.inject({ method: 'POST', url: `/api/v1/publisher/orders/${order.id}/accept`, headers: bearer(otherPub.publisherKey) });
    expect(theirs.statusCode).toBe(404);
    const read = await h.app.inject({ method: 'GET', url: `/api/v1/publisher/orders/${order.id}`, headers: bearer(otherPub.publisherKey) });
    expect(read.statusCode).toBe(404);
    const buyerKey = await h.app.inject({ method: 'GET', url: '/api/v1/publisher/orders', headers: bearer(ws.readKey) });
    expect(buyerKey.statusCode).toBe(403);
    const own = await h.app.inject({ method: 'GET', url: `/api/v1/publisher/orders/${order.id}`, headers: bearer(p.publisherKey) });
    expect(own.statusCode).toBe(200);
    expect(own.json().data).not.toHaveProperty('price');
    expect(own.json().data.payout_cents).toBe(offer.publisher_price_cents);
  });
});

it('leaves the ledger consistent', async () => {
  await expectLedgerInvariants(h.database);
});
