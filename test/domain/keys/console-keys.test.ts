import { afterAll, describe, expect, it } from 'vitest';
import { KeyResolver } from '../../../src/domain/keys/key-resolver.js';
import { createKey, listKeys, revokeKey, rollKey } from '../../../src/domain/keys/key-service.js';
import { createPublisher } from '../../../src/domain/publishers/publisher-service.js';
import { ManualClock } from '../../helpers/clock.js';
import { createTestDatabase } from '../../helpers/db.js';
import { workspaceWithKeys } from '../../helpers/fixtures.js';

const database = await createTestDatabase();
afterAll(() => database.drop());
const db = database.pool;
const HOUR = 3_600_000;

// The database's clock and the test clock differ (the test clock is set where a test wants it):
// every expiry below is written and read with the test clock only.
describe('keys for the console', () => {
  it("revoking another tenant's key is not found and leaves it working", async () => {
    const a = await workspaceWithKeys(db);
    const b = await workspaceWithKeys(db);
    await expect(revokeKey(db, b.spendKeyId, { workspaceId: a.workspaceId })).rejects.toMatchObject({ code: 'not_found' });
    await expect(revokeKey(db, 999_999, { workspaceId: a.workspaceId })).rejects.toMatchObject({ code: 'not_found' });
    const pub = await createPublisher(db, 'Keys publisher');
    await expect(revokeKey(db, b.readKeyId, { publisherId: pub.id })).rejects.toMatchObject({ code: 'not_found' });
    expect((await listKeys(db, { workspaceId: b.workspaceId })).every((k) => k.state === 'active')).toBe(true);
    expect(await revokeKey(db, b.spendKeyId, { workspaceId: b.workspaceId })).toEqual({ id: b.spendKeyId, revoked: true });
    expect(await revokeKey(db, b.spendKeyId, { workspaceId: b.workspaceId })).toEqual({ id: b.spendKeyId, revoked: true });
  });

  it("rolling another tenant's key, a revoked or an expired key is refused; grace outside 0–72 h names the field", async () => {
    const clock = new ManualClock();
    const a = await workspaceWithKeys(db);
    const b = await workspaceWithKeys(db);
    await expect(rollKey(db, { workspaceId: a.workspaceId }, b.readKeyId, 1, clock)).rejects.toMatchObject({ code: 'not_found' });
    for (const grace of [-1, 73, 1.5, Number.NaN]) {
      await expect(rollKey(db, { workspaceId: a.workspaceId }, a.readKeyId, grace, clock)).rejects.toMatchObject({
        code: 'invalid_input',
        details: { errors: { grace_hours: expect.any(Array) } },
      });
    }
    await revokeKey(db, a.readKeyId);
    await expect(rollKey(db, { workspaceId: a.workspaceId }, a.readKeyId, 1, clock)).rejects.toMatchObject({ details: { reason: 'key_inactive' } });
    await rollKey(db, { workspaceId: a.workspaceId }, a.spendKeyId, 0, clock);
    await expect(rollKey(db, { workspaceId: a.workspaceId }, a.spendKeyId, 1, clock)).rejects.toMatchObject({ details: { reason: 'key_inactive' } });
    await expect(createKey(db, { workspaceId: a.workspaceId, expiresAt: new Date(clock.now()) }, clock)).rejects.toMatchObject({
      details: { errors: { expires_at: expect.any(Array) } },
    });
  });

  it('a rolled key works until the end of its grace, not a millisecond after, even when cached', async () => {
    const clock = new ManualClock();
    const resolver = new KeyResolver(database.pool, clock);
    const ws = await workspaceWithKeys(db);
    // Cached before the roll: the cache (5 s) does not know the expiry yet.
    expect(await resolver.resolve(ws.spendKey)).toMatchObject({ keyId: ws.spendKeyId });
    const rolled = await rollKey(db, { workspaceId: ws.workspaceId }, ws.spendKeyId, 2, clock);
    expect(rolled).toMatchObject({ can_place_orders: true, rolled: { id: ws.spendKeyId } });
    expect(rolled.rolled.expires_at.getTime()).toBe(clock.now() + 2 * HOUR);
    expect(await resolver.resolve(rolled.key)).toMatchObject({ keyId: rolled.id, canPlaceOrders: true, workspaceId: ws.workspaceId });

    clock.advance(2 * HOUR - 10_000);
    expect(await resolver.resolve(ws.spendKey)).toMatchObject({ keyId: ws.spendKeyId }); // re-read: now cached with its expiry
    clock.advance(10_000 - 1);
    expect(await resolver.resolve(ws.spendKey)).toMatchObject({ keyId: ws.spendKeyId }); // last millisecond, from the cache
    clock.advance(1);
    expect(await resolver.resolve(ws.spendKey)).toBeNull();
    expect(resolver.peek(ws.spendKey)).toBeNull();
    expect(await resolver.resolve(rolled.key)).toMatchObject({ keyId: rolled.id });
  });

  it('a roll with 0 hours of grace ends the old key at once (once its cache entry is gone)', async () => {
    const clock = new ManualClock();
    const resolver = new KeyResolver(database.pool, clock);
    const ws = await workspaceWithKeys(db);
    const rolled = await rollKey(db, { workspaceId: ws.workspaceId }, ws.readKeyId, 0, clock);
    expect(await resolver.resolve(ws.readKey)).toBeNull();
    expect(await resolver.resolve(rolled.key)).toMatchObject({ canPlaceOrders: false, name: 'Read-only key' });
  });

  it('a 72 h grace is the most; an old key that already expires sooner keeps its earlier expiry', async () => {
    const clock = new ManualClock();
    const ws = await workspaceWithKeys(db);
    const r72 = await rollKey(db, { workspaceId: ws.workspaceId }, ws.readKeyId, 72, clock);
    expect(r72.rolled.expires_at.getTime()).toBe(clock.now() + 72 * HOUR);
    const soon = await createKey(db, { workspaceId: ws.workspaceId, name: 'Soon', expiresAt: new Date(clock.now() + HOUR) }, clock);
    const r = await rollKey(db, { workspaceId: ws.workspaceId }, soon.id, 24, clock);
    expect(r.rolled.expires_at.getTime()).toBe(clock.now() + HOUR);
  });

  it('lists keys with their state: active, expiring (within 7 days), expired, revoked', async () => {
    const clock = new ManualClock();
    const ws = await workspaceWithKeys(db);
    const later = await createKey(db, { workspaceId: ws.workspaceId, name: 'Later', expiresAt: new Date(clock.now() + 30 * 24 * HOUR) }, clock);
    const rolled = await rollKey(db, { workspaceId: ws.workspaceId }, ws.spendKeyId, 1, clock);
    await revokeKey(db, ws.readKeyId, { workspaceId: ws.workspaceId });
    const states = () => listKeys(db, { workspaceId: ws.workspaceId }, clock).then((ks) => Object.fromEntries(ks.map((k) => [k.id, k.state])));
    expect(await states()).toEqual({
      [ws.readKeyId]: 'revoked',
      [ws.spendKeyId]: 'expiring',
      [later.id]: 'active',
      [rolled.id]: 'active',
    });
    clock.advance(HOUR);
    expect((await states())[ws.spendKeyId]).toBe('expired');
    const listed = (await listKeys(db, { workspaceId: ws.workspaceId }, clock)).find((k) => k.id === rolled.id)!;
    expect(listed).toMatchObject({ name: 'Spending key', can_place_orders: true, last_used_at: null, expires_at: null, revoked_at: null });
    expect(listed.prefix).toBe(rolled.prefix);
    expect(listed).not.toHaveProperty('key_hash');
    expect(listed).not.toHaveProperty('keyHash');
  });
});
