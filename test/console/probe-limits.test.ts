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

  it('wrong passwords sent at once get no more guesses than the per-account limit', async () => {
    const email = 'target@example.com';
    await createUser(h.database.pool, { email, name: 'Target', password });
    const attempts = Array.from({ length: 12 }, (_, i) => consoleClient(h, `10.8.1.${i + 1}`));
    const tokens = await Promise.all(attempts.map((c) => c.token('/app/sign-in')));
    const results = await Promise.all(
      attempts.map((c, i) =>
        h.app.inject({
          method: 'POST',
          url: '/app/sign-in',
          headers: { cookie: [...c.jar].map(([k, v]) => `${k}=${v}`).join('; '), 'content-type': 'application/x-www-form-urlencoded' },
          payload: new URLSearchParams({ email, password: `wrong guess ${i}`, _csrf: tokens[i]! }).toString(),
          remoteAddress: `10.8.1.${i + 1}`,
        }),
      ),
    );
    const guessed = results.filter((r) => r.statusCode === 401).length;
    expect(results.every((r) => r.statusCode === 401 || r.statusCode === 429)).toBe(true);
    expect(guessed).toBeLessThanOrEqual(3);
  });
});
