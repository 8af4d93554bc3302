// The judged set (judged.json) scored against a running server: nDCG@10 and hit rates of
// `GET /api/v1/outlets` over the catalog of `outlets generate --seed 11`. Used by the search
// scenarios of `npm run bench`, and on its own:
//   node --import tsx bench/search/relevance.ts --base-url URL --key KEY --database-url URL --publisher 1
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';

export const JUDGED_SEED = 11;

/** All fields must hold. */
interface Rule {
  name?: string;
  domain?: string;
  nameWords?: string[];
  topic?: string;
  country?: string;
}

interface Judged {
  kind: string;
  q: string;
  country?: string;
  topic?: string;
  /** Grade 2: the outlets that must come first. */
  first?: Rule;
  /** Grade 1: outlets that answer the query. */
  relevant?: Rule;
}

interface Item {
  name: string;
  domain: string;
  topics: string[];
  country: string;
}

export interface QueryScore {
  kind: string;
  q: string;
  filters: string;
  ndcg: number;
  hit1: boolean;
  hit10: boolean;
  total: number;
  top: string;
}

export interface JudgedScore {
  queries: QueryScore[];
  ndcg10: number;
  hit1: number;
  hit10: number;
}

const K = 10;

export function loadJudged(tag: string): Judged[] {
  const raw = readFileSync(join(import.meta.dirname, 'judged.json'), 'utf8').replaceAll('{tag}', tag);
  return (JSON.parse(raw) as { queries: Judged[] }).queries;
}

const words = (s: string) => s.toLowerCase().split(/[^\p{L}\p{Nd}]+/u).filter(Boolean);

function holds(rule: Rule | undefined, item: Item): boolean {
  if (!rule) return false;
  if (rule.name !== undefined && item.name.toLowerCase() !== rule.name.toLowerCase()) return false;
  if (rule.domain !== undefined && item.domain !== rule.domain) return false;
  if (rule.nameWords && !rule.nameWords.every((w) => words(item.name).includes(w))) return false;
  if (rule.topic !== undefined && !item.topics.includes(rule.topic)) return false;
  if (rule.country !== undefined && item.country !== rule.country) return false;
  return true;
}

function grade(j: Judged, item: Item): number {
  return holds(j.first, item) ? 2 : holds(j.relevant, item) ? 1 : 0;
}

/** SQL for a rule over `outlets o`, ANDed with the query's own filters; NULL rule: matches nothing. */
function ruleSql(rule: Rule | undefined, j: Judged, values: unknown[]): string {
  if (!rule) return 'false';
  const p = (v: unknown) => `$${values.push(v)}`;
  const parts = ['o.min_price_any IS NOT NULL'];
  if (rule.name !== undefined) parts.push(`lower(o.name) = lower(${p(rule.name)})`);
  if (rule.domain !== undefined) parts.push(`o.domain = ${p(rule.domain)}`);
  for (const w of rule.nameWords ?? []) parts.push(`lower(o.name) ~ ('\\m' || ${p(w)} || '\\M')`);
  if (rule.topic !== undefined) parts.push(`o.topics @> ARRAY[${p(rule.topic)}]::text[]`);
  if (rule.country !== undefined) parts.push(`o.country = ${p(rule.country)}`);
  if (j.country !== undefined) parts.push(`o.country = ${p(j.country)}`);
  if (j.topic !== undefined) parts.push(`o.topics @> ARRAY[${p(j.topic)}]::text[]`);
  return parts.join(' AND ');
}

/** How many outlets of grade 2 and of grade 1 the catalog holds: the ideal ranking's gains. */
async function idealGrades(client: pg.Client, j: Judged): Promise<number[]> {
  const values: unknown[] = [];
  const first = ruleSql(j.first, j, values);
  const relevant = ruleSql(j.relevant, j, values);
  const { rows } = await client.query<{ g2: number; g1: number }>(
    `SELECT count(*) FILTER (WHERE ${first})::int AS g2, count(*) FILTER (WHERE NOT (${first}) AND ${relevant})::int AS g1
       FROM outlets o WHERE (${first}) OR (${relevant})`,
    values,
  );
  const { g2, g1 } = rows[0]!;
  return [...Array<number>(Math.min(K, g2)).fill(2), ...Array<number>(Math.max(0, Math.min(K - g2, g1))).fill(1)];
}

