import type { LRUCache } from 'lru-cache';
import type { Db } from '../../db/handle.js';
import { expiringCache, type Clock } from '../clock.js';
import { abilitiesFor } from './abilities.js';
import { generateRawKey, hashKey, isWellFormedKey, visiblePrefix } from './key-format.js';
import type { Principal } from './principal.js';

const CACHE_TTL_MS = 5_000; // documented: revocation takes effect within 5 s on every process
// A key past its `expires_at` answers like a revoked one, at once: its cache entry ends with it.
const MAX_ENTRIES = 50_000;
const LAST_USED_EVERY_MS = 60_000;
// How long a key that resolved stays "known" to the unknown-key guard (see `resolve`).
const KNOWN_VALID_MS = 24 * 3_600_000;
// How stale the set of live keys' visible prefixes may be when the guard consults it.
const PREFIXES_FRESH_MS = 1_000;

/** A cached answer: a principal, or null for a key that is not (or no longer) valid. */
interface Entry {
  principal: Principal | null;
}

const lookupStatement = {
  name: 'api_key_by_hash',
  text: `SELECT id, name, prefix, can_place_orders, can_manage_webhooks, needs_approval, workspace_id, publisher_id,
                (extract(epoch FROM expires_at) * 1000)::float8 AS expires_ms,
                order_limit_cents::float8 AS order_limit_cents, daily_limit_cents::float8 AS daily_limit_cents,
                monthly_limit_cents::float8 AS monthly_limit_cents, COALESCE(budget_key_id, id) AS budget_id
           FROM api_keys
          WHERE key_hash = $1 AND revoked_at IS NULL AND oauth_grant_id IS NULL
            AND (expires_at IS NULL OR expires_at > to_timestamp($2::double precision / 1000))`,
};

// An OAuth grant's row (docs/oauth.md): found by its grant, never by a key.
const grantStatement = {
  name: 'api_key_by_grant',
  text: lookupStatement.text.replace('key_hash = $1 AND revoked_at IS NULL AND oauth_grant_id IS NULL', 'oauth_grant_id = $1 AND revoked_at IS NULL'),
};

interface KeyRow {
  id: number;
  name: string;
  prefix: string;
  can_place_orders: boolean;
  can_manage_webhooks: boolean;
  needs_approval: boolean;
  workspace_id: number | null;
  publisher_id: number | null;
  expires_ms: number | null;
  order_limit_cents: number | null;
  daily_limit_cents: number | null;
  monthly_limit_cents: number | null;
  budget_id: number;
}

function principalOf(row: KeyRow): Principal {
  return {
    keyId: row.id,
    name: row.name,
    prefix: row.prefix,
    canPlaceOrders: row.can_place_orders,
    needsApproval: row.needs_approval,
    workspaceId: row.workspace_id,
    publisherId: row.publisher_id,
    abilities: abilitiesFor({ publisherId: row.publisher_id, canPlaceOrders: row.can_place_orders, canManageWebhooks: row.can_manage_webhooks }),
    budget: budgetOf(row),
  };
}

function budgetOf(row: { order_limit_cents: number | null; daily_limit_cents: number | null; monthly_limit_cents: number | null; budget_id: number; expires_ms: number | null }) {
  const { order_limit_cents, daily_limit_cents, monthly_limit_cents, budget_id, expires_ms } = row;
  if (order_limit_cents === null && daily_limit_cents === null && monthly_limit_cents === null && expires_ms === null) return undefined;
  return { limits: { order_limit_cents, daily_limit_cents, monthly_limit_cents, budget_id }, expiresAt: expires_ms === null ? null : new Date(expires_ms) };
}

/**
 * Resolves raw keys to principals with a short in-memory cache, positive and negative, so a hot
 * key costs no database round trip and a repeated unknown key neither.
 */
export class KeyResolver {
  // Bounded by count, least recently used out first; each answer lasts 5 s (or until its key
  // expires, if sooner) on the injected clock, so tests move time without sleeping.
  private readonly cache: LRUCache<string, Entry>;
  /** Keys whose `last_used_at` was written within the last minute. */
  private readonly lastUsedWrites: LRUCache<number, true>;
  /** Hashes of keys that resolved within the last day; never used to authorise, only to look up. */
  private readonly knownValid: LRUCache<string, true>;
  private prefixes: { set: Set<string>; readAt: number; reading: Promise<void> | undefined } | undefined;

  constructor(
    private readonly pool: Db,
    private readonly clock: Clock,
    private readonly onBackgroundError: (err: unknown) => void = () => {},
  ) {
    this.cache = expiringCache(clock, { max: MAX_ENTRIES, ttl: CACHE_TTL_MS });
    this.lastUsedWrites = expiringCache(clock, { max: MAX_ENTRIES, ttl: LAST_USED_EVERY_MS });
    this.knownValid = expiringCache(clock, { max: MAX_ENTRIES, ttl: KNOWN_VALID_MS });
  }

  /** A cached answer, or undefined when the database must be asked. */
  peek(raw: string): Principal | null | undefined {
    if (!isWellFormedKey(raw)) return null;
    return this.cached(hashKey(raw));
  }

