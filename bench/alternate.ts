// `npm run bench:routes -- <route,route,…>`: Node CPU per request of several routes of one app,
// measured in one process by taking turns (see bench/README.md, "Costs inside the server").
// The load benchmark's ratios drift by more than a few microseconds between runs; here every
// route runs in batches alternated with the others, so the machine's drift falls on all alike
// and two runs agree within about 10 µs. Requests go through app.inject: no sockets, and the
// same injection cost in every route, so read differences, not absolute figures.
import { chmodSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import type { InjectOptions } from 'fastify';
import type { WorkspacePrincipal } from '../src/domain/keys/principal.js';
import pino from 'pino';

const dist = (file: string) => pathToFileURL(join(import.meta.dirname, '..', 'dist', 'src', file)).href;
const { buildApp } = (await import(dist('app.js'))) as typeof import('../src/app.js');
const { loadConfig } = (await import(dist('config.js'))) as typeof import('../src/config.js');
const { createDatabase } = (await import(dist('db/client.js'))) as typeof import('../src/db/client.js');
const { startEmbedded } = (await import(dist('db/embedded.js'))) as typeof import('../src/db/embedded.js');
const { prepareDatabase } = (await import(dist('db/migrate.js'))) as typeof import('../src/db/migrate.js');
const { seedDemoIfEmpty } = (await import(dist('demo/seed.js'))) as typeof import('../src/demo/seed.js');
const { createLogger } = (await import(dist('logger.js'))) as typeof import('../src/logger.js');
const { KeyResolver } = (await import(dist('domain/keys/key-resolver.js'))) as typeof import('../src/domain/keys/key-resolver.js');
const { createWorkspacesModule } = (await import(dist('domain/workspaces/workspaces-module.js'))) as typeof import('../src/domain/workspaces/workspaces-module.js');
const { createUser } = (await import(dist('domain/users/user-service.js'))) as typeof import('../src/domain/users/user-service.js');
const { addMember } = (await import(dist('domain/users/memberships.js'))) as typeof import('../src/domain/users/memberships.js');
const { createSessionStore } = (await import(dist('domain/sessions/session-store.js'))) as typeof import('../src/domain/sessions/session-store.js');
const { cachedItems, findPurchase } = (await import(dist('domain/catalog/catalog-queries.js'))) as typeof import('../src/domain/catalog/catalog-queries.js');
const { purchaseBodies } = (await import(dist('http/catalog/encode.js'))) as typeof import('../src/http/catalog/encode.js');

const { values: opts, positionals } = parseArgs({
  allowPositionals: true,
  options: { rounds: { type: 'string', default: '12' }, batch: { type: 'string', default: '2000' }, concurrency: { type: 'string', default: '16' } },
});
const rounds = Number(opts.rounds);
const batch = Number(opts.batch);
const concurrency = Number(opts.concurrency);

// A throwaway embedded PostgreSQL unless DATABASE_URL names a scratch database (migrated and
// seeded with the demo when empty).
const work = mkdtempSync(join(tmpdir(), 'mkt-alternate-'));
chmodSync(work, 0o755); // PostgreSQL runs as its own user when we are root: it must enter the folder
if (!process.env.DATABASE_URL) mkdirSync(join(work, 'pg'), { mode: 0o755 });
const embedded = process.env.DATABASE_URL ? undefined : await startEmbedded({ dataDir: join(work, 'pg'), port: 54000 + (process.pid % 1000), extraFlags: [] });
// Whatever happens below, the embedded PostgreSQL and its folder go.
let close = async () => {};
try {
  const config = loadConfig({
    DATABASE_URL: process.env.DATABASE_URL ?? embedded!.url,
    RATE_LIMIT_PER_MINUTE: '10000000',
    ORDER_SWEEP_INTERVAL_MS: '0',
  });
  const database = createDatabase({ url: config.DATABASE_URL!, max: config.DATABASE_POOL_MAX });
  close = () => database.close();
  const demo = await prepareDatabase(database.pool, () => seedDemoIfEmpty(database, config.FEE_RATE));
  if (!demo?.purchaseCode) throw new Error('bench:routes needs an empty database to seed the demo into');
  // Logging as the server does it (info, one line a request), written nowhere.
  const app = await buildApp({ config, database, logger: createLogger('info', pino.destination('/dev/null')) });
  close = async () => {
    await app.close();
    await database.close();
  };

  // The references: the ceiling server's one query, alone and behind the key check, and the two
  // routes' own work without authentication, parameters or validation around it.
  const clock = { now: () => Date.now() };
  const resolved = await new KeyResolver(database.pool, clock).resolve(demo.readOnlyKey);
  if (!resolved?.workspaceId) throw new Error('the demo key did not resolve');
  const principal = resolved as WorkspacePrincipal;
  const workspaces = createWorkspacesModule({ pool: database.pool, clock });
  const items = cachedItems(database.pool);
  const purchaseBody = purchaseBodies();
  const oneQuery = async () => {
    const { rows } = await database.pool.query({ name: 'bench_workspace_by_id', text: 'SELECT id, name, currency FROM workspaces WHERE id = $1', values: [principal.workspaceId] });
    return { data: rows[0] };
  };
  app.get('/_alt/one-query', { config: { auth: 'public' } }, oneQuery);
  app.get('/_alt/one-query-auth', { config: { auth: 'buyer' } }, oneQuery);
  app.get('/_alt/me-handler', { config: { auth: 'public' } }, async () => ({ data: await workspaces.me(principal) }));
  app.get('/_alt/validation-query', { config: { auth: 'public' } }, async (_request, reply) => {
    const purchase = await findPurchase(database.pool, items, principal.workspaceId, demo.purchaseCode!);
    return reply.type('application/json; charset=utf-8').send(purchaseBody(purchase!));
  });
  await app.ready();

  // The console's pages, as a signed-in owner of the demo workspace sees them.
  const person = await createUser(database.pool, { email: 'bench-routes@example.com', name: 'Bench', password: 'bench routes password' });
  await addMember(database.pool, { workspaceId: principal.workspaceId }, person.id, 'owner');
  const session = await createSessionStore(database.pool, clock).start(person.id);
  const signedIn = { cookie: `mk_session=${session.id}` };

  type Inject = InjectOptions;
  const bearer = { authorization: `Bearer ${demo.readOnlyKey}` };
  const mcp = (body: object): Inject => ({
    method: 'POST',
    url: '/mcp',
    headers: { ...bearer, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    payload: JSON.stringify({ jsonrpc: '2.0', id: 1, ...body }),
  });
  const routes: Record<string, Inject> = {
    'one-query': { method: 'GET', url: '/_alt/one-query' },
    'one-query-auth': { method: 'GET', url: '/_alt/one-query-auth', headers: bearer },
    me: { method: 'GET', url: '/api/v1/me', headers: bearer },
    'me-handler': { method: 'GET', url: '/_alt/me-handler' },
    validation: {
      method: 'POST',
      url: '/api/purchases/validation',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ api_key: demo.readOnlyKey, purchase_code: demo.purchaseCode }),
    },
    'validation-query': { method: 'GET', url: '/_alt/validation-query' },
    mcp: mcp({ method: 'tools/call', params: { name: 'get-balance', arguments: {} } }),
    'mcp-ping': mcp({ method: 'ping' }),
    'console-overview': { method: 'GET', url: `/app/w/${principal.workspaceId}`, headers: signedIn },
    'console-keys': { method: 'GET', url: `/app/w/${principal.workspaceId}/settings/api-keys`, headers: signedIn },
    // The outlet search with filters and a sort, as the form sends it (blank fields included).
    'console-outlets': { method: 'GET', url: `/app/w/${principal.workspaceId}/outlets?q=&country=US&language=en&topic=&type=&format=&max_price_usd=500&min_traffic=&verified_traffic=true&sort=price`, headers: signedIn },
  };

  const names = (positionals[0] ?? 'one-query,one-query-auth,me,me-handler,validation,validation-query').split(',');
  const unknown = names.filter((n) => !routes[n]);
  if (unknown.length) throw new Error(`unknown route(s) ${unknown.join(', ')}; known: ${Object.keys(routes).join(', ')}`);

  async function run(request: Inject, count: number): Promise<void> {
    let left = count;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (left-- > 0) {
          const res = await app.inject(request);
          if (res.statusCode !== 200) throw new Error(`${res.statusCode} ${res.body.slice(0, 200)}`);
        }
      }),
    );
  }

  for (const name of names) await run(routes[name]!, 1_000); // warm-up: JIT, caches, prepared statements
  const cpu = new Map(names.map((n) => [n, 0]));
  for (let r = 0; r < rounds; r++) {
    // Every other round in reverse, so no route always follows the same one.
    for (const name of r % 2 ? [...names].reverse() : names) {
      const before = process.cpuUsage();
      await run(routes[name]!, batch);
      const used = process.cpuUsage(before);
      cpu.set(name, cpu.get(name)! + used.user + used.system);
    }
  }
  const perRequest = (n: string) => cpu.get(n)! / (rounds * batch);
  const base = perRequest(names[0]!);
  process.stdout.write(`${rounds} rounds of ${batch} requests per route, ${concurrency} at a time; Node CPU per request (app.inject)\n`);
  for (const name of names) {
    const v = perRequest(name);
    process.stdout.write(`${name.padEnd(18)} ${v.toFixed(1).padStart(7)} µs   ${v - base >= 0 ? '+' : ''}${(v - base).toFixed(1)} vs ${names[0]}\n`);
  }
} finally {
  await close().catch(() => {});
  await embedded?.stop().catch(() => {});
  rmSync(work, { recursive: true, force: true });
}
