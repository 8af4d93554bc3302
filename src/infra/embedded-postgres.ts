import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { EmbeddedHandle } from '../db/embedded.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** The PostgreSQL this process started; absent when DATABASE_URL names a server. */
    embeddedPostgres?: EmbeddedHandle;
  }
}

/**
 * Starts the PostgreSQL that ships with the package (data under `dataDir`) and stops it when the
 * app closes, after the pool (plugins close in the reverse order of their registration).
 */
export const embeddedPostgres = fp(
  async function embeddedPostgres(app: FastifyInstance, opts: { dataDir: string; port: number }) {
    // Loaded only here: the library hooks process exit when imported (src/db/embedded.ts).
    const { startEmbedded } = await import('../db/embedded.js');
    const embedded = await startEmbedded({ dataDir: opts.dataDir, port: opts.port, recordPid: true });
    app.addHook('onClose', () => embedded.stop());
    app.log.info({ port: opts.port, dataDir: opts.dataDir }, 'embedded PostgreSQL started');
    app.decorate('embeddedPostgres', embedded);
  },
  { name: 'embedded-postgres' },
);
