// What a fresh process pays on its first searches after the index says it is ready (issue 56):
// loads the search engine as the server does, then answers fresh queries (the fresh workload's,
// never asked before) one at a time, and prints per block of queries the longest one, the
// longest holdup of the event loop, the longest collector pause and the time the collector took. Run once with --cpu-prof to see which
// functions the first blocks spend their time in. One query at a time, so neither the machine's
// other work nor concurrency decides what a block costs as much as in the load benchmark.
//   node --import tsx bench/search/first-use.ts --database-url postgres://… [--queries 2000] [--block 100] [--writes]
// --no-warm-up: the engine ready as soon as loaded (before issue 56), to compare.
// --writes: a traffic refresh meanwhile (10 outlets' monthly_visits every 500 ms, put back at the end).
// --pre N: N fresh queries of another seed asked first, not measured: the blocks then show what a
// warm-up of real searches would leave (against them, what the engine's own warm-up leaves).
// Each block prints its CPU a query beside its time: CPU above the time is another thread's (V8's
// optimising compiler, in the first blocks).
import { monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { outletStream } from '../../src/demo/outlet-generator.js';
import { SearchEngine } from '../../src/domain/outlets/search-engine.js';
import { freshQueries } from '../scenarios/search.js';
import { engineRequest, searchOfParams } from './query-params.js';
import { JUDGED_SEED } from './relevance.js';

const { values: opts } = parseArgs({
  options: {
    'database-url': { type: 'string' },
    queries: { type: 'string', default: '2000' },
    block: { type: 'string', default: '100' },
    writes: { type: 'boolean', default: false },
    'no-warm-up': { type: 'boolean', default: false },
    pre: { type: 'string', default: '0' },
  },
});
const url = opts['database-url'] ?? process.env.DATABASE_URL;
if (!url) throw new Error('--database-url is required');

const pauses: { at: number; ms: number; kind: number }[] = [];
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) pauses.push({ at: e.startTime, ms: e.duration, kind: ((e as { detail?: { kind?: number } }).detail)?.kind ?? 0 });
}).observe({ entryTypes: ['gc'] });

const pool = new pg.Pool({ connectionString: url, max: 4 });
// The longest holdup during the load (its sorts and packing at the end run in one piece): what a
// reload would cost the index still answering.
const loadLoop = monitorEventLoopDelay({ resolution: 5 });
loadLoop.enable();
const started = performance.now();
// --no-warm-up: ready as soon as loaded, as before issue 56 (the index's first searches are the clients').
const engine = opts['no-warm-up'] ? new SearchEngine(pool, undefined, async () => {}) : new SearchEngine(pool);
engine.start();
while (!engine.ready) await new Promise((r) => setTimeout(r, 20));
const readyAt = performance.now();
loadLoop.disable();
const loadPauses = pauses.filter((p) => p.at < readyAt);
console.log(
  `ready after ${((readyAt - started) / 1000).toFixed(1)} s; collector during the load: ${loadPauses.length} pauses, longest ${Math.max(0, ...loadPauses.map((p) => p.ms)).toFixed(0)} ms; ` +
    `loop held up ${(loadLoop.max / 1e6 - 5).toFixed(0)} ms at most during the load and warm-up`,
);

let writer: NodeJS.Timeout | undefined;
const original = new Map<number, string>();
if (opts.writes) {
  const { rows } = await pool.query<{ lo: number; hi: number }>('SELECT min(id)::int AS lo, max(id)::int AS hi FROM outlets');
  const { lo, hi } = rows[0]!;
  writer = setInterval(() => {
    const ids = Array.from({ length: 10 }, () => lo + Math.floor(Math.random() * (hi - lo + 1)));
    void pool
      .query<{ id: number; was: string }>(
        `WITH old AS (SELECT id, monthly_visits FROM outlets WHERE id = ANY($1::int[]) FOR UPDATE)
         UPDATE outlets o SET monthly_visits = o.monthly_visits + 1 + floor(random() * 1000)::int FROM old WHERE o.id = old.id
         RETURNING o.id, old.monthly_visits::text AS was`,
        [ids],
      )
      .then(({ rows: written }) => written.forEach((r) => original.has(r.id) || original.set(r.id, r.was)));
  }, 500);
}

const names = [...outletStream(2_000, JUDGED_SEED)].map((o) => o.name);
const queries = freshQueries(names, 77, Number(opts.queries));
const block = Number(opts.block);
for (const p of freshQueries(names, 99, Number(opts.pre))) await engine.search(engineRequest(searchOfParams(p)));
for (let b = 0; b < queries.length; b += block) {
  const from = performance.now();
  const cpuFrom = process.cpuUsage();
  let longest = 0;
  // How long the loop was held up at a time (a server's other requests wait that long).
  const loop = monitorEventLoopDelay({ resolution: 5 });
  loop.enable();
  for (const p of queries.slice(b, b + block)) {
    const request = engineRequest(searchOfParams(p));
    const t = performance.now();
    await engine.search(request);
    longest = Math.max(longest, performance.now() - t);
  }
  const to = performance.now();
  const cpu = process.cpuUsage(cpuFrom);
  loop.disable();
  const inBlock = pauses.filter((x) => x.at >= from && x.at < to);
  console.log(
    `queries ${String(b + 1).padStart(5)}–${String(Math.min(b + block, queries.length)).padEnd(5)} ${((from - readyAt) / 1000).toFixed(1).padStart(5)} s after ready: ` +
      `${((to - from) / block).toFixed(2)} ms a query (CPU ${((cpu.user + cpu.system) / 1000 / block).toFixed(2)} ms), longest ${longest.toFixed(1)} ms, loop held up ${Math.max(0, loop.max / 1e6 - 5).toFixed(1)} ms at most; collector ${inBlock.length} pauses, ${inBlock.reduce((a, x) => a + x.ms, 0).toFixed(0)} ms, longest ${Math.max(0, ...inBlock.map((x) => x.ms)).toFixed(1)} ms`,
  );
}
clearInterval(writer);
if (original.size) {
  await pool.query('UPDATE outlets o SET monthly_visits = r.was FROM unnest($1::int[], $2::bigint[]) AS r(id, was) WHERE o.id = r.id', [
    [...original.keys()],
    [...original.values()],
  ]);
}
await engine.close();
await pool.end();
process.exit(0);
