import { afterAll, describe, expect, it } from 'vitest';
import { rollKey } from '../../src/domain/keys/key-service.js';
import { tempDataDir } from '../helpers/child.js';
import { runCli } from '../helpers/cli.js';
import { createTestDatabase } from '../helpers/db.js';
import { workspaceWithKeys } from '../helpers/fixtures.js';

// `key create --needs-approval` and `key update --needs-approval true|false` (docs/cli.md): the
// flag is stored on the key, shown by /me's key.needs_approval, and refused on a key that cannot spend.
const database = await createTestDatabase({ max: 2 });
const env = { DATABASE_URL: database.url, DATA_DIR: tempDataDir() };
afterAll(() => database.drop(), 30_000);

const admin = async (...args: string[]) => {
  const r = await runCli(args, env);
  return { code: r.status, out: r.stdout ? JSON.parse(r.stdout) : undefined, err: r.stderr.trim() };
};
const flagOf = async (id: unknown) =>
  (await database.pool.query<{ needs_approval: boolean }>('SELECT needs_approval FROM api_keys WHERE id = $1', [id])).rows[0]!.needs_approval;

describe('needs_approval in the admin CLI', () => {
  it('key create --needs-approval stores it on a spending key; without it a key does not need approval', async () => {
    const ws = await workspaceWithKeys(database.pool);
    const asked = await admin('key', 'create', '--workspace', String(ws.workspaceId), '--name', 'Agent', '--can-place-orders', '--needs-approval');
    expect(asked.code, asked.err).toBe(0);
    expect(asked.out).toMatchObject({ can_place_orders: true, needs_approval: true });
    expect(await flagOf(asked.out.id)).toBe(true);
    const plain = await admin('key', 'create', '--workspace', String(ws.workspaceId), '--can-place-orders');
    expect(plain.out).toMatchObject({ can_place_orders: true, needs_approval: false });
    expect(await flagOf(plain.out.id)).toBe(false);
  });

  it('key update --needs-approval true|false turns it on and off, on the key and the keys it was rolled from', async () => {
    const ws = await workspaceWithKeys(database.pool);
    const id = String(ws.spendKeyId);
    const on = await admin('key', 'update', '--id', id, '--needs-approval', 'true');
    expect(on.code, on.err).toBe(0);
    expect(on.out).toMatchObject({ id: ws.spendKeyId, needs_approval: true, daily_limit_cents: null });
    expect(await flagOf(id)).toBe(true);
    // A roll keeps it: a new key must not spend without the approval the old one waited for.
    const rolled = await rollKey(database.pool, { workspaceId: ws.workspaceId }, ws.spendKeyId, 24);
    expect(await flagOf(rolled.id)).toBe(true);
    // Turned off on the new key, the old one (still in its grace) follows.
    expect((await admin('key', 'update', '--id', String(rolled.id), '--needs-approval', 'false')).code).toBe(0);
    expect([await flagOf(rolled.id), await flagOf(id)]).toEqual([false, false]);
    // With a limit in the same command, both change.
    expect((await admin('key', 'update', '--id', String(rolled.id), '--needs-approval', 'true', '--daily-limit-usd', '5')).out).toMatchObject({ needs_approval: true, daily_limit_cents: 500 });
  });

  it('refuses bad values and keys that cannot spend, with a line naming the flag, and changes nothing', async () => {
    const ws = await workspaceWithKeys(database.pool);
    const w = String(ws.workspaceId);
    const pub = await admin('publisher', 'create', '--name', 'Approval Press');
    const cases: [string[], RegExp][] = [
      [['key', 'update', '--id', String(ws.spendKeyId), '--needs-approval'], /^--needs-approval: must be true or false$/],
      [['key', 'update', '--id', String(ws.spendKeyId), '--needs-approval', 'yes'], /^--needs-approval: must be true or false$/],
      [['key', 'update', '--id', String(ws.spendKeyId), '--needs-approval', 'true', '--needs-approval', 'false'], /^--needs-approval: given more than once$/],
      [['key', 'update', '--id', String(ws.readKeyId), '--needs-approval', 'true'], /^--needs-approval: is for a spending key \(one that can place orders\)$/],
      [['key', 'update', '--id', '999999', '--needs-approval', 'true'], /^--id: key 999999 not found$/],
      [['key', 'update', '--id', String(ws.spendKeyId)], /^give at least one of .*--needs-approval$/],
      [['key', 'create', '--workspace', w, '--needs-approval'], /^--needs-approval: is for a spending key \(add --can-place-orders\)$/],
      [['key', 'create', '--workspace', w, '--can-place-orders', '--needs-approval', 'true'], /^--needs-approval: takes no value$/],
      [['key', 'create', '--publisher', String(pub.out.id), '--needs-approval'], /^--needs-approval: is for a spending key \(publisher keys cannot spend\)$/],
    ];
    const keys = async () => (await database.pool.query('SELECT id, needs_approval FROM api_keys ORDER BY id')).rows;
    const before = await keys();
    for (const [args, says] of cases) {
      const r = await admin(...args);
      expect(r.code, args.join(' ')).toBe(1);
      expect(r.err, args.join(' ')).toMatch(says);
    }
    expect(await keys()).toEqual(before);
  });

  it('key update --needs-approval false on a key that cannot spend is allowed: it is already so', async () => {
    const ws = await workspaceWithKeys(database.pool);
    const r = await admin('key', 'update', '--id', String(ws.readKeyId), '--needs-approval', 'false');
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatchObject({ needs_approval: false });
  });
});
