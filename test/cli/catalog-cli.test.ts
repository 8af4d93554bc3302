import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importItems } from '../../src/domain/catalog/catalog-writes.js';
import { DomainError } from '../../src/domain/errors.js';
import { runCli } from '../helpers/cli.js';
import { createTestDatabase } from '../helpers/db.js';
import { workspaceWithKeys } from '../helpers/fixtures.js';
import { itemsOfEachKind } from '../http/catalog/fixtures.js';

// items import and purchase create|generate|download|refund (docs/cli.md), as real
// processes: one JSON object on stdout and exit 0, or one line on stderr and exit 1.

const database = await createTestDatabase({ max: 2 });
afterAll(() => database.drop(), 30_000);

const env = { DATABASE_URL: database.url };
const dir = mkdtempSync(join(tmpdir(), 'catalog-cli-'));
let files = 0;
function file(content: unknown): string {
  const path = join(dir, `items-${++files}.json`);
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content));
  return path;
}

async function ok(...args: string[]): Promise<Record<string, unknown>> {
  const r = await runCli(args, env);
  expect(r.stderr, args.join(' ')).toBe('');
  expect(r.status).toBe(0);
  return JSON.parse(r.stdout);
}

async function fails(args: string[], message: RegExp): Promise<void> {
  const r = await runCli(args, env);
  expect(r.status, r.stdout).toBe(1);
  expect(r.stdout).toBe('');
  expect(r.stderr.trim().split('\n')).toHaveLength(1);
  expect(r.stderr.trim()).toMatch(message);
}

async function q<T = Record<string, unknown>>(sql: string, params: unknown[] = []): Promise<T[]> {
  return (await database.pool.query(sql, params)).rows as T[];
}

/** The one line `items import` prints for this content (the CLI's rendering of a DomainError). */
async function importError(content: unknown): Promise<string> {
  try {
    await importItems(database.pool, ws.workspaceId, content);
  } catch (err) {
    if (!(err instanceof DomainError)) throw err;
    const [field, messages] = Object.entries(err.details.errors as Record<string, string[]>)[0]!;
    return `${field}: ${messages.join('; ')}`;
  }
  throw new Error('imported');
}

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const ws = await workspaceWithKeys(database.pool, { currency: 'GBP' });
const countItems = async () => Number((await q<{ n: string }>('SELECT count(*) AS n FROM items WHERE workspace_id = $1', [ws.workspaceId]))[0]!.n);

