import { describe, expect, it } from 'vitest';
import { setupApp } from '../helpers/app.js';
import { publisherWithOutlet } from '../helpers/catalog.js';
import { bearer, workspaceWithKeys } from '../helpers/fixtures.js';

const h = await setupApp();

describe('POST /api/v1/plan with an Idempotency-Key — happy', () => {
  it('replays the first plan and refuses the key for another body', async () => {
    await publisherWithOutlet(h.database);
    const ws = await workspaceWithKeys(h.database.pool);
    const plan = (body: object, key: string) =>
      h.app.inject({ method: 'POST', url: '/api/v1/plan', headers: { ...bearer(ws.readKey), 'idempotency-key': key }, payload: body });
    const first = await plan({ goal: 'technology reviews', budget_usd: 500 }, 'plan-1');
    expect(first.statusCode).toBe(200);
    const again = await plan({ budget_usd: 500, goal: 'technology reviews' }, 'plan-1'); // same body, other key order
    expect(again.statusCode).toBe(200);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json()).toEqual(first.json());
    const other = await plan({ goal: 'technology reviews', budget_usd: 600 }, 'plan-1');
    expect(other.statusCode).toBe(422);
    expect(other.json().code).toBe('idempotency_key_reused');
    const noKey = await h.app.inject({ method: 'POST', url: '/api/v1/plan', headers: bearer(ws.readKey), payload: { goal: 'technology', budget_usd: 500 } });
    expect(noKey.statusCode).toBe(200);
    expect(noKey.headers['idempotent-replayed']).toBeUndefined();
    // A blank key is no key: nothing stored, nothing replayed, any body goes.
    for (const budget_usd of [500, 500, 700]) {
      const blank = await plan({ goal: 'technology reviews', budget_usd }, '  ');
      expect(blank.statusCode).toBe(200);
      expect(blank.headers['idempotent-replayed']).toBeUndefined();
    }
    const { rows } = await h.database.pool.query(`SELECT count(*)::int AS n FROM idempotency_records WHERE trim(key) = ''`);
    expect(rows[0].n).toBe(0);
  });
});
