// The ceilings a scenario is judged against, served by a Fastify instance configured like the
// app (same logger, request ids, x-request-id hook and one-line-per-request logging), in its own
// process, reading the same environment as the server under test:
//   GET /bare       a small JSON object, no I/O;
//   GET /one-query  one primary-key SELECT as a named (prepared) pg statement, through a pool
//                   built by the app's own createDatabase();
//   POST /min-order/many, /min-order/one  a minimal order transaction (see below).
// The app's compiled modules (dist/) are loaded, so both servers run the same code.
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import Fastify, { type FastifyBaseLogger, LogController } from 'fastify';

const dist = (file: string) => pathToFileURL(join(import.meta.dirname, '..', 'dist', 'src', file)).href;

const { BODY_LIMITS } = (await import(dist('http/body-limits.js'))) as typeof import('../src/http/body-limits.js');
const { loadConfig } = (await import(dist('config.js'))) as typeof import('../src/config.js');
const { createDatabase } = (await import(dist('db/client.js'))) as typeof import('../src/db/client.js');
const { createLogger } = (await import(dist('logger.js'))) as typeof import('../src/logger.js');
const { requestLogging } = (await import(dist('http/plugins/logging.js'))) as typeof import('../src/http/plugins/logging.js');
const { genReqId } = (await import(dist('http/plugins/request-id.js'))) as typeof import('../src/http/plugins/request-id.js');

const config = loadConfig(process.env);
if (!config.DATABASE_URL) throw new Error('ceiling server: DATABASE_URL is required');
const workspaceId = Number(process.env.BENCH_WORKSPACE_ID ?? '1');

// No destination given: like server.ts, pino writes to stdout, which the bench points at /dev/null
// for both servers.
const log = createLogger(config.LOG_LEVEL);
const database = createDatabase({
  url: config.DATABASE_URL,
  max: config.DATABASE_POOL_MAX,
  connectTimeoutMs: config.DATABASE_CONNECT_TIMEOUT_MS,
  statementTimeoutMs: config.DATABASE_STATEMENT_TIMEOUT_MS,
  onError: (err) => log.warn({ err: err.message }, 'idle database connection lost'),
});

const app = Fastify({
  loggerInstance: log as FastifyBaseLogger,
  logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: 'request_id' }),
  genReqId,
  requestIdHeader: false,
  bodyLimit: BODY_LIMITS.standard,
  trustProxy: false,
  return503OnClosing: true,
  routerOptions: { ignoreTrailingSlash: true },
});

app.addHook('onRequest', async (request, reply) => {
  reply.header('x-request-id', request.id);
});
await app.register(requestLogging);

app.get('/bare', async () => ({ status: 'ok' }));

const byId = {
  name: 'bench_workspace_by_id',
  text: 'SELECT id, name, currency FROM workspaces WHERE id = $1',
};
app.get('/one-query', async (_request, reply) => {
  const { rows } = await database.pool.query({ ...byId, values: [workspaceId] });
  if (!rows[0]) return reply.code(404).send({ message: 'no such workspace' });
  return { data: rows[0] };
});

// The third ceiling: a minimal order transaction, the least an order can cost. In one interactive
// transaction with named statements, each sent once the one before is answered (six round trips):
// BEGIN, lock the balance row, check it, insert the order, insert its two ledger entries, update
// the balance, COMMIT; 402 when the balance is too low. This is the transaction the orders'
// target was set against; it sends BEGIN and COMMIT itself, so it stays the same yardstick now
// that the app's `withTransaction` sends BEGIN with the first statement. It works on scratch tables of its own in the bench database, so the app's ledger (balances
// equal to their entries, balanced transactions) is never touched:
//   POST /min-order/many  one of BENCH_MIN_ORDER_ACCOUNTS accounts per request, in turn (the
//                         scenario spreads its 50 connections over as many workspaces);
//   POST /min-order/one   always the same account (every connection on one workspace).
// The request carries the scenario's JSON body ({ offer_ids, target_url }), parsed, not validated.
const minAccounts = Number(process.env.BENCH_MIN_ORDER_ACCOUNTS ?? '20');
const MIN_ORDER_PRICE = 1_000;
await database.pool.query(`
  CREATE TABLE IF NOT EXISTS bench_min_accounts (id int PRIMARY KEY, balance bigint NOT NULL CHECK (balance >= 0));
  CREATE TABLE IF NOT EXISTS bench_min_orders (id bigserial PRIMARY KEY, account_id int NOT NULL, offer_id int NOT NULL,
    price bigint NOT NULL, target_url text NOT NULL, created_at timestamptz NOT NULL DEFAULT now());
  CREATE TABLE IF NOT EXISTS bench_min_entries (id bigserial PRIMARY KEY, order_id bigint NOT NULL, account_id int NOT NULL,
    amount bigint NOT NULL);
  INSERT INTO bench_min_accounts (id, balance) SELECT g, 1000000000000000 FROM generate_series(0, ${minAccounts}) g
    ON CONFLICT (id) DO NOTHING;`);
