// What one search costs, one at a time (no concurrency, so a busy machine blurs it less than the
// load benchmark): over a database that already holds the generated catalog, loads the search
// index as the server does (time and memory), then times each query of the search scenarios'
// workloads through the search the listing route calls, once uncached (each query asked for the
// first time) and once again (its page and total remembered until the next write), with the
// in-memory index and without it (PostgreSQL picks the page and counts, as while the index loads).
//   node --import tsx bench/search/cost.ts --database-url postgres://… [--rounds 3]
import { parseArgs } from 'node:util';
import pg from 'pg';
import { outletStream } from '../../src/demo/outlet-generator.js';
import type { OutletSort } from '../../src/domain/outlets/enums.js';
import { type OutletFilters, searchOutlets, searchTuning, textMatch } from '../../src/domain/outlets/search.js';
import { completionsOf, lookupTerms } from '../../src/domain/outlets/search-terms.js';
import { parseQuery } from '../../src/domain/outlets/search-text.js';
import { forgetCounts } from '../../src/domain/outlets/search-count.js';
import { counterFor, startSearchCounter } from '../../src/domain/outlets/search-live.js';
import { BROAD_WORDS, mixedQueries } from '../scenarios/search.js';
import { JUDGED_SEED } from './relevance.js';

const { values: opts } = parseArgs({ options: { 'database-url': { type: 'string' }, rounds: { type: 'string', default: '3' }, 'skip-postgres': { type: 'boolean', default: false } } });
const url = opts['database-url'] ?? process.env.DATABASE_URL;
if (!url) throw new Error('--database-url is required');

const filtersOf = (p: Record<string, string>): OutletFilters => ({
  q: p.q,
  ...(p.country ? { country: p.country } : {}),
  ...(p.topic ? { topic: p.topic } : {}),
  ...(p.max_price_usd ? { maxPriceCents: Number(p.max_price_usd) * 100 } : {}),
  ...(p.verified_traffic ? { verifiedTraffic: true } : {}),
});

const mb = (n: number) => `${(n / 2 ** 20).toFixed(0)} MB`;
const gc = () => (globalThis as { gc?: () => void }).gc?.();

const pool = new pg.Pool({ connectionString: url, max: 4 });
const { rows } = await pool.query<{ id: number; n: number }>('SELECT (SELECT min(id) FROM workspaces) AS id, (SELECT count(*)::int FROM outlets) AS n');
const workspaceId = rows[0]!.id;
gc();
const before = process.memoryUsage();
const started = Date.now();
const cpu = process.cpuUsage();
startSearchCounter(pool);
while (!counterFor(pool)) await new Promise((r) => setTimeout(r, 50));
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
const mixed = mixedQueries(names).map(filtersOf);
const broad: OutletFilters[] = BROAD_WORDS.map((q) => ({ q }));
// The sorts by the track record's link figures: two tiers (the outlets with the figure in their
// own order, the rest by traffic), over the same queries and without text.
const browse: OutletFilters[] = [{}, { country: 'US' }, { country: 'DE' }, { topic: 'travel' }, { maxPriceCents: 20_000 }, { verifiedTraffic: true }];
const rated = (queries: OutletFilters[], sort: OutletSort) => queries.map((f) => ({ ...f, sort }));
const workloads: [string, OutletFilters[]][] = [
  ['mixed', mixed],
  ['broad', broad],
  ['mixed, sort=link_survival', rated(mixed, 'link_survival')],
  ['broad, sort=link_survival', rated(broad, 'link_survival')],
  ['browse, sort=verification', rated(browse, 'verification')],
];

async function time(queries: OutletFilters[]): Promise<number[]> {
  const ms: number[] = [];
  for (const f of queries) {
    const t = process.hrtime.bigint();
    await searchOutlets(pool, workspaceId, f, 1, 15);
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

/** The index's own part (matching, counting, picking the page), each search the first time. */
async function timeIndex(queries: OutletFilters[]): Promise<number[]> {
  const counter = counterFor(pool)!;
  const ms: number[] = [];
  for (const f of queries) {
    if (!f.q) {
      counter.forget();
      const t = process.hrtime.bigint();
      counter.search(undefined, f, f.sort ?? '-traffic', 15);
      ms.push(Number(process.hrtime.bigint() - t) / 1e6);
      continue;
    }
    const parsed = parseQuery(f.q);
    const last = parsed.words.at(-1);
    const terms = await lookupTerms(pool, parsed.words.map((w) => w.text), counter);
    const completions = parsed.prefixLast && last && last.text.length >= 3 ? await completionsOf(pool, last.text, counter) : [];
    const m = textMatch(f.q, terms, completions);
    if (!m?.counted) continue;
    counter.forget();
    const t = process.hrtime.bigint();
    counter.search(m.counted, f, f.sort ?? 'relevance', 15);
    ms.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  return ms;
}

const rounds = Number(opts.rounds);
for (const [name, queries] of workloads) {
  for (let r = 1; r <= rounds; r++) {
    searchTuning.inMemory = true;
    // A fresh query each time: the index's remembered searches go with any write (and the words'
    // lookups are remembered for a second), so reload nothing, just wait the second out.
    await new Promise((res) => setTimeout(res, 1_100));
    counterFor(pool)!.forget();
    const cold = await time(queries);
    const warm = await time(queries);
    console.log(`${name}, round ${r}, in memory, first time: ${summary(cold)}`);
    console.log(`${name}, round ${r}, in memory, asked again: ${summary(warm)}`);
    console.log(`${name}, round ${r}, in memory, the index's part alone: ${summary(await timeIndex(queries))}`);
    if (opts['skip-postgres']) continue;
    searchTuning.inMemory = false;
    forgetCounts();
    await new Promise((res) => setTimeout(res, 1_100));
    console.log(`${name}, round ${r}, in PostgreSQL, first time: ${summary(await time(queries))}`);
  }
}
searchTuning.inMemory = true;
await pool.end();
process.exit(0);
