// A nightly traffic refresh, seen by the search engine: over a catalog of generated outlets, a
// process loads its search engine and answers random searches (one at a time, as fast as they
// come, each drawn afresh) while one plain SQL statement from outside the service rewrites every
// outlet's monthly_visits. Prints the process's resident memory fresh (loaded, then after 15 s of
// searches have filled its bounded caches) and after the refresh has been read, how long until
// the engine orders by the new figures, and the searches' latency before and meanwhile.
//   node --expose-gc --import tsx bench/search/refresh.ts --outlets 100000
// (a temporary embedded PostgreSQL with production's durability settings, deleted at the end), or
// --database-url postgres://… for a database that already holds a generated catalog.
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import v8 from 'node:v8';
import pg from 'pg';
import { embeddedUrl, startEmbedded } from '../../src/db/embedded.js';
import { migrateOnly } from '../../src/db/migrate.js';
import { generateOutlets, outletStream, runDomainTag } from '../../src/demo/outlet-generator.js';
import { upsertOutlets } from '../../src/domain/outlets/outlet-upsert.js';
import { outletSearchOf } from '../../src/domain/outlets/search.js';
import { SearchEngine } from '../../src/domain/outlets/search-engine.js';
import { createPublisher } from '../../src/domain/publishers/publisher-service.js';
import { createDatabase } from '../../src/db/client.js';
import { freshQueries } from '../scenarios/search.js';
import { JUDGED_SEED } from './relevance.js';
import { ALLOCATOR_ENV } from '../../scripts/allocator.mjs';

// Measured as `npm start` runs the server: with its allocator setting, which glibc reads only when
// a process starts, so without it this script runs itself again in a child that has it.
if (process.platform === 'linux' && process.env.MALLOC_MMAP_THRESHOLD_ === undefined) {
  const child = spawnSync(process.execPath, [...process.execArgv, ...process.argv.slice(1)], { stdio: 'inherit', env: { ...process.env, ...ALLOCATOR_ENV } });
  process.exit(child.status ?? 1);
}
process.stderr.write(`MALLOC_MMAP_THRESHOLD_=${process.env.MALLOC_MMAP_THRESHOLD_ ?? '(glibc default)'}\n`);

const { values: opts } = parseArgs({
  options: { 'database-url': { type: 'string' }, outlets: { type: 'string', default: '100000' }, 'deadline-s': { type: 'string', default: '600' }, keep: { type: 'boolean', default: false } },
});
const mb = (n: number) => `${(n / 2 ** 20).toFixed(0)} MB`;
const gc = () => (globalThis as { gc?: () => void }).gc?.();
// Resident memory once garbage is gone: a typed array's buffer is freed on a helper thread after
// the collection that found it dead, so one gc() read at once still counts the old index's arrays.
const rss = async () => {
  for (let i = 0; i < 4; i++) {
    gc();
    await new Promise((r) => setTimeout(r, 250));
  }
  return process.memoryUsage().rss;
};
// Where the resident memory is: V8's heap, or typed arrays' buffers (the index's bitsets and
// columns) outside it; what neither holds is memory the allocator kept but nothing uses.
const breakdown = () => {
  const m = process.memoryUsage();
  const spaces = v8.getHeapSpaceStatistics()
    .filter((sp) => sp.space_size > 2 ** 20)
    .map((sp) => `${sp.space_name.replace('_space', '')} ${mb(sp.space_used_size)}/${mb(sp.space_size)}`)
    .join(', ');
  return `heap used ${mb(m.heapUsed)} of ${mb(m.heapTotal)} (${spaces}), array buffers ${mb(m.arrayBuffers)}, other external ${mb(m.external - m.arrayBuffers)}`;
};

let url = opts['database-url'];
let stop = async () => {};
if (!url) {
  const dir = mkdtempSync(join(tmpdir(), 'search-refresh-'));
  // Started by root, PostgreSQL runs as another user, which must enter the folder.
  chmodSync(dir, 0o755);
  const port = 20_000 + Math.floor(Math.random() * 20_000);
  const handle = await startEmbedded({ dataDir: dir, port });
  url = embeddedUrl(handle.info);
  // --keep: the database stays up for other scripts (bench/search/cost.ts) until Ctrl-C.
  stop = async () => {
    if (opts.keep) {
      // The URL holds the database's password: written to a file only its owner reads, not printed.
      const file = join(dir, 'url');
      writeFileSync(file, `${url}\n`, { mode: 0o600 });
      console.log(`kept: its URL is in ${file} (Ctrl-C stops it)`);
      await new Promise((r) => process.once('SIGINT', r));
    }
    await handle.stop();
    rmSync(dir, { recursive: true, force: true });
  };
  const db = createDatabase({ url, max: 4, connectTimeoutMs: 10_000 });
  await migrateOnly(db.pool);
  const n = Number(opts.outlets);
  const pub = await createPublisher(db.pool, 'Refresh bench publisher');
  process.stderr.write(`generating ${n.toLocaleString('en-US')} outlets…\n`);
  for (let i = 0; i < n; i += 20_000) {
    const chunk = generateOutlets(Math.min(20_000, n - i), JUDGED_SEED + i, { domainTag: `${runDomainTag(pub.id, JUDGED_SEED)}${i}` });
    await upsertOutlets(db.pool, pub.id, chunk, 0.2);
  }
  await db.pool.query('VACUUM ANALYZE outlets');
  await db.close();
}

