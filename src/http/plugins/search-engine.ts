import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type pg from 'pg';
import { warmConnections } from '../../domain/outlets/search-connections.js';
import { SearchEngine } from '../../domain/outlets/search-engine.js';
import type { KeyResolver } from '../../domain/keys/key-resolver.js';
import { warmSearches, warmUp } from '../../domain/outlets/search-warmup.js';
import { routeWarmUps, warmSearchRoute } from '../search-route-warm-up.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** The process's outlet search engine (REST, MCP and the planner search through it). */
    searchEngine: SearchEngine;
    /** Whether search is ready to serve (what /readyz says): its index in, and the REST route's first searches asked. */
    searchReady(): boolean;
  }
}

/**
 * The outlet search engine of this process: started (its index loading) when the app is built,
 * decorated as `app.searchEngine`, stopped (its listening connection closed) on close. Once its
 * first index serves, the REST route is sent its first searches (search-route-warm-up.ts) before
 * `app.searchReady()` says so.
 */
export const searchEnginePlugin = fp(
  async function searchEngine(app: FastifyInstance, opts: { pool: pg.Pool; resolver: KeyResolver }) {
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
    let routeWarm = false;
    app.decorate('searchReady', () => engine.ready && routeWarm);
    app.addHook('onClose', () => engine.close());
    // Not awaited: the app serves /healthz while the index loads (minutes at a million outlets).
    app.addHook('onReady', async () => {
      void engine.loadedOnce
        .then(async () => {
          const started = performance.now();
          const count = routeWarmUps(engine.loaded!.counts.live);
          const { answered, refused } = await warmSearchRoute(app, opts.pool, opts.resolver, count);
          if (count > 0) {
            const ms = Math.round(performance.now() - started);
            if (refused === undefined) app.log.info({ searches: answered, ms }, 'search: the REST route answered its warm-up searches');
            else app.log.warn({ searches: answered, status: refused }, 'search: the REST route refused a warm-up search; ready without the rest');
          }
        })
        .catch((err: Error) => app.log.warn({ err: err.message }, 'search: warming the REST route'))
        .finally(() => (routeWarm = true));
    });
  },
  { name: 'search-engine' },
);
