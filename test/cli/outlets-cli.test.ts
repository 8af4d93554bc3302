import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { feeCents } from '../../src/domain/outlets/fees.js';
import type { OutletInput } from '../../src/domain/outlets/outlet-input.js';
import { createPublisher } from '../../src/domain/publishers/publisher-service.js';
import type { CliOutcome } from '../../src/cli/main.js';
import { runCli } from '../helpers/cli.js';
import { offerInput, outletInput } from '../helpers/catalog.js';
import { createTestDatabase } from '../helpers/db.js';

// `outlets generate` and `outlets import` (docs/cli.md) as a real CLI process against a
// private database: one JSON object on stdout and exit 0, or one stderr line and exit 1.

const FEE_RATE = 0.15;
const database = await createTestDatabase({ max: 2 });
const dir = mkdtempSync(join(tmpdir(), 'outlets-cli-'));
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  await database.drop();
});

const cli = (...args: string[]) => runCli(args, { DATABASE_URL: database.url, FEE_RATE: String(FEE_RATE) });

function ok(r: CliOutcome): Record<string, unknown> {
  expect(r.stderr, r.stderr).toBe('');
  expect(r.status).toBe(0);
  return JSON.parse(r.stdout) as Record<string, unknown>;
}

/** Exit 1, nothing on stdout, exactly one line on stderr; returns that line. */
function fails(r: CliOutcome): string {
  expect(r.stdout).toBe('');
  expect(r.status).toBe(1);
  const lines = r.stderr.split('\n');
  expect(lines).toHaveLength(2);
  expect(lines[1]).toBe('');
  return lines[0]!;
}

async function count(sql: string, params: unknown[]): Promise<number> {
  const { rows } = await database.pool.query<{ n: number }>(sql, params);
  return rows[0]!.n;
}
const outletCount = (publisherId: number) => count('SELECT count(*)::int AS n FROM outlets WHERE publisher_id = $1', [publisherId]);
const offerCount = (publisherId: number) =>
  count('SELECT count(*)::int AS n FROM offers f JOIN outlets o ON o.id = f.outlet_id WHERE o.publisher_id = $1', [publisherId]);

const offer = (over: Partial<OutletInput['offers'][number]> = {}) =>
  offerInput({ publisher_price_cents: 12_345, turnaround_days: 5, content_by: 'buyer', min_words: 600, max_words: 1500, max_links: 2, sponsored_label: false, ...over });
const outlet = (domain: string, over: Partial<OutletInput> = {}): OutletInput =>
  outletInput(domain, { name: `Site ${domain}`, description: 'Practical guides about gardening.', country: 'GB', topics: ['home-garden'], traffic: { monthly_visits: 12_000, verified: true }, offers: [offer()], ...over });

let fileNo = 0;
function jsonl(lines: (object | string)[]): string {
  const path = join(dir, `import-${++fileNo}.jsonl`);
  writeFileSync(path, lines.map((l) => (typeof l === 'string' ? l : JSON.stringify(l))).join('\n') + '\n');
  return path;
}

let pubA = 0;
let pubB = 0;
beforeAll(async () => {
  pubA = (await createPublisher(database.pool, 'Generator A')).id;
  pubB = (await createPublisher(database.pool, 'Generator B')).id;
});