const pool = new pg.Pool({ connectionString: url, max: 4 });
const before = await rss();
const engine = new SearchEngine(pool, (err, what) => process.stderr.write(`${what}: ${err.message}\n`));
const started = Date.now();
engine.start();
await engine.catchUp();
const fresh = await rss();
const { rows: count } = await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM outlets');
console.log(`${count[0]!.n.toLocaleString('en-US')} outlets: loaded in ${((Date.now() - started) / 1000).toFixed(1)} s; resident memory ${mb(fresh)} (+${mb(fresh - before)} for the index; ${breakdown()})`);

// Searches, one at a time, each drawn afresh; latencies kept per phase.
const names = [...outletStream(2_000, JUDGED_SEED)].map((o) => o.name);
const queries = freshQueries(names, 77, 200_000);
const latencies: Record<string, number[]> = { before: [], meanwhile: [], after: [] };
let phase: keyof typeof latencies = 'before';
let running = true;
let drawn = 0;
// Searches stop while memory is read, so that both readings see an idle process.
const searchUntilStopped = async () => {
  running = true;
  for (let i = drawn; running; i = ++drawn) {
    const p = queries[i % queries.length]!;
    const s = outletSearchOf({ q: p.q, country: p.country, topic: p.topic, language: p.language, sort: p.sort as never });
    const t = performance.now();
    await engine.search({ q: s.q, filter: s.filter, sort: s.sort ?? (s.q ? 'relevance' : '-traffic'), offset: 0, limit: Number(p.per_page) });
    latencies[phase]!.push(performance.now() - t);
    // A remembered search never waits for I/O: let the rest of the process run between searches.
    await new Promise((r) => setImmediate(r));
  }
};
let searching = searchUntilStopped();
await new Promise((r) => setTimeout(r, 15_000));
running = false;
await searching;
// The fresh start the goal compares with: loaded, and its remembered searches and completions
// (bounded caches) filled by 15 s of searches, as any serving process has them.
const warm = await rss();
console.log(`resident memory after 15 s of searches: ${mb(warm)} (${breakdown()})`);
searching = searchUntilStopped();

// The refresh, from outside the service: every row, one statement.
phase = 'meanwhile';
const writer = new pg.Client({ connectionString: url });
await writer.connect();
const loadsBefore = engine.loads;
const t0 = Date.now();
// New figures every run (a salt of its own), so that a second run over the same database changes them too.
await writer.query('UPDATE outlets SET monthly_visits = (hashtext(domain || $1) & 1048575) * 10', [String(Date.now())]);
const committed = Date.now();
console.log(`UPDATE of every outlet's monthly_visits: ${((committed - t0) / 1000).toFixed(1)} s`);
// Seen when the engine's traffic order is the table's.
const { rows: top } = await writer.query<{ id: number }>('SELECT id FROM outlets WHERE min_price_any IS NOT NULL ORDER BY monthly_visits DESC, id DESC LIMIT 15');
const expected = JSON.stringify(top.map((r) => r.id));
for (;;) {
  const found = await engine.search({ filter: {}, sort: '-traffic', offset: 0, limit: 15 });
  if (JSON.stringify(found.ids) === expected) break;
  if (Date.now() - committed > Number(opts['deadline-s']) * 1000) throw new Error('the refresh was never seen');
  await new Promise((r) => setTimeout(r, 250));
}
const seen = Date.now();
console.log(`searchable ${((seen - committed) / 1000).toFixed(1)} s after the commit`);
phase = 'after';
await new Promise((r) => setTimeout(r, 15_000));
running = false;
await searching;
// Read once the engine has read everything notified (a reload still running holds two indexes).
const stopped = Date.now();
await engine.catchUp();
console.log(`engine settled ${((Date.now() - stopped) / 1000).toFixed(1)} s after the searches stopped; indexes loaded afresh since the UPDATE began: ${engine.loads - loadsBefore}`);
const settled = await rss();
console.log(
  `resident memory after: ${mb(settled)} (${(((settled - warm) / warm) * 100).toFixed(1)}% against the fresh start after its first searches, ${(((settled - fresh) / fresh) * 100).toFixed(1)}% against it before any; ${breakdown()})`,
);
for (const [name, ms] of Object.entries(latencies)) {
  const s = [...ms].sort((a, b) => a - b);
  const at = (q: number) => (s.length ? s[Math.min(s.length - 1, Math.floor(q * s.length))]!.toFixed(1) : '-');
  console.log(`searches ${name}: ${s.length}, p50 ${at(0.5)} ms, p99 ${at(0.99)} ms, max ${s.length ? s.at(-1)!.toFixed(1) : '-'} ms`);
}
await writer.end();
await engine.close();
await pool.end();
await stop();
process.exit(0);
