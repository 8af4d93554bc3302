// What the search index's own work costs per search, without PostgreSQL or HTTP: over a database
// that already holds a generated catalog, loads the index of a build (this checkout's dist/, or
// another's with --server-root DIR) and answers a fixed batch of searches over it, as the engine
// does after the words are looked up (matched, counted, a page picked): every sort, the warm-up's
// filters, broad and rare words (the bitsets' way and the listed way), one and two words, the last
// one completed. Prints the CPU a search takes (process.cpuUsage, best round) and a hash of every
// total and page, the same for two builds that answer the same. For instruction counts, which the
// machine's load does not move, run it under `valgrind --tool=callgrind --instr-atstart=no` with
// --callgrind: the first round runs uninstrumented (the compiler's warm-up), the others are
// counted (`callgrind_control` turns counting on and off), the load left out. `--against DIR`: a
// second build's index in the same process, the two answering in turn round by round.
//   node --import tsx bench/search/index-cpu.ts --database-url postgres://… [--server-root DIR] [--against DIR] [--searches 2000] [--rounds 5] [--callgrind]
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import pg from 'pg';

const { values: opts } = parseArgs({
  options: {
    'database-url': { type: 'string' },
    'server-root': { type: 'string', default: '.' },
    searches: { type: 'string', default: '2000' },
    rounds: { type: 'string', default: '5' },
    against: { type: 'string' },
    callgrind: { type: 'boolean', default: false },
  },
});
const url = opts['database-url'] ?? process.env.DATABASE_URL;
if (!url) throw new Error('--database-url is required');

interface Index {
  sampleWords(n: number): string[];
  completions(prefix: string, max: number): string[];
  filterValues(): { countries: string[]; languages: string[]; topics: string[] };
  load?(pool: pg.Pool): Promise<void>;
  // Before issue 57's query: the index answered a search itself.
  match?(q: unknown, f: unknown): unknown;
  total?(m: unknown): number;
  page?(m: unknown, sort: string, f: unknown, text: boolean, n: number): number[];
  release?(m: unknown): void;
}
type Query = { total(): number; page(sort: string, text: boolean, n: number): number[]; release(): void };

/** A build's index, loaded, and its way of answering one search (total and page). */
async function build(root: string) {
  const dist = (file: string) => pathToFileURL(resolve(root, 'dist', 'src', 'domain', 'outlets', file)).href;
  const { SearchIndex } = (await import(dist('search-index.js'))) as { SearchIndex: new () => Index };
  const loader = (await import(dist('search-loader.js')).catch(() => undefined)) as { loadIndex(pool: pg.Pool, ix: Index): Promise<void> } | undefined;
  const query = (await import(dist('search-query.js')).catch(() => undefined)) as { OutletQuery: new (ix: Index, q: unknown, f: unknown) => Query } | undefined;
  const { parseQuery } = (await import(dist('search-text.js'))) as { parseQuery(q: string): { exactName: string; domain: string | undefined } };
  const pool = new pg.Pool({ connectionString: url, max: 2 });
  const index = new SearchIndex();
  if (loader) await loader.loadIndex(pool, index);
  else await index.load!(pool);
  await pool.end();
  const answer = (q: unknown, f: unknown, sort: string, text: boolean, n: number): [number, number[]] => {
    if (query) {
      const s = new query.OutletQuery(index, q, f);
      const out: [number, number[]] = [s.total(), s.page(sort, text, n)];
      s.release();
      return out;
    }
    const m = index.match!(q, f);
    const out: [number, number[]] = [index.total!(m), index.page!(m, sort, f, text, n)];
    index.release!(m);
    return out;
  };
  return { index, answer, parseQuery };
}

const builds = [{ name: resolve(opts['server-root']), ...(await build(opts['server-root'])) }];
if (opts.against) builds.push({ name: resolve(opts.against), ...(await build(opts.against)) });
const { index, parseQuery } = builds[0]!;
const SORTS = ['relevance', 'traffic', '-traffic', 'price', '-price', 'link_survival', 'verification'];
const FORMATS = ['guest_post', 'sponsored_article', 'link_insertion', 'press_release'];
const { countries, languages, topics } = index.filterValues();
const filters: object[] = [{}, { verifiedTraffic: true }, { maxPriceCents: 20_000 }, { minTraffic: 10_000 }];
for (const c of countries) filters.push({ countries: [c] }, { countries: [c], maxPriceCents: 50_000 });
for (const l of languages) filters.push({ languages: [l] });
for (const t of topics) filters.push({ topic: t }, { topic: t, countries: countries.slice(0, 1) });
for (const f of FORMATS) filters.push({ formats: [f] }, { formats: [f], maxPriceCents: 30_000 });
filters.push({ countries: countries.slice(0, 3), languages: languages.slice(0, 2), formats: FORMATS.slice(0, 2) });
const words = index.sampleWords(200);
const textOf = (ws: string[]) => {
  const parsed = parseQuery(ws.join(' '));
  return { exactName: parsed.exactName, domain: parsed.domain, groups: ws.map((w, i) => ({ lexemes: i === ws.length - 1 ? [w, ...index.completions(w, 20)] : [w] })) };
};
const count = Number(opts.searches);
const batch = Array.from({ length: count }, (_, i) => {
  const text = i % 5 === 4 ? undefined : textOf(i % 3 === 2 ? [words[i % words.length]!, words[(i * 7 + 3) % words.length]!] : [words[(i * 11) % words.length]!]);
  const sort = SORTS[i % SORTS.length]!;
  return { text, filter: filters[(i * 5) % filters.length]!, sort: sort === 'relevance' && !text ? '-traffic' : sort, n: 10 + ((i * 13) % 66) };
});

// The builds in turn, round by round, in one process: the machine's load falls on both alike.
const best = builds.map(() => Infinity);
const digests = builds.map(() => '');
const instr = (on: boolean) => {
  if (opts.callgrind) spawnSync('callgrind_control', [`--instr=${on ? 'on' : 'off'}`, String(process.pid)], { stdio: 'ignore' });
};
for (let r = 0; r < Number(opts.rounds); r++) {
  if (r === 1) instr(true);
  builds.forEach((b, k) => {
    const hash = createHash('sha256');
    const cpu = process.cpuUsage();
    for (const s of batch) {
      const [total, ids] = b.answer(s.text, s.filter, s.sort, s.text !== undefined, s.n);
      hash.update(`${total}:${ids.join(',')};`);
    }
    const used = process.cpuUsage(cpu);
    best[k] = Math.min(best[k]!, (used.user + used.system) / count);
    digests[k] = hash.digest('hex').slice(0, 16);
  });
}
instr(false);
builds.forEach((b, k) => console.log(`${b.name}: ${count} searches × ${opts.rounds} rounds: best ${best[k]!.toFixed(1)} µs CPU a search; answers ${digests[k]}`));
