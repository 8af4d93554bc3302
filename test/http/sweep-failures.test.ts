import { describe, expect, it } from 'vitest';
import { durationsFrom } from '../../src/domain/orders/states.js';
import { SweepIncomplete, sweepDeadlines } from '../../src/domain/orders/sweep.js';
import { setupApp } from '../helpers/app.js';
import { publisherWithOutlet } from '../helpers/catalog.js';
import { bearer, workspaceWithKeys } from '../helpers/fixtures.js';
import { expectLedgerInvariants } from '../helpers/ledger-invariants.js';

const h = await setupApp({ RATE_LIMIT_PER_MINUTE: 100_000 });
const durations = durationsFrom(h.config);
const DAY = 86_400_000;

describe('deadline sweep', () => {
  it('sweeps every other due order when one of them fails, then says which one failed', async () => {
    const ws = await workspaceWithKeys(h.database.pool, { balanceCents: 100_000 });
    const p = await publisherWithOutlet(h.database);
    const ids: number[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await h.app.inject({
        method: 'POST',
        url: '/api/v1/orders',
        headers: { ...bearer(ws.spendKey), 'idempotency-key': `sweep-${i}` },
        payload: { offer_ids: [p.offers[0]!.id], target_url: 'https://buyer.example/' },
      });
      expect(res.statusCode).toBe(201);
      ids.push(res.json().data[0].id);
    }
    // The first order due cannot be written: a real failure inside its own transaction.
    const broken = ids[0]!;
    await h.database.pool.query(`
      CREATE FUNCTION refuse_order() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN RAISE EXCEPTION 'order % is broken', OLD.id; END $$;
      CREATE TRIGGER refuse_order BEFORE UPDATE ON orders FOR EACH ROW WHEN (OLD.id = ${broken}) EXECUTE FUNCTION refuse_order();`);
    h.clock.advance(4 * DAY); // past every respond_by

    const err = await sweepDeadlines(h.database.pool, h.clock.now(), durations).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SweepIncomplete);
    expect((err as SweepIncomplete).failedOrderIds).toEqual([broken]);
    expect((err as SweepIncomplete).result).toEqual({ expired: 2, auto_approved: 0, drafts_auto_approved: 0, returned: 0, link_refunded: 0 });
    expect((err as Error).message).toMatch(`order ${broken} is broken`);
    const { rows } = await h.database.pool.query('SELECT id, status FROM orders WHERE id = ANY($1) ORDER BY id', [ids]);
    expect(rows).toEqual([
      { id: ids[0], status: 'awaiting_acceptance' },
      { id: ids[1], status: 'expired' },
      { id: ids[2], status: 'expired' },
    ]);
    await expectLedgerInvariants(h.database);

    // Once the order can be written again, the next sweep takes it.
    await h.database.pool.query('DROP TRIGGER refuse_order ON orders');
    expect(await sweepDeadlines(h.database.pool, h.clock.now(), durations)).toEqual({ expired: 1, auto_approved: 0, drafts_auto_approved: 0, returned: 0, link_refunded: 0 });
    await expectLedgerInvariants(h.database);
  });
});
