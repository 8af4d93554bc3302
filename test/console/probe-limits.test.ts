import { describe, expect, it } from 'vitest';
import { createUser } from '../../src/domain/users/user-service.js';
import { setupApp } from '../helpers/app.js';
import { consoleClient } from './helpers.js';

// The sign-in and sign-up limits under attack: probing which emails exist through the sign-up
// form, and many guesses sent at once.

const h = await setupApp({ SIGNUP: 'open', SIGNIN_FAILURES_PER_ACCOUNT: 3, SIGNIN_FAILURES_PER_ADDRESS: 1000, SIGNUPS_PER_ADDRESS_PER_HOUR: 2 });
const password = 'correct horse battery';

describe('Console sign-up and sign-in limits (probe) — security', () => {
  it('the sign-up form cannot be used without limit to learn which emails have an account', async () => {
    for (let i = 0; i < 5; i++) await createUser(h.database.pool, { email: `known${i}@example.com`, name: 'Known', password });
    const c = consoleClient(h, '10.8.0.1');
    const codes: number[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await c.post('/app/sign-up', { name: 'Prober', email: `known${i}@example.com`, password }, { from: '/app/sign-in' });
      codes.push(res.statusCode);
    }
    // Each answer "is already taken" tells the prober an account exists: after the address's
    // sign-up allowance, the form must answer 429 like any other sign-up.
    expect(codes.slice(0, 2)).toEqual([422, 422]);
    expect(codes.slice(2)).toEqual([429, 429, 429]);
  });

  it('sign-ups sent at once from one address make no more accounts than the allowance', async () => {
    await createUser(h.database.pool, { email: 'known-at-once@example.com', name: 'Known', password });
    const address = '10.8.2.1';
    const attempts = Array.from({ length: 12 }, () => consoleClient(h, address));
    const tokens = await Promise.all(attempts.map((c) => c.token('/app/sign-in')));
    // Two of them ask for an email that has an account: "already taken" counts too.
    const results = await Promise.all(
      attempts.map((c, i) =>
        c.post('/app/sign-up', { name: 'Burst', email: i < 2 ? 'known-at-once@example.com' : `burst${i}@example.com`, password }, { token: tokens[i]! }),
      ),
    );
    const codes = results.map((r) => r.statusCode);
    expect(codes.every((c) => c === 303 || c === 422 || c === 429)).toBe(true);
    // The allowance is two an hour: sign-ups and "already taken" answers together.
    expect(codes.filter((c) => c !== 429)).toHaveLength(2);
    const { rows } = await h.database.pool.query(`SELECT count(*)::int AS n FROM users WHERE email LIKE 'burst%'`);
    expect(rows[0].n).toBeLessThanOrEqual(2);
  });

  it('a sign-up refused for its fields does not use up the allowance', async () => {
    const c = consoleClient(h, '10.8.3.1');
    for (let i = 0; i < 3; i++) {
      const res = await c.post('/app/sign-up', { name: '', email: `fields${i}@example.com`, password }, { from: '/app/sign-in' });
      expect(res.statusCode).toBe(422);
    }
    const ok = await c.post('/app/sign-up', { name: 'Fields', email: 'fields-ok@example.com', password }, { from: '/app/sign-in' });
    expect(ok.statusCode).toBe(303);
  });

  it('wrong passwords sent at once get no more guesses than the per-account limit', async () => {
    const email = 'target@example.com';
    await createUser(h.database.pool, { email, name: 'Target', password });
    const attempts = Array.from({ length: 12 }, (_, i) => consoleClient(h, `10.8.1.${i + 1}`));
    const tokens = await Promise.all(attempts.map((c) => c.token('/app/sign-in')));
    const results = await Promise.all(attempts.map((c, i) => c.post('/app/sign-in', { email, password: `wrong guess ${i}` }, { token: tokens[i]! })));
    const guessed = results.filter((r) => r.statusCode === 401).length;
    expect(results.every((r) => r.statusCode === 401 || r.statusCode === 429)).toBe(true);
    // The account's three, then it is slowed: one attempt per wait, and the rest are refused.
    expect(guessed).toBeLessThanOrEqual(4);
  });

  it('wrong passwords from many addresses slow the account down, never lock it: one attempt per wait, the wait growing; the right password then signs in', async () => {
    const email = 'sprayed@example.com';
    await createUser(h.database.pool, { email, name: 'Sprayed', password });
    let n = 0;
    const from = (pw: string) => consoleClient(h, `10.8.4.${++n}`).post('/app/sign-in', { email, password: pw }, { from: '/app/sign-in' });
    // Each address stays under its own limit (3): only the account as a whole is over it.
    for (let i = 0; i < 3; i++) expect((await from(`wrong ${i}`)).statusCode).toBe(401);
    expect((await from('wrong 3')).statusCode).toBe(401);
    // Over the limit: the next attempt must wait its turn (1 s after the first failure over it), the right password too.
    const early = await from(password);
    expect(early.statusCode).toBe(429);
    expect(Number(early.headers['retry-after'])).toBe(1);
    expect(early.body).toContain('try again in');
    await new Promise((r) => setTimeout(r, 1100));
    expect((await from('wrong 4')).statusCode).toBe(401);
    // The wait doubled (2 s after the second failure over the limit).
    const later = await from(password);
    expect(later.statusCode).toBe(429);
    expect(Number(later.headers['retry-after'])).toBe(2);
    await new Promise((r) => setTimeout(r, 2100));
    // Its turn come, the right password from a new address signs in.
    expect((await from(password)).statusCode).toBe(303);
  });
});
