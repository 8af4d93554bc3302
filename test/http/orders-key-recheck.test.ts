import { describe, expect, it } from 'vitest';
import { setupApp } from '../helpers/app.js';
import { bearer } from '../helpers/fixtures.js';
import { expectLedgerInvariants } from '../helpers/ledger-invariants.js';
import { orderKit } from '../helpers/orders.js';
import { updateKey } from '../../src/domain/keys/key-service.js';

const h = await setupApp();
const { place, buyer, pub, balances, setup, accepted } = orderKit(h);
const pool = h.database.pool;

// The key cache holds a key for up to 5 s (its entry ends at the key's expiry as it was read).
// Spending reads the key again inside its own transaction, so a key revoked, or one whose expiry
// passed while the request waited, spends nothing. The tests change the key in the database after
// it was cached, which the cache cannot see.
const changes = {
  revoked: (keyId: number) => pool.query('UPDATE api_keys SET revoked_at = now() WHERE id = $1', [keyId]),
  expired: (keyId: number) => pool.query('UPDATE api_keys SET expires_at = $2 WHERE id = $1', [keyId, new Date(h.clock.now() - 1)]),
};

describe('a cached spending key is read again in the spending transaction — security', () => {
  for (const [what, change] of Object.entries(changes)) {
    it(`${what} after it was cached: placing answers 401 and spends nothing`, async () => {
      const { ws, p } = await setup();
      expect((await h.app.inject({ url: '/api/v1/me', headers: bearer(ws.spendKey) })).statusCode).toBe(200); // now cached
      await change(ws.spendKeyId);
      const res = await place(ws.spendKey, { offer_ids: [p.offers[0]!.id], target_url: 'https://buyer.example/' });
      expect(res.statusCode, res.body).toBe(401);
      expect(res.json()).toMatchObject({ code: 'unauthenticated', message: 'This key has been revoked or has expired.' });
      expect(await balances(ws.workspaceId)).toEqual({ available: 1_000_000, held: 0 });
      expect((await pool.query('SELECT count(*)::int AS n FROM orders WHERE workspace_id = $1', [ws.workspaceId])).rows[0].n).toBe(0);
      await expectLedgerInvariants(h.database);
    });

    it(`${what} after it was cached: approving a placement answers 401 and pays nothing`, async () => {
      const { ws, p } = await setup();
      const id = await accepted(ws.spendKey, p.publisherKey, p.offers[0]!.id, 'https://buyer.example/');
      expect((await pub(p.publisherKey, `${id}/publish`, { live_url: `https://${p.domain}/post` })).json().data.status).toBe('live_review');
      const before = await balances(ws.workspaceId);
      await change(ws.spendKeyId);
      const res = await buyer(ws.spendKey, `${id}/approve`);
      expect(res.statusCode, res.body).toBe(401);
      expect((await pool.query('SELECT status FROM orders WHERE id = $1', [id])).rows[0].status).toBe('live_review');
      expect(await balances(ws.workspaceId)).toEqual(before);
      await expectLedgerInvariants(h.database);
    });
  }

  it('a key whose expiry is still ahead places as before', async () => {
    const { ws, p } = await setup();
    await pool.query('UPDATE api_keys SET expires_at = $2 WHERE id = $1', [ws.spendKeyId, new Date(h.clock.now() + 60_000)]);
    const res = await place(ws.spendKey, { offer_ids: [p.offers[0]!.id], target_url: 'https://buyer.example/' });
    expect(res.statusCode, res.body).toBe(201);
  });
});

// The same with the test clock: the key's expiry falls inside the 5 s the lookup is cached, and the
// clock moves past it before the key spends. Set after the key was cached (a console change of its
// expiry), only the spending transaction can see it; known when it was cached, the cache entry ends
// with it too.
describe('a key that expires inside the 5 s its lookup is cached cannot spend once the clock passed its expiry — security', () => {
  const expireInOneSecond = (keyId: number) => updateKey(pool, keyId, { expiresAt: new Date(h.clock.now() + 1_000) }, h.clock);
  const cases = {
    'expiry set after it was cached': async (key: string, keyId: number) => {
      expect((await h.app.inject({ url: '/api/v1/me', headers: bearer(key) })).statusCode).toBe(200);
      await expireInOneSecond(keyId);
    },
    'expiry known when it was cached': async (key: string, keyId: number) => {
      h.clock.advance(5_001); // an earlier lookup (placing the order) is no longer cached
      await expireInOneSecond(keyId);
      expect((await h.app.inject({ url: '/api/v1/me', headers: bearer(key) })).statusCode).toBe(200);
    },
  };
  for (const [what, prepare] of Object.entries(cases)) {
    it(`${what}: placing answers 401 and spends nothing`, async () => {
      const { ws, p } = await setup();
      await prepare(ws.spendKey, ws.spendKeyId);
      h.clock.advance(1_500); // past the expiry, inside the cache's 5 s
      const res = await place(ws.spendKey, { offer_ids: [p.offers[0]!.id], target_url: 'https://buyer.example/' });
      expect(res.statusCode, res.body).toBe(401);
      expect(await balances(ws.workspaceId)).toEqual({ available: 1_000_000, held: 0 });
      expect((await pool.query('SELECT count(*)::int AS n FROM orders WHERE workspace_id = $1', [ws.workspaceId])).rows[0].n).toBe(0);
      await expectLedgerInvariants(h.database);
    });

    it(`${what}: approving a placement answers 401 and pays nothing`, async () => {
      const { ws, p } = await setup();
      const id = await accepted(ws.spendKey, p.publisherKey, p.offers[0]!.id, 'https://buyer.example/');
      expect((await pub(p.publisherKey, `${id}/publish`, { live_url: `https://${p.domain}/post` })).json().data.status).toBe('live_review');
      const before = await balances(ws.workspaceId);
      await prepare(ws.spendKey, ws.spendKeyId);
      h.clock.advance(1_500);
      const res = await buyer(ws.spendKey, `${id}/approve`);
      expect(res.statusCode, res.body).toBe(401);
      expect((await pool.query('SELECT status FROM orders WHERE id = $1', [id])).rows[0].status).toBe('live_review');
      expect(await balances(ws.workspaceId)).toEqual(before);
      await expectLedgerInvariants(h.database);
    });
  }
});