describe('items import', { timeout: 60_000 }, () => {
  it('reads a relative --file from the folder npm was run in (INIT_CWD), not the package root', async () => {
    const ws = await workspaceWithKeys(database.pool);
    const path = file([]);
    const r = await runCli(['items', 'import', '--workspace', String(ws.workspaceId), '--file', basename(path)], { ...env, INIT_CWD: dir });
    expect(r.stderr).toBe('');
    expect(JSON.parse(r.stdout)).toEqual({ imported: 0 });
  });

  it('imports a JSON array of items of every kind', async () => {
    expect(await ok('items', 'import', '--workspace', String(ws.workspaceId), '--file', file(itemsOfEachKind('cli')))).toEqual({ imported: 5 });
    const rows = await q(
      `SELECT kind, name, price_regular_cents, price_extended_cents, currency, preview_image_url, preview_video_url, preview_audio_url,
         screenshots, published_at FROM items WHERE workspace_id = $1 ORDER BY id`,
      [ws.workspaceId],
    );
    expect(rows.map((r) => r.kind)).toEqual(['software', 'graphics', 'video', 'audio', 'other']);
    expect(rows[0]).toMatchObject({ price_regular_cents: 1999, price_extended_cents: 9900, currency: 'GBP', published_at: new Date('2026-03-01T09:30:00Z') });
    expect(rows[1]).toMatchObject({ price_regular_cents: 550, price_extended_cents: 5525, preview_video_url: null, preview_audio_url: null });
    expect(rows[3]).toMatchObject({ preview_image_url: null, preview_video_url: null, preview_audio_url: 'https://cdn.example/cli/3/preview.mp3' });
    // `currency` given: kept; absent: the workspace's currency.
    expect(rows[4]).toMatchObject({ currency: 'EUR', price_regular_cents: 0, price_extended_cents: 100, screenshots: [] });
    expect(await ok('items', 'import', '--workspace', String(ws.workspaceId), '--file', file([]))).toEqual({ imported: 0 });
  });

  it('validates everything first: the first bad item is named by index and field, and nothing is imported', async () => {
    const before = await countItems();
    const good = itemsOfEachKind('bad');
    const w = ['items', 'import', '--workspace', String(ws.workspaceId), '--file'];
    const cases: [unknown, RegExp][] = [
      [{ items: good }, /must hold a JSON array of items/],
      [[...good, { ...good[0], id: 7 }], /^item 6: unknown field id$/m],
      [[good[0], { ...good[3], media: { ...good[3]!.media, preview_image: 'https://cdn.example/x.png' } }], /^item 2: media\.preview_image: is not allowed for audio items$/m],
      [[{ ...good[2], media: { thumbnail: 'https://cdn.example/t.png', preview_image: 'https://cdn.example/p.png' } }], /^item 1: media\.preview_video: is required for video items$/m],
      [[{ ...good[0], media: { ...good[0]!.media, preview_video: 'https://cdn.example/v.mp4' } }], /^item 1: media\.preview_video: is not allowed for software items$/m],
      [[{ ...good[1], media: { thumbnail: 'https://cdn.example/t.png' } }], /^item 1: media\.preview_image: is required for graphics items$/m],
      [[good[0], good[1], { ...good[1], version: '1.2' }], /^item 3: version: must be major\.minor\.patch/m],
      [[{ ...good[0], price: { regular: 19.999, extended: 20 } }], /^item 1: price\.regular: has more decimal places than GBP allows$/m],
      [[{ ...good[0], price: { regular: '19.99', extended: 20 } }], /^item 1: price\.regular: must be a decimal number$/m],
      [[{ ...good[0], price: { regular: -1, extended: 20 } }], /^item 1: price\.regular: must not be negative$/m],
      [[{ ...good[0], currency: 'XYZ' }], /^item 1: currency: unknown currency XYZ/m],
      [[{ ...good[0], kind: 'ebook' }], /^item 1: kind: must be one of/m],
      [[{ ...good[0], demo_link: 'javascript:alert(1)' }], /^item 1: demo_link: must be an http\(s\) URL$/m],
      [[{ ...good[0], published_at: '9999-12-31T23:59:59-05:00' }], /^item 1: published_at: must fall between 1970 and 9999 in UTC$/m],
      [[{ ...good[0], name: undefined }], /^item 1: name: must be a string$/m],
      [[{ ...good[0], published_at: 'yesterday' }], /^item 1: published_at: must be an ISO 8601 timestamp/m],
      [['not an item'], /^item 1: /m],
      // PostgreSQL cannot store these: the database's own error named no item and no field.
      [[good[0], { ...good[0], name: 'a\u0000b' }], /^item 2: name: must not contain NUL characters or unpaired UTF-16 surrogates$/m],
      [[{ ...good[0], description: 'x\ud800' }], /^item 1: description: must not contain NUL characters/m],
    ];
    // The checks run in the domain call the command makes; each is run there (a process per case
    // would take minutes on a loaded machine) and rendered as the CLI renders it, then a few go
    // through the real command to show the one-line, exit-1 plumbing.
    for (const [content, message] of cases) expect(await importError(content), JSON.stringify(content).slice(0, 200)).toMatch(message);
    await fails([...w, file(cases[2]![0])], cases[2]![1]);
    await fails([...w, file(cases[0]![0])], cases[0]![1]);
    await fails([...w, file('[{"name": ')], /^--file: invalid JSON/);
    await fails([...w, join(dir, 'missing.json')], /^--file: cannot read .*: no such file$/);
    await fails(['items', 'import', '--workspace', '999999', '--file', file(good)], /^--workspace: workspace 999999 not found$/);
    await fails(['items', 'import', '--file', file(good)], /^--workspace: /);
    expect(await countItems()).toBe(before);
  });
});

