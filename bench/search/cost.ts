// What one search costs, one at a time (no concurrency, so a busy machine blurs it less than the
// load benchmark): over a database that already holds the generated catalog, loads the search
// index as the server does (time and memory), then times each query of the search scenarios'
// workloads through the search the listing route calls, once the first time it is asked and once
// again (its page and total remembered until the next write); and the engine's part alone (the
// index and the words' lookups, without reading the page's rows) for queries drawn at random.
//   node --import tsx bench/search/cost.ts --database-url postgres://… [--rounds 3]
import { parseArgs } from 'node:util';
import pg from 'pg';
import { outletStream } from '../../src/demo/outlet-generator.js';
import type { OutletSort } from '../../src/domain/outlets/enums.js';
import { searchOutlets } from '../../src/domain/outlets/search.js';
import { engineRequest, searchOfParams } from './query-params.js';
import { SearchEngine } from '../../src/domain/outlets/search-engine.js';
import { BROAD_WORDS, freshQueries, mixedQueries } from '../scenarios/search.js';
import { JUDGED_SEED } from './relevance.js';

const { values: opts } = parseArgs({ options: { 'database-url': { type: 'string' }, rounds: { type: 'string', default: '3' } } });
const url = opts['database-url'] ?? process.env.DATABASE_URL;
if (!url) throw new Error('--database-url is required');

type Params = Record<string, string>;
const searchOf = searchOfParams;

const mb = (n: number) => `${(n / 2 ** 20).toFixed(0)} MB`;
const gc = () => (globalThis as { gc?: () => void }).gc?.();

const pool = new pg.Pool({ connectionString: url, max: 4 });
const { rows } = await pool.query<{ id: number; n: number }>('SELECT (SELECT min(id) FROM workspaces) AS id, (SELECT count(*)::int FROM outlets) AS n');
const workspaceId = rows[0]!.id;
gc();
const before = process.memoryUsage();
const started = Date.now();
const cpu = process.cpuUsage();
const engine = new SearchEngine(pool);
engine.start();
while (!engine.ready) await new Promise((r) => setTimeout(r, 50));
const loadMs = Date.now() - started;
const loadCpu = process.cpuUsage(cpu);
gc();
const after = process.memoryUsage();
console.log(
  `${rows[0]!.n.toLocaleString('en-US')} outlets: index loaded in ${(loadMs / 1000).toFixed(1)} s (CPU of this process ${((loadCpu.user + loadCpu.system) / 1e6).toFixed(1)} s); ` +
    `resident memory +${mb(after.rss - before.rss)} (heap +${mb(after.heapUsed - before.heapUsed)}, typed arrays +${mb(after.arrayBuffers - before.arrayBuffers)}), process ${mb(after.rss)}` +
    (globalThis.gc ? '' : ' (run with --expose-gc for settled figures)'),
);

const names = [...outletStream(2_000, JUDGED_SEED)].map((o) => o.name);
const mixed = mixedQueries(names).map(searchOf);
const broad = BROAD_WORDS.map((q) => searchOf({ q }));
// The sorts by the track record's link figures: two tiers (the outlets with the figure in their
// own order, the rest by traffic), over the same queries and without text.
const browse: Params[] = [{}, { country: 'US' }, { country: 'DE' }, { topic: 'travel' }, { max_price_usd: '200' }, { verified_traffic: 'true' }];
const rated = (queries: Params[], sort: OutletSort) => queries.map((p) => searchOf({ ...p, sort }));
const workloads: [string, ReturnType<typeof searchOf>[]][] = [
  ['mixed', mixed],
  ['broad', broad],
  ['mixed, sort=link_survival', rated(mixedQueries(names), 'link_survival')],
  ['broad, sort=link_survival', rated(BROAD_WORDS.map((q) => ({ q })), 'link_survival')],
  ['browse, sort=verification', rated(browse, 'verification')],
];

async function time(queries: ReturnType<typeof searchOf>[]): Promise<number[]> {
  const ms: number[] = [];
  for (const s of queries) {
    const t = process.hrtime.bigint();
    await searchOutlets(engine, pool, workspaceId, s, s.page, s.perPage).catch(() => undefined);
    ms.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  return ms;
}

/** The engine's part alone (words looked up, matched, counted, the page's ids picked). */
async function timeEngine(queries: ReturnType<typeof searchOf>[]): Promise<number[]> {
  const ms: number[] = [];
  for (const s of queries) {
    const t = process.hrtime.bigint();
    await engine.search(engineRequest(s));
    ms.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  return ms;
}

function summary(ms: number[]): string {
  const s = [...ms].sort((a, b) => a - b);
  const at = (p: number) => s[Math.min(s.length - 1, Math.floor(p * s.length))]!.toFixed(2);
  const mean = s.reduce((a, b) => a + b, 0) / s.length;
  return `mean ${mean.toFixed(2)} ms, p50 ${at(0.5)}, p90 ${at(0.9)}, p99 ${at(0.99)}, max ${s.at(-1)!.toFixed(2)}`;
}

const rounds = Number(opts.rounds);
for (let r = 1; r <= rounds; r++) {
  // Drawn afresh each round: none of them was asked before.
  const fresh = freshQueries(names, 5_000 + r, 500).map(searchOf);
  await timeEngine(fresh.slice(0, 50));
  console.log(`fresh, round ${r}, the engine's part, first time: ${summary(await timeEngine(fresh.slice(50)))}`);
  for (const [name, queries] of workloads) {
    // The words' lookups are remembered for a second: wait it out.
    await new Promise((res) => setTimeout(res, 1_100));
    const cold = await time(queries);
    const warm = await time(queries);
    console.log(`${name}, round ${r}, first time: ${summary(cold)}`);
    console.log(`${name}, round ${r}, asked again: ${summary(warm)}`);
  }
}
await engine.close();
await pool.end();
process.exit(0);
