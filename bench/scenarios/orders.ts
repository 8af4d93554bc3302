import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import pg from 'pg';
import { mulberry32 } from '../../src/demo/outlet-generator.js';
import { serverDist as dist, serverRoot } from '../server-root.js';
import type { BenchContext, BenchRequest, Scenario } from './types.js';

// POST /api/v1/orders: one order per request, each with an Idempotency-Key of its own, judged
// against the minimal order transaction of the ceiling server (bench/ceiling-server.ts) on the
// same spread and the same number of connections.
// - `orders-many` is what clients send: 10 connections, each request a random one of 20
//   workspaces' spending keys, a new Idempotency-Key, a new target_url, and one publisher-written
//   offer picked at random among 30 outlets' offers (of 200 outlets generated for the run).
// - `orders-many-50` is the older, kinder load: 50 connections over 20 workspaces (connection i
//   on workspace i mod 20), each workspace always buying the same offer of its own outlet. Group
//   commit batches more at 50 connections and the one-transaction ceiling suffers more there.
// - `orders-one` puts every connection on one workspace, where the lock on its balance row
//   serialises the orders.
// Target: 0.60 of the matching ceiling (0.70 for orders-many); any status but 201 and 402 (a
// workspace run dry, which the balances below make unlikely) is an error.
// `npm run bench -- orders` runs all three.

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
  // Servers before the one database handle type (--server-root of an older commit) took drizzle's
  // handle, which their createDatabase returned as `db`; today's take the pool.
  const handle = (database as { db?: unknown }).db ?? database.pool;
  try {
    const { rows: offers } = await database.pool.query<{ id: number }>(
      `SELECT DISTINCT ON (f.outlet_id) f.id FROM offers f JOIN outlets o ON o.id = f.outlet_id
        WHERE o.publisher_id = $1 AND f.active
        ORDER BY f.outlet_id, f.publisher_price_cents + f.fee_cents, f.id`,
      [ctx.publisherId],
    );
    if (offers.length === 0) throw new Error('orders: the demo publisher has no active offer');
    const buyer = async (i: number): Promise<Buyer> => {
      const ws = await createWorkspace(handle as typeof database.pool, { name: `${name} ${String(i).padStart(3, '0')}`, balanceCents: BALANCE_CENTS });
      const key = await createKey(handle as typeof database.pool, { workspaceId: ws.id, name: 'Bench spending key', canPlaceOrders: true });
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

/** The client load (orders-many): its connections, outlets generated, outlets whose offers are bought. */
export const CLIENT_CONNECTIONS = 10;
const GENERATED_OUTLETS = 200;
const BOUGHT_OUTLETS = 30;
/** Requests in each connection's list (sent in turn, round and round): long enough to look random. */
const CLIENT_LIST = 1_000;
const GENERATOR_SEED = 28;

let clientOffers: Promise<number[]> | undefined;

/**
 * 200 outlets generated on the demo publisher with the admin CLI of the server under test (as an
 * operator would), then the active publisher-written offers of 30 of them: what orders-many buys.
 */
function prepareClientOffers(ctx: BenchContext): Promise<number[]> {
  clientOffers ??= (async () => {
    const client = new pg.Client({ connectionString: ctx.databaseUrl });
    await client.connect();
    try {
      const before = (await client.query<{ id: number }>('SELECT coalesce(max(id), 0)::int AS id FROM outlets')).rows[0]!.id;
      execFileSync(
        process.execPath,
        [join(serverRoot(), 'dist/src/cli/run.js'), 'outlets', 'generate', '--publisher', String(ctx.publisherId), '--count', String(GENERATED_OUTLETS), '--seed', String(GENERATOR_SEED)],
        { env: { ...process.env, DATABASE_URL: ctx.databaseUrl }, stdio: ['ignore', 'ignore', 'inherit'] },
      );
      const { rows } = await client.query<{ id: number }>(
        `WITH bought AS (
           SELECT DISTINCT o.id FROM outlets o JOIN offers f ON f.outlet_id = o.id
            WHERE o.id > $1 AND o.publisher_id = $2 AND f.active AND f.content_by = 'publisher'
            ORDER BY o.id LIMIT $3)
         SELECT f.id FROM offers f JOIN bought b ON b.id = f.outlet_id WHERE f.active AND f.content_by = 'publisher' ORDER BY f.id`,
        [before, ctx.publisherId, BOUGHT_OUTLETS],
      );
      if (rows.length === 0) throw new Error('orders-many: the generated outlets have no active publisher-written offer');
      await client.query('ANALYZE outlets');
      await client.query('ANALYZE offers');
      return rows.map((r) => r.id);
    } finally {
      await client.end();
    }
  })();
  return clientOffers;
}

/**
 * One client request: a random workspace's key, a random offer, a new Idempotency-Key, a target_url
 * of its own. (The load generator's unique id cannot go in a body, whose length it fixes before
 * replacing, so the URL is unique per request of a list: a connection repeats one after 1,000.)
 */
function clientOrder(buyers: Buyer[], offers: number[], rnd: () => number, n: string): BenchRequest {
  const buyer = buyers[Math.floor(rnd() * buyers.length)]!;
  return {
    method: 'POST',
    path: '/api/v1/orders',
    headers: { authorization: `Bearer ${buyer.key}`, 'idempotency-key': 'bench-[<id>]' },
    json: { offer_ids: [offers[Math.floor(rnd() * offers.length)]!], target_url: `${TARGET_URL}/${n}` },
  };
}

let offersBought: number[] | undefined;

export const ordersMany: Scenario = {
  name: 'orders-many',
  description:
    `POST /api/v1/orders as clients send it: ${CLIENT_CONNECTIONS} connections, each request a random one of ${WORKSPACES} workspaces, ` +
    `a new Idempotency-Key and target_url, one publisher-written offer at random among ${BOUGHT_OUTLETS} outlets' offers`,
  requests: () => [clientOrder(ready().many, offersBought!, mulberry32(1), 'check')],
  connectionRequests: () => {
    const rnd = mulberry32(GENERATOR_SEED);
    return Array.from({ length: CLIENT_CONNECTIONS }, (_, c) =>
      Array.from({ length: CLIENT_LIST }, (_, i) => clientOrder(ready().many, offersBought!, rnd, `${c}-${i}`)),
    );
  },
  connections: CLIENT_CONNECTIONS,
  uniqueIds: true,
  expectStatus: 201,
  allowStatuses: [402],
  target: { ratio: 0.7, against: 'min-order-many' },
  setup: async (ctx) => {
    data = await prepare(ctx);
    offersBought = await prepareClientOffers(ctx);
  },
};

export const ordersMany50: Scenario = {
  name: 'orders-many-50',
  description: `POST /api/v1/orders, one offer, from ${WORKSPACES} workspaces (connection i on workspace i mod ${WORKSPACES}, each workspace always the same offer), 50 connections`,
  requests: () => [order(ready().many[0]!)],
  connectionRequests: () => Array.from({ length: LISTS }, (_, c) => [order(ready().many[c % WORKSPACES]!)]),
  connections: LISTS,
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