  /**
   * Resolves a raw key, hashing it once. `mayQuery` decides, only on a cache miss, whether the
   * database may be asked; when it says no the key counts as unknown. It may ask `plausible()`
   * whether the key could be real: it resolved on this process within the last day, or its
   * visible prefix is a live key's. A flood of random keys from one address must not lock out
   * that address's real keys, new ones included, and random keys almost never share a prefix
   * (62^6 of them) with a live key.
   */
  async resolve(raw: string, mayQuery: (plausible: () => Promise<boolean>) => boolean | Promise<boolean> = () => true): Promise<Principal | null> {
    if (!isWellFormedKey(raw)) return null;
    const hash = hashKey(raw);
    const cached = this.cached(hash);
    if (cached !== undefined) {
      if (cached) this.touch(cached.keyId);
      return cached;
    }
    const plausible = async () => {
      if (this.knownValid.has(hash)) return true;
      return (await this.livePrefixes()).has(visiblePrefix(raw));
    };
    if (!(await mayQuery(plausible))) return null;
    const { rows } = await this.pool.query({ ...lookupStatement, values: [hash, this.clock.now()] });
    const row = rows[0] as KeyRow | undefined;
    const principal: Principal | null = row ? principalOf(row) : null;
    // A key with an expiry is never served from the cache past it (a rolled key's grace ends on time).
    this.remember(hash, principal, row?.expires_ms ?? Infinity);
    if (principal) {
      this.touch(principal.keyId);
      this.markKnown(hash);
    } else this.knownValid.delete(hash);
    return principal;
  }

  /**
   * The principal an OAuth grant stands for (its `api_keys` row), cached like a key for at most
   * 5 s, so a revoked grant answers 401 within 5 s on every process.
   */
  async resolveGrant(grantId: string): Promise<Principal | null> {
    const cacheKey = `grant:${grantId}`;
    const cached = this.cached(cacheKey);
    if (cached !== undefined) {
      if (cached) this.touch(cached.keyId);
      return cached;
    }
    const { rows } = await this.pool.query({ ...grantStatement, values: [grantId, this.clock.now()] });
    const row = rows[0] as KeyRow | undefined;
    const principal = row ? principalOf(row) : null;
    this.remember(cacheKey, principal, row?.expires_ms ?? Infinity);
    if (principal) this.touch(principal.keyId);
    return principal;
  }

  /**
   * A key that resolves to `principal` on this process alone, for at most the cache's 5 s: it
   * lives only in the cache, is never written to the database and is known to no other process;
   * `forget` ends it. The server asks its search route's first requests with one before it says
   * it is ready (http/search-route-warm-up.ts). Its principal has no key row, so nothing writes
   * its `last_used_at`.
   */
  lend(principal: Principal): string {
    const raw = generateRawKey();
    this.lastUsedWrites.set(principal.keyId, true);
    this.remember(hashKey(raw), principal);
    return raw;
  }

  /** Ends a key `lend` gave. */
  forget(raw: string): void {
    this.cache.delete(hashKey(raw));
  }

  /**
   * Visible prefixes of every live key, read at most once a second and only while some address
   * floods: one query a second stands in for one a request.
   */
  private async livePrefixes(): Promise<Set<string>> {
    const p = (this.prefixes ??= { set: new Set(), readAt: -Infinity, reading: undefined });
    if (this.clock.now() - p.readAt >= PREFIXES_FRESH_MS) {
      p.reading ??= this.pool
        .query<{ prefix: string }>({ name: 'api_key_live_prefixes', text: 'SELECT DISTINCT prefix FROM api_keys WHERE revoked_at IS NULL' })
        .then(({ rows }) => {
          p.set = new Set(rows.map((r) => r.prefix));
          p.readAt = this.clock.now();
        })
        .finally(() => (p.reading = undefined));
      await p.reading;
    }
    return p.set;
  }

  private cached(hash: string): Principal | null | undefined {
    return this.cache.get(hash)?.principal;
  }

  /** Drops every cached answer (used after a local revoke, and by tests). */
  clear(): void {
    this.cache.clear();
  }

  private remember(hash: string, principal: Principal | null, notAfter = Infinity): void {
    // An entry goes stale once it is older than its ttl, strictly, and a key is expired at its
    // `notAfter` itself: hence the 1 ms less. One that ends within a millisecond is not kept (a
    // ttl of 0 would mean "never expires").
    const ttl = Math.min(CACHE_TTL_MS, notAfter - this.clock.now() - 1);
    if (ttl >= 1) this.cache.set(hash, { principal }, { ttl });
    else this.cache.delete(hash);
  }

  private markKnown(hash: string): void {
    this.knownValid.set(hash, true);
  }

  /** `last_used_at` at most once a minute per key, off the request path. */
  private touch(keyId: number): void {
    if (this.lastUsedWrites.has(keyId)) return;
    this.lastUsedWrites.set(keyId, true);
    const now = this.clock.now();
    this.pool
      .query({
        name: 'api_key_touch',
        text: 'UPDATE api_keys SET last_used_at = to_timestamp($2::double precision / 1000) WHERE id = $1',
        values: [keyId, now],
      })
      .catch(this.onBackgroundError);
  }
}
