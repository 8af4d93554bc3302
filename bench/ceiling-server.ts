// The two ceilings a scenario is judged against, served by a Fastify instance configured like the
// app (same logger, request ids, x-request-id hook and one-line-per-request logging), in its own
// process, reading the same environment as the server under test:
//   GET /bare       a small JSON object, no I/O;
//   GET /one-query  one primary-key SELECT as a named (prepared) pg statement, through a pool
//                   built by the app's own createDatabase().
// The app's compiled modules (dist/) are loaded, so both servers run the same code.
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import Fastify, { type FastifyBaseLogger, LogController } from 'fastify';

const dist = (file: string) => pathToFileURL(join(import.meta.dirname, '..', 'dist', 'src', file)).href;

const { BODY_LIMIT } = (await import(dist('app.js'))) as typeof import('../src/app.js');
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
  bodyLimit: BODY_LIMIT,
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
