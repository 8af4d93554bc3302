import { afterAll, describe, expect, it } from 'vitest';
import { hashKey } from '../../src/domain/keys/key-format.js';
import { cleanupChildren, type CliResult, cliJson, runCli as runCliProcess, tempDataDir } from '../helpers/child.js';
import { runCli } from '../helpers/cli.js';
import { commandNames } from '../../src/cli/main.js';
import { synopses } from '../../src/cli/usage.js';
import { createTestDatabase } from '../helpers/db.js';

// The admin CLI (docs/cli.md) against a private database: one JSON object on stdout and
// exit 0, or one line on stderr and exit 1 with nothing on stdout.

const database = await createTestDatabase({ max: 2 });
const env = { DATABASE_URL: database.url, DATA_DIR: tempDataDir() };
afterAll(async () => {
  await cleanupChildren();
  await database.drop();
}, 30_000);

// In process for speed; the first test runs the real entry point as a process.
const admin = async (...args: string[]): Promise<CliResult> => {
  const r = await runCli(args, env);
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
};
const ok = async (...args: string[]) => cliJson(await admin(...args));
const keysOf = (o: object) => Object.keys(o).sort();

async function q<T = Record<string, unknown>>(sql: string, params: unknown[] = []): Promise<T[]> {
  return (await database.pool.query(sql, params)).rows as T[];
}

/** Runs commands a few at a time (2 cores; each run is a Node process). */
async function each<T>(items: T[], fn: (item: T) => Promise<void>, width = 3): Promise<void> {
  const queue = [...items];
  await Promise.all(
    Array.from({ length: width }, async () => {
      for (let item = queue.shift(); item !== undefined; item = queue.shift()) await fn(item);
    }),
  );
}

let workspaceId = 0;
let publisherId = 0;

// Generous limits: each command is a Node process, and a loaded 2-core machine makes that slow.
describe('the CLI process', () => {
  it('prints JSON and exits 0, or one stderr line and exits 1', async () => {
    const good = await runCliProcess(['workspace', 'create', '--name', 'Process check'], env);
    expect(good.code, good.stderr).toBe(0);
    expect(cliJson(good)).toMatchObject({ name: 'Process check', currency: 'USD', balance_cents: 0 });
    const bad = await runCliProcess(['workspace', 'create'], env);
    expect(bad.code).toBe(1);
    expect(bad.stdout).toBe('');
    expect(bad.stderr.trim().split('\n')).toHaveLength(1);
  });
});

