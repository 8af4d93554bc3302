import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { LRUCache } from 'lru-cache';
import fp from 'fastify-plugin';
import { expiringCache, type Clock } from '../../domain/clock.js';
import { DomainError } from '../../domain/errors.js';
import type { KeyResolver } from '../../domain/keys/key-resolver.js';
import type { Principal, WorkspacePrincipal } from '../../domain/keys/principal.js';
import type { Limiter, LimitResult } from './rate-limit.js';

/**
 * - `public`: no key (health, docs);
 * - `buyer` (the default, so a route without config is never open): a workspace key;
 * - `buyer-or-401`: a workspace key, any other key being treated as no key at all (/mcp, which
 *   answers a publisher key with 401 before any MCP work, as documented);
 * - `publisher`: a publisher key;
 * - `catalog`: the seller API, which reads `api_key` itself once the body is parsed.
 */
export type AuthMode = 'public' | 'buyer' | 'buyer-or-401' | 'publisher' | 'catalog';

declare module 'fastify' {
  interface FastifyContextConfig {
    auth?: AuthMode;
    /** Needs a key created with "Can place orders". */
    spending?: boolean;
    /** Changes webhook endpoints: needs the `manage_webhooks` ability (not a key a console member made). */
    manageWebhooks?: boolean;
  }
  interface FastifyRequest {
    principal: Principal | null;
  }
}

export interface AuthOptions {
  resolver: KeyResolver;
  limiter: Limiter;
  clock: Clock;
  perKeyPerMinute: number;
  unknownPerIpPerMinute: number;
}

/**
 * Counts unknown-key lookups per client IP, so a flood of random keys stops costing queries.
 * (Responses are limited separately, per IP, by the limiter's `ip:` bucket.)
 */
class UnknownKeyGuard {
  // At most 100,000 addresses, least recently missed out first. An address's count lives for the
  // minute after its first miss (a fixed window), on the injected clock.
  private readonly misses: LRUCache<string, { count: number }>;
  constructor(
    clock: Clock,
    private readonly max: number,
  ) {
    this.misses = expiringCache(clock, { max: 100_000, ttl: 60_000 });
  }
  exhausted(ip: string): boolean {
    const m = this.misses.get(ip);
    return !!m && m.count >= this.max;
  }
  miss(ip: string): void {
    const m = this.misses.get(ip);
    // Counted in place: setting the entry again would restart its minute.
    if (m) m.count++;
    else this.misses.set(ip, { count: 1 });
  }
}

export function bearerToken(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const match = /^Bearer[ ]+(\S+)\s*$/i.exec(header);
  return match?.[1];
}

export interface AuthService {
  /** Resolves a raw key, counts the request in its bucket and sets the rate-limit headers. */
  authenticate(request: FastifyRequest, reply: FastifyReply, raw: string | undefined): Promise<Principal | null>;
  /**
   * Counts a request whose caller was found another way (an OAuth access token, /mcp/oauth) as
   * `authenticate` counts one: in the principal's bucket, or without one in its address's.
   */
  count(request: FastifyRequest, reply: FastifyReply, principal: Principal | null): Promise<void>;
  /**
   * Counts `extra` more requests in an authenticated key's bucket (a JSON-RPC batch is as many
   * requests as it holds) and updates the headers; 429 when the bucket runs out.
   */
  chargeMore(reply: FastifyReply, principal: Principal, extra: number): Promise<void>;
  /**
   * Counts a request refused before its key could be read (a seller API body too large or
   * unparseable) in its address's bucket, as a request without a key; a 429 error when that
   * bucket has run out.
   */
  countAddress(request: FastifyRequest): Promise<void>;
}

const rateLimited = (limit: LimitResult) =>
  new DomainError('rate_limited', 'Too many requests. Slow down and retry after the given number of seconds.', {
    retry_after: limit.retryAfterSeconds,
  });

