import type { IncomingMessage, ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import type { FastifyInstance } from 'fastify';

export type Next = (err?: unknown) => void;
export type Middleware = (req: IncomingMessage, res: ServerResponse, next: Next) => void;

interface Engine {
  use(path: string, fn: Middleware): Engine;
  run(req: IncomingMessage, res: ServerResponse, next: Next): void;
}
type EngineFactory = (
  complete: (err: unknown, req: IncomingMessage, res: ServerResponse, next: Next) => void,
  options: { ignoreDuplicateSlashes?: boolean; useSemicolonDelimiter?: boolean; ignoreTrailingSlash?: boolean },
) => Engine;

// @fastify/middie's own matcher: the plugin runs it in an onRequest hook for every request of the
// app, and only its matcher decides which paths reach a middleware (in any case, percent-decoded,
// absolute-form targets included). It is used here unchanged, so the same requests reach the
// same middleware; only requests it could not match skip it (`mayReachMount`).
const middieEngine = createRequire(import.meta.url)('@fastify/middie/lib/engine.js') as EngineFactory;

/**
 * Whether a request target could be matched by a mount at `/oauth` or `/.well-known/…`: any target
 * that is not a plain path (absolute form, `*`), holds an escape or a `;` (decoded before matching),
 * or whose path starts `/o`, `/O`, `/.` or `//`. The matcher's patterns begin with one of those,
 * and without an escape nothing is decoded, so no other target can match. Most requests
 * (`/api/…`, `/mcp`, `/app/…`) are answered without the matcher's work (about 3 µs each: the
 * request's address, host and protocol read for the middleware, the target decoded and matched).
 */
export function mayReachMount(url: string): boolean {
  if (url.charCodeAt(0) !== 47 /* / */) return true;
  const second = url.charCodeAt(1);
  if (second === 111 /* o */ || second === 79 /* O */ || second === 46 /* . */ || second === 47 /* / */) return true;
  for (let i = 1; i < url.length; i++) {
    const c = url.charCodeAt(i);
    if (c === 63 /* ? */ || c === 35 /* # */) return false;
    if (c === 37 /* % */ || c === 59 /* ; */) return true;
  }
  return false;
}

/**
 * Connect-style middleware mounted at path prefixes of the whole app, matched as @fastify/middie
 * matches them, with the request prepared as it prepares it; an onRequest hook where `mount` is
 * called (the same place in the hook order as registering the plugin there).
 */
export function mountMiddleware(app: FastifyInstance, mounts: Array<[path: string, fn: Middleware]>): void {
  const router: { ignoreDuplicateSlashes?: boolean; useSemicolonDelimiter?: boolean; ignoreTrailingSlash?: boolean } = app.initialConfig.routerOptions ?? {};
  const engine = middieEngine((err, _req, _res, next) => next(err), {
    ignoreDuplicateSlashes: router.ignoreDuplicateSlashes ?? app.initialConfig.ignoreDuplicateSlashes,
    useSemicolonDelimiter: router.useSemicolonDelimiter ?? app.initialConfig.useSemicolonDelimiter,
    ignoreTrailingSlash: router.ignoreTrailingSlash ?? app.initialConfig.ignoreTrailingSlash,
  });
  for (const [path, fn] of mounts) engine.use(path, fn);
  app.addHook('onRequest', (request, reply, next) => {
    const req = request.raw as IncomingMessage & Record<string, unknown>;
    if (!mayReachMount(req.url ?? '/')) return next();
    // What @fastify/middie gives its middleware on the Node request and response.
    req.originalUrl = req.url;
    req.id = request.id;
    req.hostname = request.hostname;
    req.protocol = request.protocol;
    req.ip = request.ip;
    req.ips = request.ips;
    req.log = request.log;
    req.query = request.query;
    (reply.raw as ServerResponse & { log?: unknown }).log = request.log;
    if (request.body !== undefined) req.body = request.body;
    engine.run(req, reply.raw, next as Next);
  });
}
