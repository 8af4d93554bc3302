import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { withTransaction } from '../../../src/db/handle.js';
import { sequenceEvents } from '../../../src/domain/events/sequencer.js';
import { publisherActions } from '../../../src/domain/orders/publisher-actions.js';
import { durationsFrom } from '../../../src/domain/orders/states.js';
import { setupApp } from '../../helpers/app.js';
import { createTestDatabase } from '../../helpers/db.js';
import { bearer } from '../../helpers/fixtures.js';
import { orderKit } from '../../helpers/orders.js';

const CHANGES = 1000;
const ORDERS = 20;

// The follower polls without pause: far beyond a key's default rate limit.
const h = await setupApp({ RATE_LIMIT_PER_MINUTE: 10_000_000 }, { database: await createTestDatabase({ max: 24 }) });
const { place, setup } = orderKit(h);

describe('the follower cursor', () => {
  it(`sees each of ${CHANGES} concurrent changes exactly once, however late each commits`, { timeout: 240_000 }, async () => {
    const { ws, p } = await setup(Array.from({ length: ORDERS }, () => ({})));
    const orders = (await place(ws.spendKey, { offer_ids: p.offers.map((o) => o.id), target_url: 'https://buyer.example/' })).json().data as Array<{ id: number }>;
    expect(orders).toHaveLength(ORDERS);
    const actions = publisherActions(durationsFrom(h.config));

    let writing = true;
    const sequencer = (async () => {
      while (writing) {
        await sequenceEvents(h.database.pool, h.clock.now());
        await sleep(2);
      }
    })();

    const seen: string[] = [];
    let after = 'evt_0000000000000000';
    const follow = async () => {
      const res = await h.app.inject({ method: 'GET', url: `/api/v1/events?after=${after}&limit=100&type=order.message_received`, headers: bearer(ws.readKey) });
      expect(res.statusCode).toBe(200);
      const page = res.json() as { data: Array<{ id: string; data: { body: string } }>; has_more: boolean };
      for (const e of page.data) seen.push(e.data.body);
      if (page.data.length) after = page.data[page.data.length - 1]!.id;
      return page;
    };
    const follower = (async () => {
      while (writing) {
        await follow();
      }
    })();

    // Each change holds its transaction open a random while after writing, so ids (allocated on
    // insert) commit out of order.
    // ORDERS writers at a time, one per order (a message locks its order).
    const committed: number[] = [];
    await Promise.all(
      orders.map(async (order, w) => {
        for (let i = w; i < CHANGES; i += ORDERS) {
          const message = await withTransaction(h.database.pool, async (tx) => {
            const m = await actions.message(tx, p.publisherId, order.id, `change ${i}`, h.clock.now());
            await sleep(Math.random() * 20);
            return m;
          });
          committed.push(message.id);
        }
      }),
    );
    // The follower kept up: most events were read while changes were still committing.
    expect(seen.length).toBeGreaterThan(CHANGES / 2);
    writing = false;
    await Promise.all([sequencer, follower]);
    await sequenceEvents(h.database.pool, h.clock.now());
    for (let round = 0; round < 50; round++) if (!(await follow()).has_more) break;

    expect(committed.some((id, i) => i > 0 && id < committed[i - 1]!)).toBe(true);
    expect(seen).toHaveLength(CHANGES);
    expect(new Set(seen).size).toBe(CHANGES);
    expect(new Set(seen)).toEqual(new Set(Array.from({ length: CHANGES }, (_, i) => `change ${i}`)));
  });
});
