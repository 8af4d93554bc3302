import { describe, expect, it } from 'vitest';
import { setupApp } from '../helpers/app.js';
import { publisherWithOutlet } from '../helpers/catalog.js';
import { ManualClock } from '../helpers/clock.js';
import { createTestDatabase } from '../helpers/db.js';
import { bearer, workspaceWithKeys } from '../helpers/fixtures.js';

// The objects an app shares between its requests (the placement groups, the workspaces module
// with its balance reader, the link checker) are made by the app's own plugins, not kept per
// pool by a module: two apps on one pool each place with their own clock, where a module's
// cache would hand the second app the first app's placement groups, and its clock with them.
const database = await createTestDatabase();
const first = await setupApp({ RATE_LIMIT_PER_MINUTE: 100_000 }, { database, clock: new ManualClock(Date.parse('2026-03-01T08:00:00Z')) });
const second = await setupApp({ RATE_LIMIT_PER_MINUTE: 100_000 }, { database, clock: new ManualClock(Date.parse('2026-04-01T08:00:00Z')) });

describe('POST /api/v1/orders and every app: objects an app shares between its requests — happy', () => {
  it('are its own: two apps on one pool have their own placement groups, workspaces module and link checker', () => {
    expect(first.app.placementGroups).not.toBe(second.app.placementGroups);
    expect(first.app.workspaces).not.toBe(second.app.workspaces);
    expect(first.app.linkChecker).not.toBe(second.app.linkChecker);
  });

  it("each app places with its own clock, whichever placed first on the pool", async () => {
    const p = await publisherWithOutlet(database);
    const ws = await workspaceWithKeys(database.pool, { balanceCents: 1_000_000 });
    const place = (h: typeof first, idem: string) =>
      h.app.inject({
        method: 'POST',
        url: '/api/v1/orders',
        headers: { ...bearer(ws.spendKey), 'idempotency-key': idem },
        payload: { offer_ids: [p.offers[0]!.id], target_url: 'https://buyer.example/' },
      });
    const a = await place(first, 'from-first');
    const b = await place(second, 'from-second');
    expect([a.statusCode, b.statusCode]).toEqual([201, 201]);
    expect(a.json().data[0].created_at).toBe('2026-03-01T08:00:00Z');
    expect(b.json().data[0].created_at).toBe('2026-04-01T08:00:00Z');
  });
});