describe('admin CLI commands', { timeout: 90_000 }, () => {
  it('workspace create with owner fields, a currency and a balance', async () => {
    const out = await ok(
      'workspace', 'create', '--name', 'Acme Media', '--currency', 'EUR', '--balance-cents', '250000',
      '--owner-first-name', 'Ada', '--owner-last-name', 'Lovelace', '--owner-email', 'ada@acme.example', '--username', 'ada_l',
    );
    expect(keysOf(out)).toEqual(['balance_cents', 'currency', 'id', 'name']);
    expect(out).toMatchObject({ id: expect.any(Number), name: 'Acme Media', currency: 'EUR', balance_cents: 250_000 });
    workspaceId = out.id as number;

    const [row] = await q('SELECT name, currency, owner_first_name, owner_last_name, email, username FROM workspaces WHERE id = $1', [workspaceId]);
    expect(row).toEqual({
      name: 'Acme Media', currency: 'EUR', owner_first_name: 'Ada', owner_last_name: 'Lovelace', email: 'ada@acme.example', username: 'ada_l',
    });
    const [acct] = await q<{ balance: number }>(`SELECT balance FROM ledger_accounts WHERE workspace_id = $1 AND kind = 'available'`, [workspaceId]);
    expect(acct!.balance).toBe(250_000);
  });

  it('workspace create with defaults: USD, no balance, owner derived from the name', async () => {
    const out = await ok('workspace', 'create', '--name', 'Plain Shop');
    expect(keysOf(out)).toEqual(['balance_cents', 'currency', 'id', 'name']);
    expect(out).toMatchObject({ name: 'Plain Shop', currency: 'USD', balance_cents: 0 });
    const [row] = await q<Record<string, string>>('SELECT owner_first_name, email, username, avatar_url, cover_url FROM workspaces WHERE id = $1', [out.id]);
    expect(row!.owner_first_name).toBe('Plain');
    expect(row!.email).toMatch(/@/);
    expect(row!.username).not.toBe('');
    // Interface B's account details show URLs: the owner's Gravatar unless given.
    expect(row!.avatar_url).toMatch(/^https:\/\/www\.gravatar\.com\/avatar\/[0-9a-f]{64}\?d=identicon&s=200$/);
    expect(row!.cover_url).toMatch(/^https:\/\/www\.gravatar\.com\/avatar\/[0-9a-f]{64}\?d=identicon&s=1200$/);
    const pictured = await ok('workspace', 'create', '--name', 'Pictured', '--avatar-url', 'https://cdn.example/a.png', '--cover-url', 'https://cdn.example/c.png');
    expect(await q('SELECT avatar_url, cover_url FROM workspaces WHERE id = $1', [pictured.id])).toEqual([
      { avatar_url: 'https://cdn.example/a.png', cover_url: 'https://cdn.example/c.png' },
    ]);
  });

  it('workspace top-up writes one balanced ledger transaction', async () => {
    const out = await ok('workspace', 'top-up', '--workspace', String(workspaceId), '--cents', '12345');
    expect(out).toEqual({ balance_cents: 262_345 });

    const txs = await q<{ id: number }>(`SELECT id FROM ledger_transactions WHERE workspace_id = $1 AND kind = 'top_up' ORDER BY id`, [workspaceId]);
    expect(txs).toHaveLength(2); // the opening balance and this top-up
    const entries = await q<{ amount: number; kind: string }>(
      `SELECT e.amount, a.kind FROM ledger_entries e JOIN ledger_accounts a ON a.id = e.account_id WHERE e.transaction_id = $1`,
      [txs[1]!.id],
    );
    expect(entries.reduce((s, e) => s + e.amount, 0)).toBe(0);
    expect(entries.find((e) => e.kind === 'available')!.amount).toBe(12_345);
    expect(entries.find((e) => e.kind === 'external')!.amount).toBe(-12_345);

    // The balance row equals the sum of its entries.
    const [acct] = await q<{ balance: number; sum: number }>(
      `SELECT a.balance, (SELECT coalesce(sum(amount), 0)::bigint FROM ledger_entries WHERE account_id = a.id) AS sum
         FROM ledger_accounts a WHERE a.workspace_id = $1 AND a.kind = 'available'`,
      [workspaceId],
    );
    expect(acct!.balance).toBe(262_345);
    expect(Number(acct!.sum)).toBe(262_345);
    // Every transaction in the database balances.
    const unbalanced = await q(`SELECT transaction_id FROM ledger_entries GROUP BY transaction_id HAVING sum(amount) <> 0`);
    expect(unbalanced).toEqual([]);
  });

  it('workspace rules sets and clears the approval rules', async () => {
    let out = await ok('workspace', 'rules', '--workspace', String(workspaceId), '--max-order-cents', '50000', '--auto-approve-drafts', 'true');
    expect(out).toEqual({ approval_rules: { max_order_cents: 50_000, approval_above_cents: null, auto_approve_drafts: true } });
    out = await ok('workspace', 'rules', '--workspace', String(workspaceId), '--max-order-cents', 'none');
    expect(out).toEqual({ approval_rules: { max_order_cents: null, approval_above_cents: null, auto_approve_drafts: true } });
    out = await ok('workspace', 'rules', '--workspace', String(workspaceId), '--auto-approve-drafts', 'false');
    expect(out).toEqual({ approval_rules: { max_order_cents: null, approval_above_cents: null, auto_approve_drafts: false } });
    const [row] = await q('SELECT max_order_cents, auto_approve_drafts FROM workspaces WHERE id = $1', [workspaceId]);
    expect(row).toEqual({ max_order_cents: null, auto_approve_drafts: false });
  });

  it('workspace rules sets and clears the approval threshold, leaving the other rules as they are', async () => {
    const ws = String(workspaceId);
    await ok('workspace', 'rules', '--workspace', ws, '--max-order-cents', '90000');
    let out = await ok('workspace', 'rules', '--workspace', ws, '--approval-above-cents', '20000');
    expect(out).toEqual({ approval_rules: { max_order_cents: 90_000, approval_above_cents: 20_000, auto_approve_drafts: false } });
    // 0: every order of a key waits for a person.
    out = await ok('workspace', 'rules', '--workspace', ws, '--approval-above-cents', '0');
    expect(out).toMatchObject({ approval_rules: { approval_above_cents: 0 } });
    out = await ok('workspace', 'rules', '--workspace', ws, '--approval-above-cents', 'none', '--max-order-cents', 'none');
    expect(out).toEqual({ approval_rules: { max_order_cents: null, approval_above_cents: null, auto_approve_drafts: false } });
    expect(await q('SELECT approval_above_cents FROM workspaces WHERE id = $1', [workspaceId])).toEqual([{ approval_above_cents: null }]);
  });

  it('key create for a workspace: spending and read-only; only the hash is stored', async () => {
    const spend = await ok('key', 'create', '--workspace', String(workspaceId), '--name', 'Bot key', '--can-place-orders');
    expect(keysOf(spend)).toEqual(['can_place_orders', 'id', 'key', 'needs_approval', 'prefix']);
    expect(spend.can_place_orders).toBe(true);
    expect(spend.key).toMatch(/^mk_[A-Za-z0-9]{32}$/);
    expect((spend.key as string).startsWith(spend.prefix as string)).toBe(true);

    const read = await ok('key', 'create', '--workspace', String(workspaceId));
    expect(keysOf(read)).toEqual(['can_place_orders', 'id', 'key', 'needs_approval', 'prefix']);
    expect(read.can_place_orders).toBe(false);

    const rows = await q<Record<string, unknown>>('SELECT * FROM api_keys WHERE id = ANY($1) ORDER BY id', [[spend.id, read.id]]);
    expect(rows.map((r) => [r.workspace_id, r.name, r.can_place_orders, r.key_hash])).toEqual([
      [workspaceId, 'Bot key', true, hashKey(spend.key as string)],
      [workspaceId, expect.any(String), false, hashKey(read.key as string)],
    ]);
    // The raw key appears in no column.
    for (const r of rows) expect(JSON.stringify(r)).not.toContain((r.id === spend.id ? spend.key : read.key) as string);
  });

  it('publisher create, then key create --publisher', async () => {
    const pub = await ok('publisher', 'create', '--name', 'Northwind Press');
    expect(keysOf(pub)).toEqual(['id', 'key']);
    expect(pub.key).toMatch(/^mk_[A-Za-z0-9]{32}$/);
    publisherId = pub.id as number;
    const [p] = await q('SELECT name FROM publishers WHERE id = $1', [publisherId]);
    expect(p).toEqual({ name: 'Northwind Press' });
    const [own] = await q('SELECT publisher_id, workspace_id FROM api_keys WHERE key_hash = $1', [hashKey(pub.key as string)]);
    expect(own).toEqual({ publisher_id: publisherId, workspace_id: null });

    const key = await ok('key', 'create', '--publisher', String(publisherId), '--name', 'CMS');
    expect(keysOf(key)).toEqual(['id', 'key', 'prefix']);
    const [row] = await q('SELECT publisher_id, name, can_place_orders FROM api_keys WHERE id = $1', [key.id]);
    expect(row).toEqual({ publisher_id: publisherId, name: 'CMS', can_place_orders: false });
  });

  it('key revoke sets revoked_at', async () => {
    const key = await ok('key', 'create', '--workspace', String(workspaceId));
    const out = await ok('key', 'revoke', '--id', String(key.id));
    expect(out).toEqual({ id: key.id, revoked: true });
    const [row] = await q<{ revoked_at: Date | null }>('SELECT revoked_at FROM api_keys WHERE id = $1', [key.id]);
    expect(row!.revoked_at).toBeInstanceOf(Date);
  });

  it('project create', async () => {
    const out = await ok('project', 'create', '--workspace', String(workspaceId), '--name', 'Autumn campaign');
    expect(keysOf(out)).toEqual(['id', 'name']);
    expect(out.name).toBe('Autumn campaign');
    const [row] = await q('SELECT workspace_id, name FROM projects WHERE id = $1', [out.id]);
    expect(row).toEqual({ workspace_id: workspaceId, name: 'Autumn campaign' });
  });

  it('brand-kit create with repeated --anchor-text', async () => {
    const out = await ok(
      'brand-kit', 'create', '--workspace', String(workspaceId), '--name', 'Acme brand', '--website', 'https://acme.example',
      '--description', 'Widgets for everyone', '--tone', 'warm', '--anchor-text', 'acme widgets', '--anchor-text', 'Acme',
    );
    expect(keysOf(out)).toEqual(['id', 'name']);
    const [row] = await q('SELECT workspace_id, name, website, description, tone, default_anchor_texts FROM brand_kits WHERE id = $1', [out.id]);
    expect(row).toEqual({
      workspace_id: workspaceId, name: 'Acme brand', website: 'https://acme.example', description: 'Widgets for everyone', tone: 'warm',
      default_anchor_texts: ['acme widgets', 'Acme'],
    });
  });

  it('fx set updates the rate', async () => {
    let out = await ok('fx', 'set', '--currency', 'EUR', '--per-usd', '0.95');
    expect(out).toEqual({ currency: 'EUR', per_usd: 0.95 });
    expect(await q(`SELECT per_usd::float8 AS r FROM fx_rates WHERE currency = 'EUR'`)).toEqual([{ r: 0.95 }]);
    out = await ok('fx', 'set', '--currency', 'EUR', '--per-usd', '0.92');
    expect(out).toEqual({ currency: 'EUR', per_usd: 0.92 });
    expect(await q(`SELECT per_usd::float8 AS r FROM fx_rates WHERE currency = 'EUR'`)).toEqual([{ r: 0.92 }]);
  });

  it('fx list prints the table a --currency must come from, and an unknown currency points at it', async () => {
    const list = (await ok('fx', 'list')) as unknown as { currency: string; per_usd: number }[];
    expect(list.map((r) => r.currency)).toEqual([...list.map((r) => r.currency)].sort());
    expect(list).toContainEqual({ currency: 'USD', per_usd: 1 });
    expect(list).toContainEqual({ currency: 'EUR', per_usd: 0.92 });
    const r = await runCli(['workspace', 'create', '--name', 'X', '--currency', 'XYZ'], env);
    expect(r.stderr.trim()).toBe('--currency: unknown currency XYZ; `fx list` shows the FX table, `fx set` adds to it');
  });
});