// Each CLI run is a fresh Node process (a second or more on a busy 2-core machine).
describe('outlets generate', { timeout: 120_000 }, () => {
  it('generates N outlets; re-running the same seed updates them instead of duplicating', async () => {
    expect(ok(await cli('outlets', 'generate', '--publisher', String(pubA), '--count', '300', '--seed', '5'))).toEqual({ generated: 300 });
    expect(await outletCount(pubA)).toBe(300);
    const offers = await offerCount(pubA);
    expect(offers).toBeGreaterThan(300);
    expect(await count('SELECT count(*)::int AS n FROM offers f JOIN outlets o ON o.id = f.outlet_id WHERE o.publisher_id = $1 AND f.price <> f.publisher_price_cents + f.fee_cents', [pubA])).toBe(0);

    expect(ok(await cli('outlets', 'generate', '--publisher', String(pubA), '--count', '300', '--seed', '5'))).toEqual({ generated: 300 });
    expect(await outletCount(pubA)).toBe(300);
    expect(await offerCount(pubA)).toBe(offers);
    expect(await count('SELECT count(*)::int AS n FROM offers f JOIN outlets o ON o.id = f.outlet_id WHERE o.publisher_id = $1 AND NOT f.active', [pubA])).toBe(0);
  });

  it('another seed adds a new set; another publisher with the same seed does not collide; the seed defaults to 1', async () => {
    expect(ok(await cli('outlets', 'generate', '--publisher', String(pubA), '--count', '50', '--seed', '6'))).toEqual({ generated: 50 });
    expect(await outletCount(pubA)).toBe(350);
    expect(ok(await cli('outlets', 'generate', '--publisher', String(pubB), '--count', '300', '--seed', '5'))).toEqual({ generated: 300 });
    expect(await outletCount(pubB)).toBe(300);
    expect(ok(await cli('outlets', 'generate', '--publisher', String(pubB), '--count', '20'))).toEqual({ generated: 20 });
    expect(await count(`SELECT count(*)::int AS n FROM outlets WHERE publisher_id = $1 AND split_part(domain, '.', 1) LIKE $2`, [pubB, `%-${pubB}-1`])).toBe(20);
    expect(await outletCount(pubA)).toBe(350);
  });

  it('rejects an unknown publisher and out-of-range counts with one line and exit 1', async () => {
    const before = await count('SELECT count(*)::int AS n FROM outlets', []);
    expect(fails(await cli('outlets', 'generate', '--publisher', '999999', '--count', '10'))).toBe('--publisher: publisher 999999 not found');
    expect(fails(await cli('outlets', 'generate', '--publisher', String(pubA), '--count', '0'))).toMatch(/^--count: /);
    expect(fails(await cli('outlets', 'generate', '--publisher', String(pubA), '--count', '1000001'))).toMatch(/^--count: /);
    expect(fails(await cli('outlets', 'generate', '--publisher', String(pubA)))).toMatch(/^--count: /);
    expect(fails(await cli('outlets', 'generate', '--publisher', String(pubA), '--count', '5', '--seed', '-1'))).toMatch(/^--seed: /);
    expect(await count('SELECT count(*)::int AS n FROM outlets', [])).toBe(before);
  });
});

