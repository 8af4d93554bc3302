import { spawn } from 'node:child_process';
import { join } from 'node:path';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { migrateOnly } from '../../src/db/migrate.js';
import { projectRoot } from '../../src/paths.js';
import { startPgServer } from './pg-server.js';
import { DONE } from './db.js';
import { withDatabase } from './urls.js';

declare module 'vitest' {
  export interface ProvidedContext {
    pgAdminUrl: string;
    templateDatabase: string;
    /** What the names of this run's test databases start with, so the teardown finds them. */
    testDatabasePrefix: string;
  }
}

/** One PostgreSQL for the run, with a migrated template database every test file clones. */
export default async function setup(project: TestProject) {
  // The server and CLI the process tests spawn run from dist/, as `npm start` runs them. Built
  // without the type check (build-if-needed.mjs says why), while PostgreSQL starts and the
  // template is migrated: no file starts before both are done.
  const built = buildDist();
  built.catch(() => {}); // awaited below; a failure is reported there, not as an unhandled rejection
  const server = await startPgServer();
  const run = `${process.pid}_${Date.now().toString(36)}`;
  const template = `mkt_tpl_${run}`;
  const prefix = `mkt_test_${run}_`;
  const admin = new pg.Client({ connectionString: server.adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${template}`);
  await admin.end();
  const pool = new pg.Pool({ connectionString: withDatabase(server.adminUrl, template), max: 2 });
  await migrateOnly(pool);
  await pool.end();
  await built.catch(async (err) => {
    if (server.kind === 'env') await dropTemplate(server.adminUrl, template).catch(() => {});
    await server.stop();
    throw err;
  });
  project.provide('pgAdminUrl', server.adminUrl);
  project.provide('templateDatabase', template);
  project.provide('testDatabasePrefix', prefix);

  // On a server named by TEST_DATABASE_URL the run's databases are dropped here rather than by
  // each file (db.ts says why): those marked done every few seconds, several at once (drops
  // waiting together are served by the same checkpoint), and the rest when the run ends. The
  // embedded and container servers go with their data.
  const janitor = server.kind === 'env' ? startJanitor(server.adminUrl, prefix) : undefined;

  return async () => {
    if (janitor) await janitor.stop(template);
    await server.stop();
  };
}

async function dropTemplate(adminUrl: string, template: string): Promise<void> {
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${template}`).finally(() => admin.end());
}

function buildDist(): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(projectRoot, 'scripts', 'build-if-needed.mjs'), '--no-check'], { stdio: 'inherit', cwd: projectRoot });
    child.once('error', reject);
    child.once('exit', (code, signal) => (code === 0 ? resolve() : reject(new Error(`building dist/ failed (${signal ?? `exit ${code}`})`))));
  });
}

function startJanitor(adminUrl: string, prefix: string) {
  const pool = new pg.Pool({ connectionString: adminUrl, max: 16 });
  const dropAll = async (names: string[]) => {
    await Promise.all(names.map((name) => pool.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => {})));
  };
  const named = async (onlyDone: boolean) => {
    const { rows } = await pool.query<{ datname: string }>(
      `SELECT d.datname FROM pg_database d LEFT JOIN pg_shdescription s ON s.objoid = d.oid AND s.classoid = 'pg_database'::regclass
        WHERE starts_with(d.datname, $1) AND (NOT $2 OR s.description = $3)`,
      [prefix, onlyDone, DONE],
    );
    return rows.map((r) => r.datname);
  };
  let round: Promise<void> = Promise.resolve();
  const timer = setInterval(() => {
    round = round.then(async () => dropAll(await named(true))).catch(() => {});
  }, 5_000);
  timer.unref();
  return {
    async stop(template: string) {
      clearInterval(timer);
      await round;
      await dropAll(await named(false));
      await dropAll([template]);
      await pool.end();
    },
  };
}
