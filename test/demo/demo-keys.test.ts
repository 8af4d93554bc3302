import { describe, expect, it } from 'vitest';
import { DEMO_KEYS_UNSHOWN, DEMO_USER, demoKeysToShow, describeDemo, markDemoShown } from '../../src/demo/seed.js';
import { listMembers, membershipsOf } from '../../src/domain/users/memberships.js';
import { verifyCredentials } from '../../src/domain/users/user-service.js';
import { setupApp } from '../helpers/app.js';

// Demo keys exist only as hashes, so keys that were seeded but never printed are useless to
// everyone: the next start replaces them and prints the replacements, once.

const h = await setupApp();

async function meStatus(key: string): Promise<number> {
  return (await h.app.inject({ method: 'GET', url: '/api/v1/me', headers: { authorization: `Bearer ${key}` } })).statusCode;
}

describe('demo keys to show on start', () => {
  it('seeds on an empty database, replaces keys that were never shown, and stops once they are', async () => {
    const first = await demoKeysToShow(h.database, 0.2);
    expect(first).toBeDefined();
    expect(await meStatus(first!.readOnlyKey)).toBe(200);

    // The start that seeded died before printing: the next one revokes those keys and issues new ones.
    const second = await demoKeysToShow(h.database, 0.2);
    h.clock.advance(10_000); // past the key cache (revocation takes effect within 5 s)
    expect(second).toBeDefined();
    expect(second!.workspaceId).toBe(first!.workspaceId);
    expect(second!.publisherId).toBe(first!.publisherId);
    expect(second!.purchaseCode).toBe(first!.purchaseCode);
    for (const key of [first!.readOnlyKey, first!.spendingKey, first!.publisherKey]) expect(await meStatus(key)).toBe(401);
    expect(await meStatus(second!.readOnlyKey)).toBe(200);
    expect(await meStatus(second!.spendingKey)).toBe(200);
    expect(await meStatus(second!.publisherKey)).toBe(403); // a real publisher key, refused by the buyer API

    // Nothing stores a raw key: only hashes and ids.
    const { rows } = await h.database.pool.query<{ dump: string }>(
      `SELECT (SELECT coalesce(string_agg(a::text, ' '), '') FROM api_keys a) || (SELECT coalesce(string_agg(s::text, ' '), '') FROM app_secrets s) AS dump`,
    );
    for (const key of [second!.readOnlyKey, second!.spendingKey, second!.publisherKey]) expect(rows[0]!.dump).not.toContain(key);

    // The demo user: owner of the demo workspace (the demo seller too) and publisher; a password
    // never shown is replaced like the keys, and the one printed is the one that signs in.
    expect(first!.user!.email).toBe(DEMO_USER.email);
    expect(second!.user!.password).not.toBe(first!.user!.password);
    expect(await verifyCredentials(h.database.pool, DEMO_USER.email, first!.user!.password)).toBeNull();
    const user = await verifyCredentials(h.database.pool, DEMO_USER.email, second!.user!.password);
    expect(user).not.toBeNull();
    expect((await membershipsOf(h.database.pool, user!.id)).map((m) => [m.kind, m.id, m.role])).toEqual([
      ['workspace', second!.workspaceId, 'owner'],
      ['publisher', second!.publisherId, 'owner'],
    ]);
    expect((await listMembers(h.database.pool, { workspaceId: second!.workspaceId })).map((m) => m.email)).toEqual([DEMO_USER.email]);
    const printed = describeDemo(second!, 'http://127.0.0.1:3000');
    expect(printed).toContain(`http://127.0.0.1:3000/app`);
    expect(printed).toContain(DEMO_USER.email);
    expect(printed).toContain(second!.user!.password);
    const users = await h.database.pool.query<{ dump: string }>(`SELECT string_agg(u::text, ' ') AS dump FROM users u`);
    expect(users.rows[0]!.dump).not.toContain(second!.user!.password);

    await markDemoShown(h.database.pool);
    expect(await demoKeysToShow(h.database, 0.2)).toBeUndefined();
    expect(await meStatus(second!.readOnlyKey)).toBe(200);
    const left = await h.database.pool.query('SELECT 1 FROM app_secrets WHERE name = $1', [DEMO_KEYS_UNSHOWN]);
    expect(left.rowCount).toBe(0);
    const workspaces = await h.database.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM workspaces');
    expect(workspaces.rows[0]!.n).toBe(1);
  });
});
