import { describe, expect, it } from 'vitest';
import { durationsFrom } from '../../src/domain/orders/states.js';
import { sweepDeadlines } from '../../src/domain/orders/sweep.js';
import { setupApp } from '../helpers/app.js';
import { NO_LINK_FIGURES, publisherWithOutlet } from '../helpers/catalog.js';
import { bearer, workspaceWithKeys } from '../helpers/fixtures.js';

const h = await setupApp();
const DAY = 86_400_000;

describe('GET /api/v1/outlets/{id}: the track record — happy', () => {
  it('is the stored baseline until the outlet has orders, then computed from them', async () => {
    const ws = await workspaceWithKeys(h.database.pool, { balanceCents: 1_000_000 });
    const p = await publisherWithOutlet(h.database, [{ turnaround_days: 3 }]);
    await h.database.pool.query(
      'UPDATE outlets SET base_orders_completed = 40, base_on_time_rate = 0.9, base_acceptance_rate = 0.8, base_avg_turnaround_days = 4.5, base_rating = 4.2 WHERE id = $1',
      [p.outletId],
    );
    const record = async () =>
      (await h.app.inject({ method: 'GET', url: `/api/v1/outlets/${p.outletId}`, headers: bearer(ws.readKey) })).json().data.track_record;
    // The link figures have no baseline: null until the marketplace checked a placement.
    const unchecked = NO_LINK_FIGURES;
    expect(await record()).toEqual({ orders_completed: 40, on_time_rate: 0.9, acceptance_rate: 0.8, avg_turnaround_days: 4.5, rating: 4.2, ...unchecked });

    const place = async () =>
      (await h.app.inject({
        method: 'POST',
        url: '/api/v1/orders',
        headers: { ...bearer(ws.spendKey), 'idempotency-key': crypto.randomUUID() },
        payload: { offer_ids: [p.offers[0]!.id], target_url: 'https://buyer.example/' },
      })).json().data[0];
    const pub = (path: string, payload?: object) =>
      h.app.inject({ method: 'POST', url: `/api/v1/publisher/orders/${path}`, headers: bearer(p.publisherKey), ...(payload ? { payload } : {}) });

    const completed = await place();
    const declined = await place();
    const missed = await place();
    await pub(`${completed.id}/accept`);
    await pub(`${missed.id}/accept`);
    await pub(`${declined.id}/decline`, { reason: 'no' });
    await pub(`${completed.id}/draft`, { title: 'A draft for the record', body: 'text' });
    await h.app.inject({ method: 'POST', url: `/api/v1/orders/${completed.id}/approve-draft`, headers: bearer(ws.readKey) });
    h.clock.advance(2 * DAY);
    await pub(`${completed.id}/publish`, { live_url: `https://${p.domain}/a` });
    await h.app.inject({ method: 'POST', url: `/api/v1/orders/${completed.id}/approve`, headers: bearer(ws.spendKey) });
    h.clock.advance(2 * DAY); // `missed` was accepted 4 days ago with a 3-day turnaround
    await sweepDeadlines(h.database.pool, h.clock.now(), durationsFrom(h.config));

    expect(await record()).toEqual({
      orders_completed: 1,
      acceptance_rate: 0.667, // 2 accepted of 3 decided
      on_time_rate: 0.5, // 1 published, 1 expired while writing
      avg_turnaround_days: 2,
      rating: 4.2,
      ...unchecked,
    });
    await h.app.searchEngine.catchUp(); // the search index learns of the outlet by notification
    const listed = (await h.app.inject({ method: 'GET', url: `/api/v1/outlets?q=${encodeURIComponent(p.domain)}`, headers: bearer(ws.readKey) })).json();
    expect(listed.data[0].track_record.orders_completed).toBe(1);
  });
});