describe('outlets import', { timeout: 120_000 }, () => {
  let pub = 0;
  beforeAll(async () => {
    pub = (await createPublisher(database.pool, 'Importer')).id;
  });

  it('imports new outlets with fee-inclusive prices, then updates an existing domain', async () => {
    const first = jsonl([
      outlet('garden-one.example'),
      '',
      outlet('garden-two.example', { offers: [offer(), offer({ format: 'link_insertion', title: 'Link', publisher_price_cents: 4_999, min_words: 0, max_words: 80 })] }),
      '   ',
      outlet('Garden-Three.EXAMPLE', { type: 'news', country: 'de', language: 'de' }),
    ]);
    expect(ok(await cli('outlets', 'import', '--publisher', String(pub), '--file', first))).toEqual({ imported: 3, updated: 0 });
    expect(await outletCount(pub)).toBe(3);
    const stored = await database.pool.query(
      `SELECT o.domain, o.country, f.title, f.publisher_price_cents, f.fee_cents, f.price FROM offers f JOIN outlets o ON o.id = f.outlet_id
        WHERE o.publisher_id = $1 ORDER BY o.domain, f.title`,
      [pub],
    );
    expect(stored.rows).toEqual([
      { domain: 'garden-one.example', country: 'GB', title: 'Guest post', publisher_price_cents: 12_345, fee_cents: feeCents(12_345, FEE_RATE), price: 12_345 + feeCents(12_345, FEE_RATE) },
      { domain: 'garden-three.example', country: 'DE', title: 'Guest post', publisher_price_cents: 12_345, fee_cents: 1_852, price: 14_197 },
      { domain: 'garden-two.example', country: 'GB', title: 'Guest post', publisher_price_cents: 12_345, fee_cents: 1_852, price: 14_197 },
      { domain: 'garden-two.example', country: 'GB', title: 'Link', publisher_price_cents: 4_999, fee_cents: 750, price: 5_749 },
    ]);

    const second = jsonl([outlet('garden-one.example', { name: 'Garden One Renamed', offers: [offer({ publisher_price_cents: 20_000 })] }), outlet('garden-four.example')]);
    expect(ok(await cli('outlets', 'import', '--publisher', String(pub), '--file', second))).toEqual({ imported: 1, updated: 1 });
    expect(await outletCount(pub)).toBe(4);
    const updated = await database.pool.query(
      `SELECT o.name, f.publisher_price_cents, f.fee_cents, f.price, f.active FROM offers f JOIN outlets o ON o.id = f.outlet_id WHERE o.domain = 'garden-one.example'`,
    );
    expect(updated.rows).toEqual([{ name: 'Garden One Renamed', publisher_price_cents: 20_000, fee_cents: 3_000, price: 23_000, active: true }]);
  });

  it('an empty file imports nothing', async () => {
    expect(ok(await cli('outlets', 'import', '--publisher', String(pub), '--file', jsonl(['', ' '])))).toEqual({ imported: 0, updated: 0 });
  });

  describe('bad input: exit 1, one stderr line, nothing imported', () => {
    let before = 0;
    beforeAll(async () => {
      before = await count('SELECT count(*)::int AS n FROM outlets', []);
    });
    const unchanged = async () => expect(await count('SELECT count(*)::int AS n FROM outlets', [])).toBe(before);
    const importFile = (path: string) => cli('outlets', 'import', '--publisher', String(pub), '--file', path);

    it('a line that is not JSON', async () => {
      const path = jsonl([outlet('bad-json-1.example'), outlet('bad-json-2.example'), '{"name": "Broken",']);
      expect(fails(await importFile(path))).toMatch(/^line 3: invalid JSON/);
      await unchanged();
    });

    it('a schema error names the line and the field', async () => {
      const path = jsonl([outlet('schema-1.example'), '', outlet('schema-2.example', { offers: [offer(), offer({ format: 'banner' as 'guest_post', title: 'Banner' })] })]);
      expect(fails(await importFile(path))).toMatch(/^line 3: offers\.1\.format: /);
      const missing = jsonl([outlet('schema-3.example'), { ...outlet('schema-4.example'), description: undefined }]);
      expect(fails(await importFile(missing))).toMatch(/^line 2: description: /);
      const extra = jsonl([{ ...outlet('schema-5.example'), rating: 5 }]);
      expect(fails(await importFile(extra))).toMatch(/^line 1: .*rating/);
      const twice = jsonl([outlet('schema-6.example', { topics: ['travel', 'travel'] })]);
      expect(fails(await importFile(twice))).toBe('line 1: topics: must not repeat a topic');
      const spaced = jsonl([outlet('schema-7.example', { url: 'https://schema-7.example/a b' })]);
      expect(fails(await importFile(spaced))).toMatch(/^line 1: url: must not contain whitespace/);
      const notObject = jsonl(['[1, 2]']);
      expect(fails(await importFile(notObject))).toMatch(/^line 1: /);
      // PostgreSQL cannot store these: a NUL failed the import with the database's error, naming
      // no line, and a lone surrogate was stored as U+FFFD.
      const nul = jsonl([outlet('text-1.example'), outlet('text-2.example', { name: 'Bad\u0000name' })]);
      expect(fails(await importFile(nul))).toBe('line 2: name: must not contain NUL characters or unpaired UTF-16 surrogates');
      const surrogate = jsonl([outlet('text-3.example', { offers: [offer({ title: 'x\ud800' })] })]);
      expect(fails(await importFile(surrogate))).toBe('line 1: offers.0.title: must not contain NUL characters or unpaired UTF-16 surrogates');
      await unchanged();
    });

    it('a domain twice in one file', async () => {
      const path = jsonl([outlet('dup-1.example'), outlet('dup-2.example'), outlet('DUP-1.example')]);
      expect(fails(await importFile(path))).toBe('line 3: domain: dup-1.example is already on line 1');
      await unchanged();
    });

    it("another publisher's domain", async () => {
      const path = jsonl([outlet('foreign-ok.example'), outlet('garden-one.example')]);
      expect(fails(await cli('outlets', 'import', '--publisher', String(pubA), '--file', path))).toBe('line 2: domain: garden-one.example belongs to another publisher');
      await unchanged();
    });

    it('an unknown publisher', async () => {
      const path = jsonl([outlet('nobody.example')]);
      expect(fails(await cli('outlets', 'import', '--publisher', '999999', '--file', path))).toBe('--publisher: publisher 999999 not found');
      await unchanged();
    });

    it('a missing --file flag or file', async () => {
      expect(fails(await cli('outlets', 'import', '--publisher', String(pub)))).toMatch(/^--file: /);
      const path = join(dir, 'does-not-exist.jsonl');
      expect(fails(await importFile(path))).toBe(`--file: cannot read ${path}: no such file`);
      await unchanged();
    });
  });
});
