import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { migrateOnly } from '../../src/db/migrate.js';
import { projectRoot } from '../../src/paths.js';
import { startPgServer } from './pg-server.js';
import { withDatabase } from './urls.js';

declare module 'vitest' {
  export interface ProvidedContext {
    pgAdminUrl: string;
    templateDatabase: string;
  }
}

/** One PostgreSQL for the run, with a migrated template database every test file clones. */
export default async function setup(project: TestProject) {
  // The server and CLI the process tests spawn run from dist/, as `npm start` runs them.
  execFileSync(process.execPath, [join(projectRoot, 'scripts', 'build-if-needed.mjs')], { stdio: 'inherit', cwd: projectRoot });
  const server = await startPgServer();
  const template = `mkt_tpl_${process.pid}_${Date.now().toString(36)}`;
  const admin = new pg.Client({ connectionString: server.adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${template}`);
  await admin.end();
  const pool = new pg.Pool({ connectionString: withDatabase(server.adminUrl, template), max: 2 });
  await migrateOnly(pool);
  await pool.end();
  project.provide('pgAdminUrl', server.adminUrl);
  project.provide('templateDatabase', template);

  return async () => {
    if (server.kind === 'env') {
      const c = new pg.Client({ connectionString: server.adminUrl });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${template} WITH (FORCE)`).catch(() => {});
      await c.end();
    }
    await server.stop();
  };
}
