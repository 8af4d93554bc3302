import { afterAll, describe, expect, it } from 'vitest';
import { tempDataDir } from '../helpers/child.js';
import { runCli } from '../helpers/cli.js';
import { createTestDatabase } from '../helpers/db.js';
import { workspaceWithKeys } from '../helpers/fixtures.js';

// `key create` and `key update` with a spending key's budget and expiry (docs/cli.md, docs/budgets.md).
const database = await createTestDatabase({ max: 2 });
const env = { DATABASE_URL: database.url, DATA_DIR: tempDataDir() };
afterAll(() => database.drop(), 30_000);

const admin = async (...args: string[]) => {
  const r = await runCli(args, env);
  return { code: r.status, out: r.stdout ? JSON.parse(r.stdout) : undefined, err: r.stderr.trim() };
};
const row = async (id: unknown) =>
  (
    await database.pool.query(
      'SELECT order_limit_cents::int AS o, daily_limit_cents::int AS d, monthly_limit_cents::int AS m, expires_at FROM api_keys WHERE id = $1',
      [id],
    )
  ).rows[0];

describe('key budgets in the admin CLI', () => {
  it('key create with limits and an expiry date; dollars round half up to the cent', async () => {
    const ws = await workspaceWithKeys(database.pool);
    const r = await admin('key', 'create', '--workspace', String(ws.workspaceId), '--can-place-orders', '--order-limit-usd', '200', '--daily-limit-usd', '500.005', '--monthly-limit-usd', '5000', '--expires', '2099-01-31');
    expect(r.code, r.err).toBe(0);
    expect(await row(r.out.id)).toEqual({ o: 20_000, d: 50_001, m: 500_000, expires_at: new Date('2099-01-31T00:00:00Z') });
  });

  it('key update changes, clears and refuses', async () => {
    const ws = await workspaceWithKeys(database.pool);
    const id = String(ws.spendKeyId);
    expect((await admin('key', 'update', '--id', id, '--daily-limit-usd', '12.345')).code).toBe(0);
    expect(await row(id)).toMatchObject({ o: null, d: 1235, m: null, expires_at: null });
    expect((await admin('key', 'update', '--id', id, '--daily-limit-usd', 'none', '--monthly-limit-usd', '0', '--expires', '2099-02-01T12:00:00Z')).code).toBe(0);
    expect(await row(id)).toEqual({ o: null, d: null, m: 0, expires_at: new Date('2099-02-01T12:00:00Z') });
    expect((await admin('key', 'update', '--id', id, '--expires', 'none')).code).toBe(0);
    expect((await row(id)).expires_at).toBeNull();

    const none = await admin('key', 'update', '--id', id);
    expect(none.code).toBe(1);
    expect(none.err).toMatch(/give at least one of --order-limit-usd/);
    expect((await admin('key', 'update', '--id', id, '--daily-limit-usd', '-5')).err).toMatch(/^--daily-limit-usd: must be none or an amount/);
    expect((await admin('key', 'update', '--id', id, '--daily-limit-usd', '1e3')).err).toMatch(/^--daily-limit-usd:/);
    expect((await admin('key', 'update', '--id', id, '--expires', '2001-01-01')).err).toMatch(/^--expires: must be in the future/);
    expect((await admin('key', 'update', '--id', id, '--expires', 'tomorrow')).err).toMatch(/^--expires: must be none, a date/);
    expect((await admin('key', 'update', '--id', '999999', '--daily-limit-usd', '5')).err).toBe('--id: key 999999 not found');
    // A read-only key has no budget.
    expect((await admin('key', 'update', '--id', String(ws.readKeyId), '--daily-limit-usd', '5')).code).toBe(1);
    expect((await admin('key', 'create', '--workspace', String(ws.workspaceId), '--daily-limit-usd', '5')).err).toMatch(/add --can-place-orders/);
  });
});
