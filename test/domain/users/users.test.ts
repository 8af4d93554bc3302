import { afterAll, describe, expect, it } from 'vitest';
import { defaultConfig } from '../../../src/config.js';
import { hashPassword, OWASP_PASSWORD_COST, setPasswordCost, verifyAgainstDummy, verifyPassword } from '../../../src/domain/users/passwords.js';
import { createUser, findUserByEmail, recordSignIn, setPassword, verifyCredentials } from '../../../src/domain/users/user-service.js';
import { setupApp } from '../../helpers/app.js';
import { createTestDatabase } from '../../helpers/db.js';
import { ManualClock } from '../../helpers/clock.js';
import { TEST_PASSWORD_COST } from '../../helpers/password-cost.js';

const database = await createTestDatabase();
afterAll(() => database.drop());
const db = database.pool;

describe('users', () => {
  it('refuses an email already taken in another case, naming the field', async () => {
    await createUser(db, { email: 'Ana@Example.com', name: 'Ana', password: 'correct horse battery' });
    const err = await createUser(db, { email: '  ana@EXAMPLE.com ', name: 'Other Ana', password: 'another password' }).catch((e) => e);
    expect(err).toMatchObject({ code: 'conflict', details: { reason: 'email_taken', errors: { email: [expect.any(String)] } } });
    const { rows } = await database.pool.query(`SELECT count(*)::int AS n FROM users WHERE lower(email) = 'ana@example.com'`);
    expect(rows[0].n).toBe(1);
  });

  it('two concurrent sign-ups with one address in two cases: one user, one email_taken', async () => {
    const results = await Promise.allSettled([
      createUser(db, { email: 'race@example.com', name: 'A', password: 'password one' }),
      createUser(db, { email: 'RACE@example.com', name: 'B', password: 'password two' }),
    ]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const rejected = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
    expect(rejected.reason).toMatchObject({ code: 'conflict', details: { reason: 'email_taken' } });
  });

  it('refuses bad input naming each field', async () => {
    const err = await createUser(db, { email: 'not-an-email', name: ' ', password: 'short' }).catch((e) => e);
    expect(err.code).toBe('invalid_input');
    expect(Object.keys(err.details.errors).sort()).toEqual(['email', 'name', 'password']);
  });

  it('hashes with argon2id and the OWASP parameters by default; the hash is not the password', async () => {
    // The configuration's default is OWASP's setting (the tests run at the lowest cost).
    expect(defaultConfig()).toMatchObject({ PASSWORD_HASH_MEMORY_KIB: 19_456, PASSWORD_HASH_PASSES: 2 });
    expect(OWASP_PASSWORD_COST).toEqual({ memoryKiB: 19_456, passes: 2 });
    setPasswordCost(OWASP_PASSWORD_COST);
    const user = await createUser(db, { email: 'hash@example.com', name: 'Hash', password: 'a long passphrase' }).finally(() => setPasswordCost(TEST_PASSWORD_COST));
    const { rows } = await database.pool.query('SELECT password_hash FROM users WHERE id = $1', [user.id]);
    expect(rows[0].password_hash).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    expect(rows[0].password_hash).not.toContain('a long passphrase');
    expect(await hashPassword('a long passphrase')).toMatch(/^\$argon2id\$v=19\$m=8,t=1,p=1\$/);
    expect(await verifyPassword(await hashPassword('x'.repeat(8)), 'y'.repeat(8))).toBe(false);
    expect(await verifyPassword('not a hash', 'whatever1')).toBe(false);
  });

  it('a password hashed at one cost still verifies after the cost changes, either way (the hash names its cost)', async () => {
    const cheap = await createUser(db, { email: 'cheap@example.com', name: 'Cheap', password: 'hashed cheaply' });
    setPasswordCost(OWASP_PASSWORD_COST);
    try {
      const owasp = await createUser(db, { email: 'owasp@example.com', name: 'Owasp', password: 'hashed at owasp' });
      expect((await verifyCredentials(db, 'cheap@example.com', 'hashed cheaply'))?.id).toBe(cheap.id);
      expect(await verifyCredentials(db, 'cheap@example.com', 'hashed at owasp')).toBeNull();
      // The unknown address's check costs what a password hashed now costs.
      expect(await verifyAgainstDummy('anything at all')).toBe(false);
      setPasswordCost(TEST_PASSWORD_COST);
      expect((await verifyCredentials(db, 'owasp@example.com', 'hashed at owasp'))?.id).toBe(owasp.id);
      expect(await verifyCredentials(db, 'owasp@example.com', 'hashed cheaply')).toBeNull();
    } finally {
      setPasswordCost(TEST_PASSWORD_COST);
    }
  });

  it("an app hashes at its configuration's cost", async () => {
    try {
      await setupApp({ PASSWORD_HASH_MEMORY_KIB: 16, PASSWORD_HASH_PASSES: 3 }, { database });
      expect(await hashPassword('a long passphrase')).toMatch(/^\$argon2id\$v=19\$m=16,t=3,p=1\$/);
    } finally {
      setPasswordCost(TEST_PASSWORD_COST);
    }
  });

  it('verifyCredentials: wrong password and unknown email are both null; right one, any case, is the user', async () => {
    const user = await createUser(db, { email: 'login@example.com', name: 'Login', password: 'right password' });
    expect(await verifyCredentials(db, 'login@example.com', 'wrong password')).toBeNull();
    expect(await verifyCredentials(db, 'nobody@example.com', 'right password')).toBeNull();
    expect(await verifyCredentials(db, 'login@example.com', '')).toBeNull();
    expect(await verifyCredentials(db, 'x'.repeat(300), 'right password')).toBeNull();
    const found = await verifyCredentials(db, ' LOGIN@example.com', 'right password');
    expect(found).toMatchObject({ id: user.id, email: 'login@example.com', name: 'Login' });
    expect(found).not.toHaveProperty('passwordHash');
  });

  it('setPassword ends every session of the user in the same transaction, and only theirs', async () => {
    const a = await createUser(db, { email: 'sessions-a@example.com', name: 'A', password: 'first password' });
    const b = await createUser(db, { email: 'sessions-b@example.com', name: 'B', password: 'first password' });
    for (const [u, id] of [[a.id, 'a1'], [a.id, 'a2'], [b.id, 'b1']] as const) {
      await database.pool.query(`INSERT INTO sessions (id_hash, user_id, expires_at) VALUES ($1, $2, now() + interval '30 days')`, [id, u]);
    }
    await expect(setPassword(db, a.id, 'short')).rejects.toMatchObject({ code: 'invalid_input', details: { errors: { password: expect.any(Array) } } });
    expect((await database.pool.query('SELECT count(*)::int AS n FROM sessions WHERE user_id = $1', [a.id])).rows[0].n).toBe(2);

    expect(await setPassword(db, a.id, 'second password')).toEqual({ sessionsEnded: 2 });
    expect((await database.pool.query('SELECT id_hash FROM sessions ORDER BY id_hash')).rows.map((r) => r.id_hash)).toEqual(['b1']);
    expect(await verifyCredentials(db, 'sessions-a@example.com', 'first password')).toBeNull();
    expect(await verifyCredentials(db, 'sessions-a@example.com', 'second password')).toMatchObject({ id: a.id });
    await expect(setPassword(db, 999_999, 'second password')).rejects.toMatchObject({ code: 'not_found' });
  });

  it('recordSignIn stamps the sign-in time', async () => {
    const user = await createUser(db, { email: 'stamp@example.com', name: 'Stamp', password: 'stamp password' });
    expect(user.lastSignInAt).toBeNull();
    const clock = new ManualClock();
    await recordSignIn(db, user.id, clock);
    expect((await findUserByEmail(db, 'stamp@example.com'))!.lastSignInAt!.getTime()).toBe(clock.now());
  });
});
