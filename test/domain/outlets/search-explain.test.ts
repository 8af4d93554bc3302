import { afterAll, describe, expect, it } from 'vitest';
import { upsertOutlets } from '../../../src/domain/outlets/outlet-upsert.js';
import { generateOutlets, runDomainTag } from '../../../src/demo/outlet-generator.js';
import { hydrateStatement } from '../../../src/domain/outlets/search.js';
import { SearchEngine } from '../../../src/domain/outlets/search-engine.js';
import { confirmPhrases } from '../../../src/domain/outlets/search-phrase.js';
import { fetchCandidates, lookUpTerms, termsOf } from '../../../src/domain/planning/candidates.js';
import { createPublisher } from '../../../src/domain/publishers/publisher-service.js';
import { createWorkspace } from '../../../src/domain/workspaces/workspace-service.js';
import { createTestDatabase } from '../../helpers/db.js';

// What a search asks of PostgreSQL, over 20,000 generated outlets: the page's rows by primary key
// (exactly the page's), a phrase confirmed on its candidates by primary key, the planner's
// candidates' rows by primary key; never a sequential scan of outlets or offers (a full scan per
// request at scale). 20,000 is enough: the planner already prices a scan above an index read, and
// the gap only widens with more rows (a scan grows with the table, an index read with its log).
// At 100,000 the import alone took 40-70 s of the suite.
const database = await createTestDatabase();
afterAll(() => database.drop());

const COUNT = 20_000;
const pub = await createPublisher(database.pool, 'Explain publisher');
const ws = await createWorkspace(database.pool, { name: 'Explain workspace' });
await upsertOutlets(database.pool, pub.id, generateOutlets(COUNT, 7, { domainTag: runDomainTag(pub.id, 7) }), 0.2);
// Counts of broad filters are index-only scans, which the planner picks once the visibility map
// is current (autovacuum's job in production). Another test's open transaction can keep VACUUM
// from marking pages all-visible for a moment, so wait for it.
for (let attempt = 0; ; attempt++) {
  for (const table of ['outlets', 'offers']) await database.pool.query(`VACUUM ANALYZE ${table}`);
  const { rows } = await database.pool.query(`SELECT relallvisible::float / GREATEST(relpages, 1) AS visible FROM pg_class WHERE relname = 'outlets'`);
  if (rows[0].visible >= 0.95 || attempt >= 20) break;
  await new Promise((r) => setTimeout(r, 1000));
}

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Actual Rows'?: number;
  'Actual Loops'?: number;
  'Index Name'?: string;
  Plans?: PlanNode[];
}

function seqScans(node: PlanNode, found: string[] = []): string[] {
  if (node['Node Type'] === 'Seq Scan' && ['outlets', 'offers'].includes(node['Relation Name'] ?? '')) {
    found.push(node['Relation Name']!);
  }
  for (const child of node.Plans ?? []) seqScans(child, found);
  return found;
}

function nodes(node: PlanNode, out: PlanNode[] = []): PlanNode[] {
  out.push(node);
  for (const child of node.Plans ?? []) nodes(child, out);
  return out;
}

async function explain(text: string, values: unknown[], analyze = false) {
  const { rows } = await database.pool.query(`EXPLAIN (FORMAT JSON${analyze ? ', ANALYZE' : ''}) ${text}`, values);
  return rows[0]['QUERY PLAN'][0].Plan as PlanNode;
}

const engine = new SearchEngine(database.pool);
engine.start();
await engine.catchUp();
afterAll(() => engine.close());

describe(`what a search reads in PostgreSQL, over ${COUNT.toLocaleString('en-US')} generated outlets`, () => {
  it('has the outlets', async () => {
    const { rows } = await database.pool.query('SELECT count(*)::int AS n FROM outlets');
    expect(rows[0].n).toBe(COUNT);
  });

  it('a word in a third of the outlets: the index picks the page, PostgreSQL reads exactly its 15 rows', async () => {
    const found = await engine.search({ q: 'news', filter: {}, sort: 'relevance', offset: 0, limit: 15 });
    expect(found.total).toBeGreaterThan(COUNT / 5);
    expect(found.ids).toHaveLength(15);
    const rows = hydrateStatement(found.ids, 'any', ws.id);
    const all = nodes(await explain(rows.text, rows.values, true));
    const outlets = all.filter((n) => n['Relation Name'] === 'outlets');
    expect(outlets.map((n) => n['Node Type'])).toEqual(['Index Scan']);
    expect(outlets[0]!['Actual Rows']! * outlets[0]!['Actual Loops']!).toBe(15);
  });

  it('a phrase is confirmed on its candidates by primary key', async () => {
    const { rows } = await database.pool.query<{ id: number }>(`SELECT id FROM outlets ORDER BY id LIMIT 2000`);
    const ids = rows.map((r) => r.id);
    let statement: { text: string; values: unknown[] } | undefined;
    const spy = { query: (st: { text: string; values: unknown[] }) => ((statement = st), database.pool.query(st)) } as unknown as typeof database.pool;
    await confirmPhrases(spy, ids, [[['united'], ['kingdom']]]);
    const plan = await explain(statement!.text, statement!.values);
    expect(seqScans(plan)).toEqual([]);
  });

  it("the planner's candidates' rows are read by primary key", async () => {
    let statement: { text: string; values: unknown[] } | undefined;
    const spy = { query: (st: { text: string; values: unknown[] }) => ((statement = st), database.pool.query(st)) } as unknown as typeof database.pool;
    const terms = await lookUpTerms(engine.terms, termsOf('travel news for families'));
    const set = await fetchCandidates(spy, engine, { goal: 'travel news', budgetCents: 50_000 }, terms);
    expect(set.candidates.length).toBeGreaterThan(0);
    expect(seqScans(await explain(statement!.text, statement!.values))).toEqual([]);
  });
});
