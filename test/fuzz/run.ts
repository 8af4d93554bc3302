import { rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import pg from 'pg';
import { buildApp } from '../../src/app.js';
import { defaultConfig } from '../../src/config.js';
import { createDatabase } from '../../src/db/client.js';
import { migrateOnly } from '../../src/db/migrate.js';
import { ManualClock } from '../helpers/clock.js';
import { createLogger } from '../../src/logger.js';
import { startTempEmbedded } from '../helpers/pg-server.js';
import { withDatabase } from '../helpers/urls.js';
import { failed, formatReport, runFuzz } from './fuzzer.js';
import { FUZZ_LIMITS, fuzzSeed, serverErrorLines } from './options.js';
import { seedWorld } from './world.js';

// `npm run fuzz [-- --runs N] [-- --seed S]`: the long fuzz run (12,000 requests by default) on a
// database of its own: a new database on TEST_DATABASE_URL's / DATABASE_URL's server when one is
// set (dropped afterwards; needs CREATEDB), else an embedded PostgreSQL in a temporary folder.
// Prints counts by status and surface and every violation; exits 1 on any.

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  if (i !== -1) return process.argv[i + 1];
  const eq = process.argv.find((a) => a.startsWith(`--${name}=`));
  return eq?.slice(name.length + 3);
}

const runs = Number(arg('runs') ?? process.env.FUZZ_RUNS ?? 12_000);
if (!Number.isInteger(runs) || runs < 1) {
  process.stderr.write(`--runs must be a positive integer\n`);
  process.exit(2);
}
const seed = fuzzSeed(arg('seed') ?? process.env.FUZZ_SEED);

async function adminQuery(url: string, sql: string): Promise<void> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    await c.query(sql);
  } finally {
    await c.end();
  }
}

async function main(): Promise<number> {
  const started = Date.now();
  const serverUrl = process.env.TEST_DATABASE_URL || process.env.DATABASE_URL;
  let embedded: Awaited<ReturnType<typeof startTempEmbedded>> | undefined;
  let adminUrl: string;
  if (serverUrl) adminUrl = serverUrl;
  else {
    process.stdout.write('fuzz: starting an embedded PostgreSQL…\n');
    embedded = await startTempEmbedded();
    adminUrl = embedded.adminUrl;
  }
  const name = `mkt_fuzz_${randomBytes(5).toString('hex')}`;
  await adminQuery(adminUrl, `CREATE DATABASE ${name}`);
  // A small pool: each connection sees more of the statements it prepares (and their name clashes).
  const database = createDatabase({ url: withDatabase(adminUrl, name), max: 3, connectTimeoutMs: 5000 });
  const logs: string[] = [];
  let app: Awaited<ReturnType<typeof buildApp>> | undefined;
  try {
    await migrateOnly(database.pool);
    const config = defaultConfig(FUZZ_LIMITS);
    const clock = new ManualClock(Date.now());
    const sink = new Writable({
      write(chunk, _enc, cb) {
        const text = String(chunk);
        // Keep only what the checks need: error-level lines.
        if (text.includes('"level":50') || text.includes('"level":60')) logs.push(text);
        cb();
      },
    });
    app = await buildApp({ config, database, logger: createLogger(config.LOG_LEVEL, sink), clock });
    await app.ready();
    const world = await seedWorld(app, database);
    process.stdout.write(`fuzz: ${runs} requests, seed ${seed} (set up in ${((Date.now() - started) / 1000).toFixed(1)} s)\n`);
    const report = await runFuzz({ app, pool: database.pool, clock }, world, {
      numRuns: runs,
      seed,
      progressEvery: 1000,
      onProgress: (sent, r) => {
        const fives = Object.entries(r.byStatus).filter(([s]) => Number(s) >= 500).reduce((a, [, n]) => a + n, 0);
        process.stdout.write(`  … ${sent} sent, ${r.violations.length + r.suppressed} violations, ${fives} 5xx\n`);
      },
    });
    const errors = serverErrorLines(logs);
    if (errors.length) report.finalChecks.push(`${errors.length} error-level log lines, e.g. ${errors[0]!.slice(0, 800)}`);
    process.stdout.write(`${formatReport(report, world, true)}\n`);
    if (!report.mcp.available) process.stdout.write(`MCP was not fuzzed: ${report.mcp.reason}\n`);
    process.stdout.write(`fuzz: ${failed(report) ? 'FAILED' : 'passed'} in ${((Date.now() - started) / 1000).toFixed(1)} s overall\n`);
    return failed(report) ? 1 : 0;
  } finally {
    await app?.close().catch(() => {});
    await database.close().catch(() => {});
    await adminQuery(adminUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => {});
    if (embedded) {
      await embedded.stop().catch(() => {});
      rmSync(embedded.dataDir, { recursive: true, force: true });
    }
  }
}

main().then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(`fuzz: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
