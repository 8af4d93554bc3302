import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type pg from 'pg';
import { warmConnections } from '../../domain/outlets/search-connections.js';
import { SearchEngine } from '../../domain/outlets/search-engine.js';
import { warmSearches, warmUp } from '../../domain/outlets/search-warmup.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** The process's outlet search engine (REST, MCP and the planner search through it). */
    searchEngine: SearchEngine;
  }
}

/**
 * The outlet search engine of this process: started (its index loading) when the app is built,
 * decorated as `app.searchEngine`, stopped (its listening connection closed) on close.
 */
export const searchEnginePlugin = fp(
  async function searchEngine(app: FastifyInstance, opts: { pool: pg.Pool }) {
    const engine = new SearchEngine(
      opts.pool,
      (err, what) => app.log.warn({ err: err.message }, what),
      async (index, ask) => {
        await warmUp(index, ask);
        // Before the first index only: on a reload the connections are open and busy answering.
        // And only for a catalog big enough to be warmed: a small one is a test's or a trial's,
        // where the ten backends opened ahead (0.1-0.2 CPU-seconds of PostgreSQL's) were mostly
        // never used: test/http's files opened about 520 backends with them, 210 without.
        if (!engine.ready && warmSearches(index.counts.live) > 0) await warmConnections(opts.pool).catch((err: Error) => app.log.warn({ err: err.message }, 'search: opening the connections ahead'));
      },
    );
    engine.start();
    app.decorate('searchEngine', engine);
    app.addHook('onClose', () => engine.close());
  },
  { name: 'search-engine' },
);
