import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { generateRawKey } from '../../src/domain/keys/key-format.js';
import { createKey, revokeKey } from '../../src/domain/keys/key-service.js';
import { setupApp } from '../helpers/app.js';
import { publisherWithOutlet } from '../helpers/catalog.js';
import { bearer, workspaceWithKeys, type WorkspaceFixture } from '../helpers/fixtures.js';
import { seller } from './catalog/fixtures.js';

// One security suite for every route, walked from the OpenAPI document so a route added later is
// covered without touching this file: no key, a random key and a revoked key are 401; a read-only
// key on a spending route, a publisher key on a buyer route and a buyer key on a publisher route
// are 403 (Interface B: 401); another workspace's or publisher's order is 404.

const h = await setupApp({ UNKNOWN_KEY_RATE_LIMIT_PER_MINUTE: 1_000_000, RATE_LIMIT_PER_MINUTE: 1_000_000 });

const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;
interface Operation {
  operationId?: string;
  security?: Record<string, string[]>[];
  'x-requires-spending-key'?: boolean;
  parameters?: { name: string; in: string; required?: boolean }[];
  requestBody?: { required?: boolean };
}
interface Op {
  path: string;
  method: (typeof METHODS)[number];
  op: Operation;
  name: string;
}

/** A body each action accepts, so the only thing wrong with a cross-tenant call is the tenant. */
const VALID_BODIES: Record<string, unknown> = {
  submitContent: { title: 'A title of some length', body: 'Some words of an article.' },
  sendOrderMessage: { body: 'Hello there.' },
  publisherSendMessage: { body: 'Hello there.' },
  publisherDecline: { reason: 'Not for us.' },
  publisherSubmitDraft: { title: 'A title of some length', body: 'Some words of a draft.' },
  publisherPublish: { live_url: 'https://example.com/post' },
};

let ops: Op[];
let owner: WorkspaceFixture;
let other: WorkspaceFixture;
let revoked: string;
let publisherKey: string;
let otherPublisherKey: string;
let orderId: number;
let itemId: number;

beforeAll(async () => {
  const doc = (await h.app.inject({ method: 'GET', url: '/openapi.json' })).json() as { paths: Record<string, Partial<Record<string, Operation>>> };
  ops = Object.entries(doc.paths).flatMap(([path, item]) =>
    METHODS.flatMap((method) => {
      const op = item[method];
      const authenticated = op?.security?.some((req) => Object.keys(req).length > 0);
      return op && authenticated ? [{ path, method, op, name: `${method.toUpperCase()} ${path}` }] : [];
    }),
  );
  owner = await workspaceWithKeys(h.database.pool, { balanceCents: 1_000_000 });
  other = await workspaceWithKeys(h.database.pool, { balanceCents: 1_000_000 });
  const gone = await createKey(h.database.pool, { workspaceId: owner.workspaceId, canPlaceOrders: true });
  await revokeKey(h.database.pool, gone.id);
  revoked = gone.key;
  const p = await publisherWithOutlet(h.database);
  publisherKey = (await createKey(h.database.pool, { publisherId: p.publisherId })).key;
  const p2 = await publisherWithOutlet(h.database);
  otherPublisherKey = (await createKey(h.database.pool, { publisherId: p2.publisherId })).key;
  const placed = await h.app.inject({
    method: 'POST',
    url: '/api/v1/orders',
    headers: { ...bearer(owner.spendKey), 'idempotency-key': randomUUID() },
    payload: { offer_ids: [p.offers[0]!.id], target_url: 'https://buyer.example/', anchor_text: 'buyer' },
  });
  expect(placed.statusCode, placed.body).toBe(201);
  orderId = placed.json().data[0].id;
  const s = await seller(h.database);
  itemId = s.itemIds[0]!;
});

const isCatalog = (o: Op) => !o.path.startsWith('/api/v1/') && !o.path.startsWith('/mcp');
const isPublisher = (o: Op) => o.path.startsWith('/api/v1/publisher/');

