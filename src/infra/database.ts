import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { createDatabase, type Database, type DatabaseOptions } from '../db/client.js';
import { prepareDatabase } from '../db/migrate.js';

declare module 'fastify' {
  interface FastifyInstance {
    database: Database;
  }
}

/**
 * The PostgreSQL pool, migrated before anything uses it (under the setup lock, so processes
 * starting together migrate once), and ended when the app closes.
 */
export const databasePool = fp(
  async function databasePool(app: FastifyInstance, opts: Omit<DatabaseOptions, 'onError'>) {
    const database = createDatabase({
      ...opts,
      onError: (err) => app.log.warn({ err: err.message }, 'idle database connection lost'),
    });
    app.addHook('onClose', () => database.close());
    await prepareDatabase(database.pool);
    app.decorate('database', database);
  },
  { name: 'database' },
);
