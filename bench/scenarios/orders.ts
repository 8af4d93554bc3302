import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { BenchContext, BenchRequest, Scenario } from './types.js';

// POST /api/v1/orders: one order per request, each with an Idempotency-Key of its own, judged
// against the minimal order transaction of the ceiling server (bench/ceiling-server.ts) on the
// same spread: `orders-many` spreads its 50 connections over 20 workspaces (connection i on
// workspace i mod 20, so two or three connections share each), `orders-one` puts every connection
// on one workspace, where the lock on its balance row serialises the orders.
// Target: 0.60 of the matching ceiling; any status but 201 and 402 (a workspace run dry, which the
// balances below make unlikely) is an error. `npm run bench -- orders` runs both.

const dist = (file: string) => pathToFileURL(join(import.meta.dirname, '..', '..', 'dist', 'src', file)).href;

export const WORKSPACES = 20;
/** $10bn each: ~5 × 10^4 orders of the cheapest offers over a run leave it far from empty. */
const BALANCE_CENTS = 1_000_000_000_000;
const TARGET_URL = 'https://buyer.example/landing';

export interface Buyer {
  key: string;
  offerId: number;
}
interface Prepared {
  many: Buyer[];
  one: Buyer;
}

/**
 * Straight through the built app's domain modules (as the admin CLI does, without a process per
 * call): `count` workspaces with a balance and a spending key each, and the demo publisher's
 * cheapest active offers to buy — a different one per workspace (workspace i buys offer i mod
 * their number), so orders from different workspaces share no offer or outlet row (their
 * foreign-key locks don't meet).
 */
export async function createBuyers(ctx: BenchContext, count: number, name: string): Promise<Buyer[]> {
  const { createDatabase } = (await import(dist('db/client.js'))) as typeof import('../../src/db/client.js');
  const { createWorkspace } = (await import(dist('domain/workspaces/workspace-service.js'))) as typeof import('../../src/domain/workspaces/workspace-service.js');
  const { createKey } = (await import(dist('domain/keys/key-service.js'))) as typeof import('../../src/domain/keys/key-service.js');
  const database = createDatabase({ url: ctx.databaseUrl, max: 8 });
  try {
    const { rows: offers } = await database.pool.query<{ id: number }>(
      `SELECT DISTINCT ON (f.outlet_id) f.id FROM offers f JOIN outlets o ON o.id = f.outlet_id
        WHERE o.publisher_id = $1 AND f.active
        ORDER BY f.outlet_id, f.publisher_price_cents + f.fee_cents, f.id`,
      [ctx.publisherId],
    );
    if (offers.length === 0) throw new Error('orders: the demo publisher has no active offer');
    const buyer = async (i: number): Promise<Buyer> => {
      const ws = await createWorkspace(database.db, { name: `${name} ${String(i).padStart(3, '0')}`, balanceCents: BALANCE_CENTS });
      const key = await createKey(database.db, { workspaceId: ws.id, name: 'Bench spending key', canPlaceOrders: true });
      return { key: key.key, offerId: offers[i % offers.length]!.id };
    };
    const all: Buyer[] = [];
    for (let i = 0; i < count; i += 8) {
      const batch = Array.from({ length: Math.min(8, count - i) }, (_, j) => buyer(i + j));
      all.push(...(await Promise.all(batch)));
    }
    return all;
  } finally {
    await database.close();
  }
}

let prepared: Promise<Prepared> | undefined;

/** Once for both scenarios: 21 workspaces, 20 for orders-many and one for orders-one. */
function prepare(ctx: BenchContext): Promise<Prepared> {
  prepared ??= createBuyers(ctx, WORKSPACES + 1, 'Bench Buyer').then((all) => ({ many: all.slice(0, WORKSPACES), one: all[WORKSPACES]! }));
  return prepared;
}

export function order(buyer: Buyer): BenchRequest {
  return {
    method: 'POST',
    path: '/api/v1/orders',
    headers: { authorization: `Bearer ${buyer.key}`, 'idempotency-key': 'bench-[<id>]' },
    json: { offer_ids: [buyer.offerId], target_url: TARGET_URL },
  };
}

// setup() runs before requests() is asked for, so the data is there by then.
let data: Prepared | undefined;
const ready = () => {
  if (!data) throw new Error('orders: setup() has not run');
  return data;
};

/** 50 connections by default; more connections simply share lists. */
export const LISTS = 50;

export const ordersMany: Scenario = {
  name: 'orders-many',
  description: `POST /api/v1/orders, one offer, from ${WORKSPACES} workspaces (connection i on workspace i mod ${WORKSPACES})`,
  requests: () => [order(ready().many[0]!)],
  connectionRequests: () => Array.from({ length: LISTS }, (_, c) => [order(ready().many[c % WORKSPACES]!)]),
  uniqueIds: true,
  expectStatus: 201,
  allowStatuses: [402],
  target: { ratio: 0.6, against: 'min-order-many' },
  setup: async (ctx) => {
    data = await prepare(ctx);
  },
};

export const ordersOne: Scenario = {
  name: 'orders-one',
  description: 'POST /api/v1/orders, one offer, every connection with the same key of one workspace',
  requests: () => [order(ready().one)],
  uniqueIds: true,
  expectStatus: 201,
  allowStatuses: [402],
  target: { ratio: 0.6, against: 'min-order-one' },
  setup: async (ctx) => {
    data = await prepare(ctx);
  },
};
