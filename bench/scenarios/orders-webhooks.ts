import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { type Buyer, createBuyers, LISTS, order, WORKSPACES } from './orders.js';
import type { BenchContext, Scenario, ScenarioObserver } from './types.js';

// orders-many-50 with a webhook endpoint on each of its workspaces. Every placement writes its events
// either way (in its transaction); with an endpoint the sequencer also creates a delivery for the
// buyer's `order.placed`, and the server's delivery worker sends it, signed, to a receiver that
// this process runs on 127.0.0.1 (it answers 204 and counts). Measured in the same rounds as
// orders-many-50, so orders-webhooks ÷ orders-many-50 is what an endpoint costs a placement. Shown,
// not judged. Below the table: how fast the receiver got deliveries, and the backlog.

/** How long the report waits for the backlog to drain after the last round, and for the burst. */
const DRAIN_LIMIT_MS = 120_000;
/** Deliveries sent again at once after the rounds, to time the delivery worker with no other load. */
const BURST = 10_000;

let buyers: Buyer[] | undefined;
let receiver: Server | undefined;
let databaseUrl = '';
let received = 0;
const ids = new Set<string>();

function startReceiver(): Promise<string> {
  receiver = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      received++;
      const id = req.headers['webhook-id'];
      if (typeof id === 'string') ids.add(id);
      res.writeHead(204).end();
    });
  });
  return new Promise((resolve, reject) => {
    receiver!.once('error', reject);
    receiver!.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(receiver!.address() as AddressInfo).port}/hook`));
  });
}

async function backlog(pool: pg.Pool): Promise<{ pending: number; unpositioned: number }> {
  const { rows } = await pool.query<{ pending: number; unpositioned: number }>(
    `SELECT (SELECT count(*) FROM webhook_deliveries WHERE status = 'pending')::int AS pending,
            (SELECT count(*) FROM events WHERE position IS NULL)::int AS unpositioned`,
  );
  return rows[0]!;
}

const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

async function waitUntil(done: () => Promise<boolean>): Promise<boolean> {
  const start = performance.now();
  while (!(await done())) {
    if (performance.now() - start > DRAIN_LIMIT_MS) return false;
    await sleep(50);
  }
  return true;
}

const middle = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

/**
 * Deliveries received inside orders-webhooks' measured windows and the backlog as each closed;
 * then, after the rounds, the backlog drained, and a burst: already delivered deliveries sent
 * again at once (what the resend route does, for many), timed until the receiver has them all.
 */
function observer(): ScenarioObserver {
  let pool: pg.Pool | undefined;
  let openedAt = 0;
  let receivedAtOpen = 0;
  let windowMs = 0;
  let inWindows = 0;
  const atWindowEnd: Array<Promise<{ pending: number; unpositioned: number }>> = [];
  return {
    windowStart() {
      openedAt = performance.now();
      receivedAtOpen = received;
    },
    windowEnd() {
      windowMs += performance.now() - openedAt;
      inWindows += received - receivedAtOpen;
      pool ??= new pg.Pool({ connectionString: databaseUrl, max: 1 });
      atWindowEnd.push(backlog(pool));
    },
    async report() {
      const db = (pool ??= new pg.Pool({ connectionString: databaseUrl, max: 1 }));
      try {
        const ends = await Promise.all(atWindowEnd);
        const left = await backlog(db);
        const drainStart = performance.now();
        const drained = await waitUntil(async () => {
          const b = await backlog(db);
          return b.pending + b.unpositioned === 0;
        });
        const drainS = (performance.now() - drainStart) / 1000;
        const { rows } = await db.query<{ delivered: number; retried: number; failed: number }>(
          `SELECT count(*) FILTER (WHERE status = 'delivered')::int AS delivered, count(*) FILTER (WHERE attempts > 1)::int AS retried,
                  count(*) FILTER (WHERE status = 'failed')::int AS failed FROM webhook_deliveries`,
        );
        const all = rows[0]!;
        const load =
          `deliveries during orders-webhooks (${WORKSPACES} endpoints; one receiver answering 204 on 127.0.0.1, in the bench process): ` +
          `${fmt(inWindows)} received in its measured windows, ${fmt(inWindows / (windowMs / 1000))}/s; ` +
          `as its windows closed, pending deliveries median ${fmt(middle(ends.map((b) => b.pending)))} (max ${fmt(Math.max(0, ...ends.map((b) => b.pending)))}), ` +
          `events not yet sequenced median ${fmt(middle(ends.map((b) => b.unpositioned)))} (max ${fmt(Math.max(0, ...ends.map((b) => b.unpositioned)))}); ` +
          `after the last round ${fmt(left.pending)} pending and ${fmt(left.unpositioned)} not sequenced, ` +
          (drained ? `done ${drainS.toFixed(1)} s later` : `not done ${DRAIN_LIMIT_MS / 1000} s later`) +
          `; ${fmt(all.delivered)} delivered, ${fmt(all.retried)} retried, ${fmt(all.failed)} failed, ${fmt(received - ids.size)} received twice`;

        const before = received;
        const burstStart = performance.now();
        const { rowCount } = await db.query(
          `INSERT INTO webhook_deliveries (event_id, endpoint_id, next_attempt_at, created_at)
           SELECT event_id, endpoint_id, now(), now() FROM webhook_deliveries WHERE status = 'delivered' ORDER BY id LIMIT ${BURST}`,
        );
        const burst = rowCount ?? 0;
        const done = await waitUntil(async () => received - before >= burst);
        const burstS = (performance.now() - burstStart) / 1000;
        const rate =
          `delivery rate with no other load: ${fmt(burst)} delivered deliveries sent again at once (as resend does): ` +
          (done ? `received in ${burstS.toFixed(1)} s, ${fmt(burst / burstS)}/s` : `${fmt(received - before)} received in ${DRAIN_LIMIT_MS / 1000} s`);
        return [load, rate];
      } finally {
        await db.end();
        if (receiver) {
          const closed = new Promise<void>((r) => receiver!.close(() => r()));
          receiver.closeAllConnections();
          await closed;
        }
      }
    },
  };
}

const ready = () => {
  if (!buyers) throw new Error('orders-webhooks: setup() has not run');
  return buyers;
};

export const ordersWebhooks: Scenario = {
  name: 'orders-webhooks',
  description: `orders-many-50 with a webhook endpoint on each of its ${WORKSPACES} workspaces, delivered to a local receiver`,
  requests: () => [order(ready()[0]!)],
  connectionRequests: () => Array.from({ length: LISTS }, (_, c) => [order(ready()[c % WORKSPACES]!)]),
  uniqueIds: true,
  expectStatus: 201,
  allowStatuses: [402],
  target: { against: { scenario: 'orders-many-50' } },
  connections: LISTS,
  diagnostic: true,
  // Deliveries go to the receiver on 127.0.0.1, which the server refuses unless told otherwise.
  serverEnv: { OUTBOUND_ALLOW_LOOPBACK: 'true' },
  observer: observer(),
  setup: async (ctx: BenchContext) => {
    databaseUrl = ctx.databaseUrl;
    const url = await startReceiver();
    buyers = await createBuyers(ctx, WORKSPACES, 'Bench Hooked Buyer');
    for (const b of buyers) {
      const res = await fetch(`${ctx.baseUrl}/api/v1/webhook-endpoints`, {
        method: 'POST',
        headers: { authorization: `Bearer ${b.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ url }),
      });
      if (res.status !== 201) throw new Error(`orders-webhooks: creating an endpoint answered ${res.status}: ${(await res.text()).slice(0, 300)}`);
    }
  },
};