const minOrder = {
  lock: { name: 'bench_min_lock', text: 'SELECT balance FROM bench_min_accounts WHERE id = $1 FOR UPDATE' },
  order: {
    name: 'bench_min_order',
    text: 'INSERT INTO bench_min_orders (account_id, offer_id, price, target_url) VALUES ($1, $2, $3, $4) RETURNING id',
  },
  entries: {
    name: 'bench_min_entries',
    text: 'INSERT INTO bench_min_entries (order_id, account_id, amount) VALUES ($1, $2, -$3::bigint), ($1, $2, $3::bigint)',
  },
  apply: { name: 'bench_min_apply', text: 'UPDATE bench_min_accounts SET balance = balance - $2 WHERE id = $1' },
};
class Insufficient extends Error {}
/** BEGIN, `fn`'s statements, COMMIT: each awaited before the next is sent. */
async function sixRoundTrips<T>(fn: (tx: import('pg').PoolClient) => Promise<T>): Promise<T> {
  const client = await database.pool.connect();
  let broken = false;
  try {
    await client.query('BEGIN');
    const result = await fn(client);
    await client.query('COMMIT');
    return result;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {
      broken = true;
    });
    throw err;
  } finally {
    client.release(broken);
  }
}
async function placeMinOrder(accountId: number, body: unknown, reply: import('fastify').FastifyReply) {
  const b = (body ?? {}) as { offer_ids?: unknown; target_url?: unknown };
  const offerId = Array.isArray(b.offer_ids) && typeof b.offer_ids[0] === 'number' ? b.offer_ids[0] : 0;
  const targetUrl = typeof b.target_url === 'string' ? b.target_url : '';
  try {
    const id = await sixRoundTrips(async (tx) => {
      const { rows } = await tx.query<{ balance: number }>({ ...minOrder.lock, values: [accountId] });
      if (!rows[0] || rows[0].balance < MIN_ORDER_PRICE) throw new Insufficient();
      const created = await tx.query<{ id: number }>({ ...minOrder.order, values: [accountId, offerId, MIN_ORDER_PRICE, targetUrl] });
      const orderId = created.rows[0]!.id;
      await tx.query({ ...minOrder.entries, values: [orderId, accountId, MIN_ORDER_PRICE] });
      await tx.query({ ...minOrder.apply, values: [accountId, MIN_ORDER_PRICE] });
      return orderId;
    });
    return reply.code(201).send({ data: [{ id }] });
  } catch (err) {
    if (err instanceof Insufficient) return reply.code(402).send({ message: 'The balance is too low.' });
    throw err;
  }
}
let nextAccount = 0;
app.post('/min-order/many', async (request, reply) => {
  nextAccount = (nextAccount % minAccounts) + 1; // 1…minAccounts in turn
  return placeMinOrder(nextAccount, request.body, reply);
});
app.post('/min-order/one', async (request, reply) => placeMinOrder(0, request.body, reply));

await app.listen({ host: config.HOST, port: config.PORT });

let stopping = false;
const stop = async () => {
  if (stopping) return;
  stopping = true;
  setTimeout(() => process.exit(1), 5_000).unref();
  await app.close();
  await database.close();
  process.exit(0);
};
process.on('SIGTERM', () => void stop());
process.on('SIGINT', () => void stop());