export function createAuthService(opts: AuthOptions): AuthService {
  const guard = new UnknownKeyGuard(opts.clock, opts.unknownPerIpPerMinute);
  async function resolve(raw: string, ip: string): Promise<Principal | null> {
    let queried = false;
    const principal = await opts.resolver.resolve(raw, async (plausible) => {
      // Only a cache miss reaches here: an IP that used up its unknown-key lookups gets no query,
      // except for a key that may be real (one that resolved recently, or whose visible prefix
      // belongs to a live key): the flood must not lock out that IP's real keys.
      queried = !guard.exhausted(ip) || (await plausible());
      return queried;
    });
    if (!principal && queried) guard.miss(ip);
    return principal;
  }
  function report(reply: FastifyReply, limit: LimitResult): void {
    reply.header('x-ratelimit-limit', limit.limit);
    reply.header('x-ratelimit-remaining', limit.remaining);
    if (limit.exceeded) {
      reply.header('retry-after', limit.retryAfterSeconds);
      throw rateLimited(limit);
    }
  }
  return {
    async authenticate(request, reply, raw) {
      // A valid key counts only in its own bucket; a request without one (no key, an unknown or
      // revoked one) counts in its address's, so a keyless flood is answered 429 like a flood of
      // random keys.
      const principal = raw === undefined ? null : await resolve(raw, request.ip);
      await this.count(request, reply, principal);
      return principal;
    },
    async count(request, reply, principal) {
      const hit = principal
        ? opts.limiter.hit(`key:${principal.keyId}`, opts.perKeyPerMinute)
        : opts.limiter.hit(`ip:${request.ip}`, opts.unknownPerIpPerMinute);
      report(reply, await hit);
    },
    async countAddress(request) {
      const limit = await opts.limiter.hit(`ip:${request.ip}`, opts.unknownPerIpPerMinute);
      if (limit.exceeded) throw rateLimited(limit);
    },
    async chargeMore(reply, principal, extra) {
      // Counted in one step: a batch past the bucket's end is refused whole.
      if (extra > 0) report(reply, await opts.limiter.hit(`key:${principal.keyId}`, opts.perKeyPerMinute, extra));
    },
  };
}

/**
 * The Authorization header, or undefined when it is given twice with different values: Node keeps
 * only the first, so which key acted would depend on the order of the headers (the seller API refuses
 * the same, docs/interface-b.md).
 */
export function oneAuthorization(request: FastifyRequest): string | undefined {
  const first = request.headers.authorization;
  if (first === undefined) return undefined;
  const raw = request.raw.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!;
    if (name.length === 13 && name.toLowerCase() === 'authorization' && raw[i + 1] !== first) return undefined;
  }
  return first;
}

/** Bearer authentication for the buyer API and the publisher API, then the spending check. */
export const bearerAuth = fp(
  async function bearerAuth(app: FastifyInstance, opts: { auth: AuthService }) {
    app.decorateRequest('principal', null);
    app.addHook('onRequest', async (request, reply) => {
      if (request.is404) return;
      const config = request.routeOptions.config;
      const mode = config.auth ?? 'buyer';
      if (mode === 'public' || mode === 'catalog') return;
      const principal = await opts.auth.authenticate(request, reply, bearerToken(oneAuthorization(request)));
      if (!principal) {
        throw new DomainError('unauthenticated', 'Missing, malformed, unknown or revoked API key. Send Authorization: Bearer <key>.');
      }
      if (mode === 'buyer-or-401' && principal.workspaceId === null) {
        throw new DomainError('unauthenticated', 'This endpoint needs a workspace API key; publisher keys are not accepted here.');
      }
      if (mode === 'buyer' && principal.workspaceId === null) {
        throw new DomainError('forbidden', 'This route needs a workspace key; publisher keys work under /api/v1/publisher.');
      }
      if (mode === 'publisher' && principal.publisherId === null) {
        throw new DomainError('forbidden', 'This route needs a publisher key.');
      }
      if (config.spending && !principal.canPlaceOrders) {
        throw new DomainError('forbidden', 'This key cannot spend. Use a key created with "Can place orders".');
      }
      if (config.manageWebhooks && !principal.abilities.includes('manage_webhooks')) {
        throw new DomainError('forbidden', "This key cannot change webhook endpoints: it was made in the console by a member. Use a key an owner made.");
      }
      request.principal = principal;
    });
  },
  { name: 'bearer-auth' },
);

export function workspacePrincipal(request: FastifyRequest): WorkspacePrincipal {
  const p = request.principal;
  if (!p || p.workspaceId === null) throw new DomainError('unauthenticated', 'A workspace key is required.');
  return p as WorkspacePrincipal;
}