function call(o: Op, key: string | undefined, id: number = orderId) {
  const url = o.path.replace('{id}', String(id)) + (o.op.operationId === 'getCatalogItem' ? `?item_id=${itemId}` : '');
  const method = o.method.toUpperCase() as 'GET' | 'POST';
  const body = o.op.operationId ? VALID_BODIES[o.op.operationId] : undefined;
  return h.app.inject({
    method,
    url,
    headers: { ...(key ? bearer(key) : {}), ...(method === 'POST' ? { 'idempotency-key': randomUUID() } : {}) },
    ...(method === 'POST' ? { payload: (body ?? {}) as object } : {}),
  });
}

/** Interface A answers in its error shape, Interface B in its own. */
function expectRefused(o: Op, res: Awaited<ReturnType<typeof call>>, status: number, code?: string) {
  expect(res.statusCode, `${o.name}: ${res.body.slice(0, 200)}`).toBe(status);
  if (isCatalog(o)) expect(res.json(), o.name).toMatchObject({ status: 'error' });
  else if (code) expect(res.json(), o.name).toMatchObject({ code });
}

describe('Every authenticated route in the OpenAPI document — security', () => {
  it('is walked from the document, Interface A and B alike', () => {
    expect(ops.length).toBeGreaterThan(15);
    expect(ops.some(isCatalog)).toBe(true);
    expect(ops.some(isPublisher)).toBe(true);
    expect(ops.some((o) => o.op['x-requires-spending-key'])).toBe(true);
  });

  it('no key, a random key, a revoked key → 401', async () => {
    for (const o of ops) {
      for (const key of [undefined, generateRawKey(), revoked, 'not-a-key']) expectRefused(o, await call(o, key), 401, 'unauthenticated');
    }
  });

  it('a read-only key on a spending route → 403', async () => {
    const spending = ops.filter((o) => o.op['x-requires-spending-key']);
    expect(spending.map((o) => o.op.operationId)).toEqual(expect.arrayContaining(['placeOrders']));
    for (const o of spending) expectRefused(o, await call(o, owner.readKey), 403, 'forbidden');
  });

  it('a publisher key on a buyer route → 403, a buyer key on a publisher route → 403, neither on Interface B', async () => {
    for (const o of ops) {
      if (isCatalog(o)) {
        // Interface B takes read-only workspace keys only: the others are refused like unknown ones.
        for (const key of [publisherKey, owner.spendKey]) expectRefused(o, await call(o, key), 401);
      } else if (isPublisher(o)) {
        for (const key of [owner.readKey, owner.spendKey]) expectRefused(o, await call(o, key), 403, 'forbidden');
      } else {
        expectRefused(o, await call(o, publisherKey), 403, 'forbidden');
      }
    }
  });

  it("another workspace's or publisher's order → 404, with a body the route would accept", async () => {
    const withId = ops.filter((o) => o.path.includes('/orders/{id}'));
    expect(withId.length).toBeGreaterThan(5);
    for (const o of withId) {
      if (o.method === 'post' && o.op.requestBody?.required && !VALID_BODIES[o.op.operationId ?? '']) {
        throw new Error(`${o.name}: add a valid body for ${o.op.operationId} to VALID_BODIES`);
      }
      const key = isPublisher(o) ? otherPublisherKey : other.spendKey;
      expectRefused(o, await call(o, key), 404, 'not_found');
    }
    // The same calls by the order's own parties find it (a 409 for a state it is not in, or a 422
    // from a check made on the order found, is fine).
    for (const o of withId) {
      const res = await call(o, isPublisher(o) ? publisherKey : owner.spendKey, orderId);
      expect(res.statusCode, `${o.name} by its own party: ${res.body.slice(0, 200)}`).not.toBe(404);
    }
    // Interface B: another seller's item is not found.
    const item = ops.find((o) => o.op.operationId === 'getCatalogItem')!;
    expectRefused(item, await call(item, other.readKey), 404);
  });
});
