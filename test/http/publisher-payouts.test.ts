import { describe, expect, it } from 'vitest';
import { createBilling } from '../../src/domain/billing/billing-deps.js';
import { setDestination } from '../../src/domain/billing/payout-details.js';
import { requestPayout } from '../../src/domain/billing/payouts.js';
import { valueOf } from '../../src/domain/idempotency/record-once.js';
import { webhookSecretBox } from '../../src/domain/webhooks/secret-box.js';
import { setupApp } from '../helpers/app.js';
import { publisherWithOutlet } from '../helpers/catalog.js';
import { bearer, workspaceWithKeys } from '../helpers/fixtures.js';
import { personIn } from '../helpers/notify.js';
import { makePayable } from '../helpers/payouts.js';

// The publisher API's payouts (docs/billing.md), read-only: its refusals and who may read them.
// The listing's content is payouts.test.ts; its CSV, csv-exports.test.ts.

const h = await setupApp();
const billing = createBilling(h.database.pool, h.clock, h.config, webhookSecretBox(h.database.pool, h.config.SECRETS_KEY));
const p = await publisherWithOutlet(h.database);
const w = await workspaceWithKeys(h.database.pool);
const owner = await personIn(h, { publisherId: p.publisherId }, 'owner');
await setDestination(billing, { publisherId: p.publisherId, userId: owner.id }, { method: 'paypal', email: 'payee@example.com' });
await makePayable(h.database.pool, p.publisherId, 9_000);
const payout = valueOf(await requestPayout(billing, { publisherId: p.publisherId, userId: owner.id }));

const get = (url: string, headers: Record<string, string> = bearer(p.publisherKey)) => h.app.inject({ method: 'GET', url, headers });

describe('GET /api/v1/publisher/payouts — happy', () => {
  it('lists and reads the publisher\'s payout', async () => {
    expect((await get('/api/v1/publisher/payouts?status=pending')).json().data.map((x: { id: number }) => x.id)).toEqual([payout.id]);
    expect((await get('/api/v1/publisher/payouts?status=sent')).json().data).toEqual([]);
    expect((await get(`/api/v1/publisher/payouts/${payout.id}`)).json().data).toMatchObject({ id: payout.id, status: 'pending', amount_cents: 9_000 });
  });
});

describe('GET /api/v1/publisher/payouts — errors', () => {
  it('a bad filter, page or id is a 422 naming it', async () => {
    for (const [url, field] of [
      ['/api/v1/publisher/payouts?status=paid', 'status'],
      ['/api/v1/publisher/payouts?per_page=0', 'per_page'],
      ['/api/v1/publisher/payouts?color=red', 'color'],
      ['/api/v1/publisher/payouts/abc', 'id'],
    ] as const) {
      const res = await get(url);
      expect(res.statusCode, url).toBe(422);
      expect(res.json().errors, url).toHaveProperty(field);
    }
  });

  it('a payout that does not exist is 404', async () => {
    expect((await get('/api/v1/publisher/payouts/2147483647')).statusCode).toBe(404);
  });
});

describe('GET /api/v1/publisher/payouts — security', () => {
  it('no key is 401; a workspace key is 403; another publisher\'s key sees nothing of it', async () => {
    expect((await get('/api/v1/publisher/payouts', {})).statusCode).toBe(401);
    expect((await get('/api/v1/publisher/payouts', bearer(w.readKey))).statusCode).toBe(403);
    const other = await publisherWithOutlet(h.database);
    expect((await get('/api/v1/publisher/payouts', bearer(other.publisherKey))).json().data).toEqual([]);
    expect((await get(`/api/v1/publisher/payouts/${payout.id}`, bearer(other.publisherKey))).statusCode).toBe(404);
  });
});