describe('admin CLI help', () => {
  it('has a synopsis for every command and none for a command that does not exist', () => {
    expect(Object.keys(synopses).sort()).toEqual(commandNames().sort());
  });

  it('help lists every command with its flags; <command> --help shows one and runs nothing', async () => {
    for (const word of ['help', '--help', '-h']) {
      const r = await admin(word);
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/^usage: npm run -s admin -- <command> \[--flags\]/);
      expect(r.stdout).toContain('workspace top-up --workspace ID --cents N');
      expect(r.stdout).toContain('orders sweep');
    }
    const revoked = async () => Number((await q<{ n: number }>('SELECT count(*)::int AS n FROM api_keys WHERE revoked_at IS NOT NULL'))[0]!.n);
    const before = await revoked();
    const one = await admin('key', 'revoke', '--id', '1', '--help');
    expect(one).toMatchObject({ code: 0, stdout: 'usage: npm run -s admin -- key revoke --id ID\n', stderr: '' });
    expect(await revoked()).toBe(before);
  });
});

describe('admin CLI bad input', { timeout: 180_000 }, () => {
  it('prints one line on stderr, nothing on stdout, exits 1, and changes nothing', async () => {
    const ws = String(workspaceId);
    const cases: { args: string[]; says: RegExp }[] = [
      { args: [], says: /usage/ },
      { args: ['nope', 'thing'], says: /unknown command/ },
      { args: ['workspace', 'create'], says: /--name/ },
      { args: ['workspace', 'create', '--name', 'X', '--bogus', '1'], says: /bogus/ },
      { args: ['workspace', 'create', '--name', 'X', '--currency', 'XYZ'], says: /currency/i },
      { args: ['workspace', 'create', 'stray'], says: /stray/ },
      { args: ['workspace', 'top-up', '--workspace', ws, '--cents', '-5'], says: /--cents/ },
      { args: ['workspace', 'top-up', '--workspace', ws, '--cents', '0'], says: /--cents/ },
      { args: ['workspace', 'top-up', '--workspace', 'abc', '--cents', '5'], says: /--workspace/ },
      { args: ['workspace', 'top-up', '--workspace', '999999', '--cents', '5'], says: /^--workspace: workspace 999999 not found$/m },
      { args: ['workspace', 'rules', '--workspace', ws], says: /./ },
      { args: ['workspace', 'rules', '--workspace', ws, '--auto-approve-drafts', 'maybe'], says: /--auto-approve-drafts/ },
      { args: ['key', 'create'], says: /--workspace or --publisher/ },
      { args: ['key', 'create', '--workspace', ws, '--publisher', String(publisherId)], says: /--workspace or --publisher/ },
      { args: ['key', 'create', '--workspace', '999999'], says: /^--workspace: workspace 999999 not found$/m },
      { args: ['key', 'create', '--publisher', String(publisherId), '--can-place-orders'], says: /--can-place-orders/ },
      { args: ['key', 'revoke', '--id', 'abc'], says: /--id/ },
      { args: ['key', 'revoke', '--id', '999999'], says: /^--id: key 999999 not found$/m },
      { args: ['project', 'create', '--workspace', '999999', '--name', 'P'], says: /^--workspace: workspace 999999 not found$/m },
      { args: ['brand-kit', 'create', '--workspace', ws, '--name', 'B', '--website', 'not a url'], says: /--website/ },
      { args: ['fx', 'set', '--currency', 'EURO', '--per-usd', '1'], says: /--currency/ },
      { args: ['fx', 'set', '--currency', 'EUR', '--per-usd', 'cheap'], says: /--per-usd/ },
      { args: ['publisher', 'create'], says: /--name/ },
      { args: ['workspace', 'create', '--name', 'X', '--avatar-url', 'not a url'], says: /^--avatar-url: must be an http\(s\) URL$/m },
      // A numeric flag without its value is refused, never read as 1.
      { args: ['key', 'revoke', '--id'], says: /^--id: needs a value$/m },
      { args: ['workspace', 'top-up', '--workspace', ws, '--cents'], says: /^--cents: needs a value$/m },
      { args: ['workspace', 'top-up', '--workspace', '--cents', '5'], says: /^--workspace: needs a value$/m },
      { args: ['workspace', 'rules', '--workspace', ws, '--max-order-cents'], says: /^--max-order-cents: needs a value$/m },
      { args: ['workspace', 'rules', '--workspace', ws, '--max-order-cents', 'lots'], says: /^--max-order-cents: must be none or a whole number$/m },
      { args: ['workspace', 'rules', '--workspace', ws, '--approval-above-cents'], says: /^--approval-above-cents: needs a value$/m },
      { args: ['workspace', 'rules', '--workspace', ws, '--approval-above-cents', 'lots'], says: /^--approval-above-cents: must be none or a whole number$/m },
      { args: ['workspace', 'rules', '--workspace', ws, '--approval-above-cents', '-1'], says: /^--approval-above-cents: must be none or at least 0$/m },
      { args: ['workspace', 'rules', '--workspace', ws, '--approval-above-cents', '12.50'], says: /^--approval-above-cents: must be none or a whole number$/m },
      { args: ['workspace', 'rules', '--workspace', ws, '--approval-above-cents', '1', '--approval-above-cents', '2'], says: /^--approval-above-cents: given more than once$/m },
      { args: ['key', 'create', '--workspace', '--name', 'x'], says: /^--workspace: needs a value$/m },
      { args: ['fx', 'set', '--currency', 'EUR', '--per-usd'], says: /^--per-usd: needs a value$/m },
      { args: ['brand-kit', 'create', '--workspace', ws, '--name', 'B', '--anchor-text'], says: /^--anchor-text: needs a value$/m },
      // Each anchor text as an order's may be; a repeated flag's own problems are named as such.
      { args: ['brand-kit', 'create', '--workspace', ws, '--name', 'B', '--anchor-text', 'a', '--anchor-text'], says: /^--anchor-text: needs a value$/m },
      { args: ['brand-kit', 'create', '--workspace', ws, '--name', 'B', '--anchor-text', ''], says: /^--anchor-text: must not be empty$/m },
      { args: ['brand-kit', 'create', '--workspace', ws, '--name', 'B', '--anchor-text', 'x'.repeat(201)], says: /^--anchor-text: must be at most 200 characters$/m },
      { args: ['brand-kit', 'create', '--workspace', ws, '--name', 'B', '--anchor-text', 'a', '--anchor-text', 'a'], says: /^--anchor-text: is given twice with the same value$/m },
      { args: ['brand-kit', 'create', '--workspace', ws, '--name', 'B', ...Array.from({ length: 51 }, (_, i) => ['--anchor-text', `a${i}`]).flat()], says: /^--anchor-text: may be given at most 50 times$/m },
      // Ids the database cannot hold are refused before any query, and no SQL is ever shown.
      { args: ['key', 'revoke', '--id', '99999999999'], says: /^--id: must be at most 2,147,483,647$/m },
      { args: ['key', 'create', '--workspace', '99999999999'], says: /^--workspace: must be at most/m },
      { args: ['project', 'create', '--workspace', '99999999999', '--name', 'P'], says: /^--workspace: must be at most/m },
      { args: ['workspace', 'top-up', '--workspace', ws], says: /^--cents: is required$/m },
      { args: ['workspace', 'top-up', '--workspace', ws, '--cents', '1', '--cents', '2'], says: /^--cents: given more than once$/m },
      { args: ['key', 'create', '--workspace', ws, '--can-place-orders', '--can-place-orders'], says: /^--can-place-orders: given more than once$/m },
      { args: ['workspace', 'top-up', '--workspace', ws, '--cents', '1e3'], says: /^--cents: must be a whole number$/m },
      { args: ['workspace', 'top-up', '--workspace', ws, '--cents', '0x10'], says: /^--cents: must be a whole number$/m },
      { args: ['workspace', 'top-up', '--workspace', ws, '--cents', '-5'], says: /^--cents: must be at least 1$/m },
      { args: ['workspace', 'top-up', '--workspace', ws, '--cents', '9007199254740992'], says: /^--cents: must be at most 9,007,199,254,740,991$/m },
      { args: ['workspace', 'top-up', '--workspace', ws, '--cents', '9007199254740991'], says: /^--cents: would take the workspace's balance beyond/m },
      // The service already holds money, so an opening balance of the largest amount would overflow what it holds.
      { args: ['workspace', 'create', '--name', 'Big', '--balance-cents', '9007199254740991'], says: /^--balance-cents: would take the money held by the service beyond/m },
      { args: ['orders', 'sweep', '--now', '1'], says: /^--now: unknown flag; it takes no flags$/m },
      { args: ['key', 'revoke', '--id', '1', '--force'], says: /^--force: unknown flag; it takes --id$/m },
      { args: ['brand-kit', 'create', '--workspace', ws, '--name', 'B', '--website', 'ftp://x.example'], says: /^--website: must be an http\(s\) URL$/m },
      { args: ['brand-kit', 'create', '--workspace', ws, '--name', 'B', '--website', 'javascript:alert(1)'], says: /^--website: must be an http\(s\) URL$/m },
      { args: ['brand-kit', 'create', '--workspace', ws, '--name', 'B', '--website', 'https://x.example/a b'], says: /^--website: must not contain whitespace/m },
      { args: ['project', 'create', '--workspace', ws, '--name', 'x'.repeat(201)], says: /^--name: must be at most 200 characters$/m },
      { args: ['fx', 'set', '--currency', 'EUR', '--per-usd', '0x10'], says: /^--per-usd: must be a decimal number/m },
      { args: ['fx', 'set', '--currency', 'EUR', '--per-usd', '0.0000000001'], says: /^--per-usd: must be at least/m },
      { args: ['workspace'], says: /^unknown command "workspace"; workspace commands: workspace create, workspace rules, workspace top-up/m },
    ];
    const counts = () =>
      q(`SELECT (SELECT count(*) FROM workspaces) w, (SELECT count(*) FROM api_keys) k, (SELECT count(*) FROM ledger_entries) e,
                (SELECT count(*) FROM projects) p, (SELECT count(*) FROM brand_kits) b, (SELECT count(*) FROM publishers) pu,
                (SELECT count(*) FROM api_keys WHERE revoked_at IS NOT NULL) r`);
    const before = await counts();
    const rules = await q('SELECT max_order_cents, approval_above_cents, auto_approve_drafts FROM workspaces WHERE id = $1', [workspaceId]);
    const fx = await q('SELECT currency, per_usd FROM fx_rates ORDER BY currency');

    const failures: string[] = [];
    await each(cases, async ({ args, says }) => {
      const r: CliResult = await admin(...args);
      const problem =
        r.code !== 1 ? `exit ${r.code}` :
        r.stdout !== '' ? 'wrote to stdout' :
        !/^[^\n]+\n$/.test(r.stderr) ? 'stderr is not exactly one line' :
        !says.test(r.stderr) ? `stderr does not match ${says}` :
        /\n\s+at |\.ts:\d+|\b(?:select|insert|update|delete)\b|Failed query/i.test(r.stderr) ? 'stderr leaks internals' : undefined;
      if (problem) failures.push(`admin ${args.join(' ')}: ${problem}\n  stdout: ${r.stdout}\n  stderr: ${r.stderr}`);
    });
    expect(failures.join('\n')).toBe('');

    expect(await counts()).toEqual(before);
    expect(await q('SELECT max_order_cents, approval_above_cents, auto_approve_drafts FROM workspaces WHERE id = $1', [workspaceId])).toEqual(rules);
    expect(await q('SELECT currency, per_usd FROM fx_rates ORDER BY currency')).toEqual(fx);
  });
});
