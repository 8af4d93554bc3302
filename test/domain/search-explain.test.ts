import { afterAll, describe, expect, it } from 'vitest';
import { upsertOutlets } from '../../src/domain/outlets/outlet-upsert.js';
import { generateOutlets, runDomainTag } from '../../src/demo/outlet-generator.js';
import { hydrateStatement, type OutletFilters, searchStatements, searchTuning } from '../../src/domain/outlets/search.js';
import { SearchCounter } from '../../src/domain/outlets/search-counter.js';
import { createPublisher } from '../../src/domain/publishers/publisher-service.js';
import { createWorkspace } from '../../src/domain/workspaces/workspace-service.js';
import { createTestDatabase } from '../helpers/db.js';

// The listing's query shapes over 100,000 generated outlets: none may read the outlets or offers
// tables sequentially (each would be a full scan per request at scale), whichever way a page is
// read (in PostgreSQL, walking the sort's index or from the word index; from the in-memory index,
// the page's rows by id), and a broad word's page is found by reading a bounded number of rows
// or slots, not its matches.
const database = await createTestDatabase();
afterAll(() => database.drop());

const COUNT = 100_000;
const pub = await createPublisher(database.db, 'Explain publisher');
const ws = await createWorkspace(database.db, { name: 'Explain workspace' });
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

const shapes: [string, OutletFilters][] = [
  ['text only', { q: 'travel' }],
  ['text, misspelt', { q: 'technolgy' }],
  ['text + type', { q: 'finance', type: 'news' }],
  ['text + format', { q: 'finance', format: 'guest_post' }],
  ['text + country', { q: 'travel', country: 'DE' }],
  ['text + topic', { q: 'news', topic: 'sports' }],
  ['text + max price', { q: 'gaming', maxPriceCents: 20_000 }],
  ['text + verified', { q: 'health', verifiedTraffic: true }],
  ['text + min traffic', { q: 'food', minTraffic: 100_000 }],
  ['text + language', { q: 'travel', language: 'de' }],
  ['two words', { q: 'travel news' }],
  ['a phrase', { q: '"rocky mountain" travel' }],
  ['a domain', { q: 'https://www.example.com/' }],
  ['a typo in a topic', { q: 'travl', country: 'DE' }],
  ['language', { language: 'fr' }],
  ['no filters', {}],
  ['type', { type: 'magazine' }],
  ['format', { format: 'press_release' }],
  ['country', { country: 'US' }],
  ['topic', { topic: 'crypto' }],
  ['max price', { maxPriceCents: 5_000 }],
  ['format + max price', { format: 'link_insertion', maxPriceCents: 10_000 }],
  ['verified', { verifiedTraffic: false }],
  ['min traffic', { minTraffic: 1_000_000 }],
  ['country + type + verified', { country: 'GB', type: 'blog', verifiedTraffic: true }],
  ['sort traffic', { sort: 'traffic' }],
  ['sort -traffic', { sort: '-traffic' }],
  ['sort price', { sort: 'price' }],
  ['sort -price', { sort: '-price' }],
  ['sort price + format', { sort: 'price', format: 'guest_post' }],
  ['sort relevance + text', { sort: 'relevance', q: 'tech' }],
  ['sort price + text', { sort: 'price', q: 'travel' }],
  ['sort traffic + country', { sort: 'traffic', country: 'FR' }],
  ['sort link_survival', { sort: 'link_survival' }],
  ['sort link_survival + country', { sort: 'link_survival', country: 'DE' }],
  ['sort link_survival + text', { sort: 'link_survival', q: 'travel' }],
  ['sort verification + text + max price', { sort: 'verification', q: 'news', maxPriceCents: 20_000 }],
  ['sort verification + topic', { sort: 'verification', topic: 'crypto' }],
];

describe(`search plans over ${COUNT.toLocaleString('en-US')} generated outlets`, () => {
  it('has the outlets', async () => {
    const { rows } = await database.pool.query('SELECT count(*)::int AS n FROM outlets');
    expect(rows[0].n).toBe(COUNT);
  });

  for (const [name, filters] of shapes) {
    it(`${name}: no sequential scan in any page or count statement`, async () => {
      const plan = await searchStatements(database.pool, filters, 2, 15);
      expect(plan).toBeDefined();
      for (const q of [...plan!.pages, plan!.count]) {
        if (process.env.SHOW_PLANS) {
          const { rows } = await database.pool.query(`EXPLAIN ${q.text}`, q.values);
          console.log(name, '\n' + rows.map((r) => r['QUERY PLAN']).join('\n'));
        }
        expect(seqScans(await explain(q.text, q.values)), q.text).toEqual([]);
      }
    });
  }

  it('a word in a third of the outlets: its page is found by walking the traffic index, not by reading its matches', async () => {
    const { rows } = await database.pool.query(`SELECT count(*)::int AS n FROM outlets WHERE search_vector @@ 'news'::tsquery`);
    expect(rows[0].n).toBeGreaterThan(COUNT / 5);
    const plan = await searchStatements(database.pool, { q: 'news' }, 1, 15);
    // The tiers walked: exact name, name, anywhere; the last one holds the broad matches.
    const walked = plan!.pages.filter((p) => p.text.includes('walked') && !p.text.includes('row_number'));
    const anywhere = walked.at(-1)!;
    const all = nodes(await explain(anywhere.text, anywhere.values, true));
    const traffic = all.find((n) => n['Index Name'] === 'outlets_traffic_idx')!;
    expect(traffic['Actual Rows']).toBeLessThanOrEqual(searchTuning.walkRows);
    // The branch reading every match through the word index never ran.
    const words = all.filter((n) => n['Index Name'] === 'outlets_search_idx');
    expect(words.every((n) => n['Actual Loops'] === 0)).toBe(true);
  });

  it('from the in-memory index: a word in a third of the outlets finds its page within a few dozen slots, then reads only its rows', async () => {
    const counter = new SearchCounter();
    await counter.load(database.pool);
    const news = { exactName: 'news', domain: undefined, groups: [{ lexemes: ['news'] }] };
    const found = counter.search(news, {}, 'relevance', 15)!;
    expect(found.total).toBeGreaterThan(COUNT / 5);
    expect(found.ids).toHaveLength(15);
    expect(counter.walked(news, {}, 15)).toBeLessThan(100);
    const rows = hydrateStatement(found.ids, undefined, ws.id);
    const all = nodes(await explain(rows.text, rows.values, true));
    const outlets = all.filter((n) => n['Relation Name'] === 'outlets');
    expect(outlets.map((n) => n['Node Type'])).toEqual(['Index Scan']);
    expect(outlets[0]!['Actual Rows']! * outlets[0]!['Actual Loops']!).toBe(15);
  });
});