const dcg = (grades: number[]) => grades.slice(0, K).reduce((s, g, i) => s + (2 ** g - 1) / Math.log2(i + 2), 0);

export async function scoreJudged(opts: { baseUrl: string; key: string; databaseUrl: string; publisherId: number }): Promise<JudgedScore> {
  const judged = loadJudged(`${opts.publisherId}-${JUDGED_SEED}`);
  const client = new pg.Client({ connectionString: opts.databaseUrl });
  await client.connect();
  const queries: QueryScore[] = [];
  try {
    for (const j of judged) {
      const params = new URLSearchParams({ q: j.q, per_page: String(K) });
      if (j.country) params.set('country', j.country);
      if (j.topic) params.set('topic', j.topic);
      const res = await fetch(`${opts.baseUrl}/api/v1/outlets?${params}`, { headers: { authorization: `Bearer ${opts.key}` } });
      // A failed search (a timeout at scale, say) finds nothing: it scores 0 and says why.
      const body = res.ok ? ((await res.json()) as { data: Item[]; meta: { total: number } }) : { data: [], meta: { total: 0 } };
      if (!res.ok) await res.arrayBuffer();
      const got = body.data.map((item) => grade(j, item));
      const ideal = await idealGrades(client, j);
      const best = Math.max(...ideal, 0);
      queries.push({
        kind: j.kind,
        q: j.q,
        filters: [j.country && `country=${j.country}`, j.topic && `topic=${j.topic}`].filter(Boolean).join(' '),
        ndcg: ideal.length ? dcg(got) / dcg(ideal) : 0,
        hit1: best > 0 && got[0] === best,
        hit10: best > 0 && got.includes(best),
        total: body.meta.total,
        top: res.ok ? (body.data[0]?.name ?? '—') : `(status ${res.status})`,
      });
    }
  } finally {
    await client.end();
  }
  const mean = (f: (q: QueryScore) => number) => queries.reduce((s, q) => s + f(q), 0) / queries.length;
  return { queries, ndcg10: mean((q) => q.ndcg), hit1: mean((q) => Number(q.hit1)), hit10: mean((q) => Number(q.hit10)) };
}

export function formatScore(s: JudgedScore, detail = false): string {
  const kinds = [...new Set(s.queries.map((q) => q.kind))];
  const byKind = kinds.map((k) => {
    const qs = s.queries.filter((q) => q.kind === k);
    const m = (f: (q: QueryScore) => number) => (qs.reduce((a, q) => a + f(q), 0) / qs.length).toFixed(2);
    return `${k} (${qs.length}) ${m((q) => q.ndcg)}/${m((q) => Number(q.hit1))}`;
  });
  const lines = [
    `judged set (${s.queries.length} queries): nDCG@10 ${s.ndcg10.toFixed(3)}, hit@1 ${s.hit1.toFixed(3)}, hit@10 ${s.hit10.toFixed(3)}`,
    `  by kind, nDCG@10/hit@1: ${byKind.join('; ')}`,
  ];
  if (detail) {
    for (const q of s.queries) {
      lines.push(
        `  ${q.ndcg.toFixed(2)} ${q.hit1 ? 'hit ' : 'miss'} ${`${q.q}${q.filters ? ` [${q.filters}]` : ''}`.padEnd(40)} total ${String(q.total).padStart(7)}  top: ${q.top}`,
      );
    }
  }
  return lines.join('\n');
}

if (import.meta.filename === process.argv[1]) {
  const { values } = parseArgs({
    options: {
      'base-url': { type: 'string' },
      key: { type: 'string' },
      'database-url': { type: 'string' },
      publisher: { type: 'string', default: '1' },
    },
  });
  if (!values['base-url'] || !values.key || !values['database-url']) {
    process.stderr.write('usage: node --import tsx bench/search/relevance.ts --base-url URL --key KEY --database-url URL [--publisher 1]\n');
    process.exit(2);
  }
  const score = await scoreJudged({ baseUrl: values['base-url'], key: values.key, databaseUrl: values['database-url'], publisherId: Number(values.publisher) });
  process.stdout.write(formatScore(score, true) + '\n');
}