describe('purchase create | generate | download | refund', { timeout: 120_000 }, () => {
  let software = 0;
  let audio = 0;
  beforeAll(async () => {
    // The items imported above (software first, audio fourth).
    const ids = (await q<{ id: number }>('SELECT id FROM items WHERE workspace_id = $1 ORDER BY id', [ws.workspaceId])).map((r) => r.id);
    software = ids[0]!;
    audio = ids[3]!;
  });

  it('create: a UUID v4 code, the price of the license in the item currency, 6 months of support by default', async () => {
    const out = await ok('purchase', 'create', '--item', String(software));
    expect(Object.keys(out)).toEqual(['purchase_code']);
    expect(out.purchase_code).toMatch(UUID_V4);
    const [row] = await q<Record<string, unknown>>(
      `SELECT item_id, workspace_id, license, price_cents, currency, downloaded, refunded_at,
         supported_until = purchased_at + interval '6 months' AS six_months FROM purchases WHERE code = $1`,
      [out.purchase_code],
    );
    expect(row).toEqual({
      item_id: software, workspace_id: ws.workspaceId, license: 'regular', price_cents: 1999, currency: 'GBP', downloaded: false, refunded_at: null, six_months: true,
    });
  });

  it('create: --license extended, --support-months N, --no-support', async () => {
    const ext = await ok('purchase', 'create', '--item', String(audio), '--license', 'extended', '--no-support');
    const [e] = await q('SELECT license, price_cents, supported_until FROM purchases WHERE code = $1', [ext.purchase_code]);
    expect(e).toEqual({ license: 'extended', price_cents: 7500, supported_until: null });
    const year = await ok('purchase', 'create', '--item', String(audio), '--support-months', '12');
    const [y] = await q("SELECT supported_until = purchased_at + interval '12 months' AS ok FROM purchases WHERE code = $1", [year.purchase_code]);
    expect(y!.ok).toBe(true);
  });

  it('create: bad input is one line naming the flag', async () => {
    await fails(['purchase', 'create', '--item', '999999'], /^--item: item 999999 not found$/);
    await fails(['purchase', 'create', '--item', 'abc'], /^--item: must be a whole number$/);
    await fails(['purchase', 'create', '--item', String(software), '--license', 'premium'], /^--license: must be regular or extended$/);
    await fails(['purchase', 'create', '--item', String(software), '--support-months', '0'], /^--support-months: must be at least 1$/);
    await fails(['purchase', 'create', '--item', String(software), '--support-months', '6', '--no-support'], /at most one of --support-months or --no-support/);
  });

  it('generate: bulk purchases with random codes and seeded attributes', async () => {
    const started = Date.now();
    expect(await ok('purchase', 'generate', '--item', String(software), '--count', '20000', '--seed', '7')).toEqual({ generated: 20_000 });
    const elapsed = Date.now() - started;
    const [stats] = await q<Record<string, string>>(
      `SELECT count(*) AS n, count(DISTINCT code) AS codes,
         count(*) FILTER (WHERE license = 'extended') AS extended,
         count(*) FILTER (WHERE license = 'extended' AND price_cents = 9900) AS extended_priced,
         count(*) FILTER (WHERE license = 'regular' AND price_cents = 1999) AS regular_priced,
         count(*) FILTER (WHERE supported_until IS NULL) AS unsupported,
         count(*) FILTER (WHERE supported_until < now()) AS support_over,
         count(*) FILTER (WHERE downloaded) AS downloaded,
         count(*) FILTER (WHERE code::text !~ '^[0-9a-f]{8}-[0-9a-f]{4}-4') AS not_v4,
         min(purchased_at) > now() - interval '731 days' AS recent, max(purchased_at) <= now() AS past,
         bool_and(currency = 'GBP' AND workspace_id = ${ws.workspaceId}) AS seller
       FROM purchases WHERE item_id = $1 AND id > (SELECT max(id) - 20000 FROM purchases)`,
      [software],
    );
    expect(Number(stats!.n)).toBe(20_000);
    expect(Number(stats!.codes)).toBe(20_000);
    expect(Number(stats!.not_v4)).toBe(0);
    expect(Number(stats!.extended)).toBeGreaterThan(1_500);
    expect(Number(stats!.extended)).toBeLessThan(2_500);
    expect(Number(stats!.extended_priced) + Number(stats!.regular_priced)).toBe(20_000);
    expect(Number(stats!.unsupported)).toBeGreaterThan(3_000);
    expect(Number(stats!.support_over)).toBeGreaterThan(1_000);
    expect(Number(stats!.downloaded)).toBeGreaterThan(10_000);
    expect(stats).toMatchObject({ recent: true, past: true, seller: true });
    console.info(`purchase generate: 20,000 in ${elapsed} ms`);
  });

  it('generate: the same seed gives the same attributes, never the same codes', async () => {
    const attrs = async () =>
      q<{ license: string; downloaded: boolean; supported: boolean }>(
        `SELECT license, downloaded, supported_until IS NOT NULL AS supported FROM purchases WHERE item_id = $1 ORDER BY id`,
        [audio],
      );
    await ok('purchase', 'generate', '--item', String(audio), '--count', '50', '--seed', '3');
    const first = (await attrs()).slice(-50);
    await ok('purchase', 'generate', '--item', String(audio), '--count', '50', '--seed', '3');
    const second = (await attrs()).slice(-50);
    expect(second).toEqual(first);
    const [codes] = await q<{ n: string }>('SELECT count(DISTINCT code) AS n FROM purchases WHERE item_id = $1', [audio]);
    expect(Number(codes!.n)).toBe((await attrs()).length);
  });

  it('generate: bad input', async () => {
    await fails(['purchase', 'generate', '--item', String(software), '--count', '0'], /^--count: must be at least 1$/);
    await fails(['purchase', 'generate', '--item', String(software), '--count', '1000001'], /^--count: must be at most 1,000,000$/);
    await fails(['purchase', 'generate', '--item', String(software)], /^--count: /);
    await fails(['purchase', 'generate', '--item', '999999', '--count', '5'], /^--item: item 999999 not found$/);
  });

  it('download and refund', async () => {
    const { purchase_code: code } = await ok('purchase', 'create', '--item', String(software));
    expect(await ok('purchase', 'download', '--code', String(code))).toEqual({ purchase_code: code, downloaded: true });
    expect(await ok('purchase', 'download', '--code', String(code).toUpperCase())).toEqual({ purchase_code: code, downloaded: true });
    expect((await q('SELECT downloaded, refunded_at FROM purchases WHERE code = $1', [code]))[0]).toEqual({ downloaded: true, refunded_at: null });
    expect(await ok('purchase', 'refund', '--code', String(code))).toEqual({ purchase_code: code, refunded: true });
    const [first] = await q<{ refunded_at: Date }>('SELECT refunded_at FROM purchases WHERE code = $1', [code]);
    expect(first!.refunded_at).toBeInstanceOf(Date);
    // Refunding again changes nothing; downloading a refunded purchase is refused.
    expect(await ok('purchase', 'refund', '--code', String(code))).toEqual({ purchase_code: code, refunded: true });
    expect((await q<{ refunded_at: Date }>('SELECT refunded_at FROM purchases WHERE code = $1', [code]))[0]!.refunded_at).toEqual(first!.refunded_at);
    await fails(['purchase', 'download', '--code', String(code)], new RegExp(`^--code: purchase ${code} was refunded; it cannot be downloaded$`));
    await fails(['purchase', 'download', '--code', '00000000-0000-4000-8000-000000000000'], /^--code: purchase 00000000-0000-4000-8000-000000000000 not found$/);
    await fails(['purchase', 'refund', '--code', 'nope'], /^--code: must be a purchase code \(a UUID\)$/);
    await fails(['purchase', 'refund'], /^--code: /);
  });
});
