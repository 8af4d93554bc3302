import type { FastifyInstance } from 'fastify';
import type pg from 'pg';
import { abilitiesFor } from '../domain/keys/abilities.js';
import type { KeyResolver } from '../domain/keys/key-resolver.js';
import type { WorkspacePrincipal } from '../domain/keys/principal.js';
import { type WarmSearch, warmSearches, warmSearchesOf } from '../domain/outlets/search-warmup.js';
import { oldestWorkspaceId } from '../domain/workspaces/workspace-service.js';

// The engine answers searches of its own before its index serves (domain/outlets/search-warmup.ts),
// which compiles the search itself. What a request does around the search still ran for the first
// time on the first clients' requests: its query checked, its key resolved and counted, the page's
// rows read from PostgreSQL and shaped, the answer serialised and logged. At 1M outlets that made
// the server's own p99 in the first second after /readyz 36–68 ms against 14–40 ms later (six
// starts; with these requests asked first, 22–38 ms over twelve; each start its own process, in
// turns, not side by side in one run). So once the index serves, and before /readyz
// says ready, the process sends its REST route a hundred of the engine's warm-up searches itself,
// through `inject` (no socket), with a key lent by the key resolver: one that lives only in this
// process's memory for those requests (KeyResolver.lend), reads as the oldest workspace, and can do
// nothing but read. Their answers are dropped; they are logged and counted like any request.

/** Searches sent through the route for a catalog of `outlets`: a tenth of the engine's, none for a small catalog. */
export function routeWarmUps(outlets: number): number {
  return Math.floor(warmSearches(outlets) / 10);
}

/** A warm-up search as a client writes it in the URL (`max_price_usd` in dollars). */
export function restQueryOf(s: WarmSearch): string {
  const { max_price_cents, ...filters } = s.params;
  const query = new URLSearchParams();
  if (s.q !== undefined) query.set('q', s.q);
  for (const [name, value] of Object.entries(filters)) if (value !== undefined) query.set(name, String(value));
  if (max_price_cents !== undefined) query.set('max_price_usd', String(max_price_cents / 100));
  query.set('sort', s.sort);
  query.set('page', String(s.page));
  query.set('per_page', String(s.perPage));
  return query.toString();
}

/**
 * Sends `count` of the engine's warm-up searches to `GET /api/v1/outlets` of `app`, whose engine
 * must serve. Stops at the first answer that is not a 200 (a rate limit set below `count` a
 * minute, say): what follows would warm nothing more. Returns how many were answered 200.
 */
export async function warmSearchRoute(app: FastifyInstance, pool: pg.Pool, resolver: KeyResolver, count: number): Promise<{ answered: number; refused?: number }> {
  const index = app.searchEngine.loaded;
  if (!index || count <= 0) return { answered: 0 };
  const workspaceId = await oldestWorkspaceId(pool);
  if (workspaceId === undefined) return { answered: 0 };
  const principal: WorkspacePrincipal = {
    keyId: 0,
    name: 'search warm-up',
    prefix: '',
    canPlaceOrders: false,
    abilities: abilitiesFor({ publisherId: null, canPlaceOrders: false, canManageWebhooks: false }),
    workspaceId,
    publisherId: null,
  };
  const key = resolver.lend(principal);
  try {
    let answered = 0;
    for (const s of warmSearchesOf(index, count)) {
      const res = await app.inject({ method: 'GET', url: `/api/v1/outlets?${restQueryOf(s)}`, headers: { authorization: `Bearer ${key}` } });
      if (res.statusCode !== 200) return { answered, refused: res.statusCode };
      answered++;
    }
    return { answered };
  } finally {
    resolver.forget(key);
  }
}
