import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type pg from 'pg';
import { SearchEngine } from '../../domain/outlets/search-engine.js';

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
    const engine = new SearchEngine(opts.pool, (err, what) => app.log.warn({ err: err.message }, what));
    engine.start();
    app.decorate('searchEngine', engine);
    app.addHook('onClose', () => engine.close());
  },
  { name: 'search-engine' },
);
