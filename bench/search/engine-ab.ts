// Two builds of the search engine side by side in one process (issue 56): this checkout's and
// another one's (`--other-root`, e.g. a `git worktree` of the previous commit, its node_modules
// linked or installed), each with its own index loaded from the same database. Every fresh query
// (the fresh workload's) is asked of both, in turns (old first, then new first), and the answers
// must agree. The machine's load and drift fall on both alike, so the ratio of their times holds
// where a load benchmark's figures move by a third between runs. Time per query is the engine's
// whole answer (words looked up, matched, ranked, counted), waits for PostgreSQL included (the
// same for both); no HTTP.
//   node --import tsx bench/search/engine-ab.ts --database-url postgres://… --other-root ../old [--queries 1500] [--sets 3]
// A catalog of a million outlets: `npm run bench -- search-1m-fresh --keep-database NAME` makes one.
import { resolve } from 'node:path';
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
    'other-root': { type: 'string' },
    queries: { type: 'string', default: '1500' },
    sets: { type: 'string', default: '3' },
  },
});
const url = opts['database-url'] ?? process.env.DATABASE_URL;
if (!url || !opts['other-root']) throw new Error('--database-url and --other-root are required');

type Engine = Pick<SearchEngine, 'start' | 'close' | 'search'> & { readonly ready: boolean };
const other = (await import(resolve(opts['other-root'], 'src/domain/outlets/search-engine.ts'))) as { SearchEngine: new (pool: pg.Pool) => Engine };
const pools = [new pg.Pool({ connectionString: url, max: 4 }), new pg.Pool({ connectionString: url, max: 4 })];
const engines: Record<'other' | 'this', Engine> = { other: new other.SearchEngine(pools[0]!), this: new SearchEngine(pools[1]!) };
// One after the other: two loads at once would each take the other's time.
for (const e of Object.values(engines)) {
  e.start();
  while (!e.ready) await new Promise((r) => setTimeout(r, 50));
}

const names = [...outletStream(2_000, JUDGED_SEED)].map((o) => o.name);
const times: Record<'other' | 'this', number[]> = { other: [], this: [] };
let differing = 0;
// The first set warms both up (their first searches after the warm-up of their own); the rest are measured.
for (let set = 0; set <= Number(opts.sets); set++) {
  const queries = freshQueries(names, 77 + set, Number(opts.queries));
  for (const [i, p] of queries.entries()) {
    const req = engineRequest(searchOfParams(p));
    const answers: Record<string, string> = {};
    for (const which of i % 2 === 0 ? (['other', 'this'] as const) : (['this', 'other'] as const)) {
      const t = performance.now();
      answers[which] = JSON.stringify(await engines[which].search(req));
      if (set > 0) times[which].push(performance.now() - t);
    }
    if (answers.other !== answers.this) differing++;
  }
}

const at = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * q)]!.toFixed(2);
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
for (const which of ['other', 'this'] as const) {
  const xs = times[which];
  console.log(`${which === 'other' ? 'other build' : 'this build '}  ${xs.length} queries  mean ${mean(xs).toFixed(3)} ms  p50 ${at(xs, 0.5)}  p90 ${at(xs, 0.9)}  p99 ${at(xs, 0.99)} ms`);
}
console.log(`this ÷ other (mean): ${(mean(times.this) / mean(times.other)).toFixed(3)}; answers that differ: ${differing}`);
for (const e of Object.values(engines)) await e.close();
for (const p of pools) await p.end();
process.exit(differing > 0 ? 1 : 0);
