import { describe, expect, it } from 'vitest';
import { setupApp } from '../helpers/app.js';
import { outboxLink } from '../helpers/mail.js';
import { addMember } from '../../src/domain/users/memberships.js';
import { createUser, setPassword } from '../../src/domain/users/user-service.js';
import { createPublisher } from '../../src/domain/publishers/publisher-service.js';
import { consoleClient, seenSecrets, signUpConfirmed } from './helpers.js';

const h = await setupApp({ LOG_LEVEL: 'debug', SIGNUP: 'open', SIGNIN_FAILURES_PER_ACCOUNT: 3, SIGNIN_FAILURES_PER_ADDRESS: 1000, SIGNUPS_PER_ADDRESS_PER_HOUR: 3 });
const password = 'correct horse battery';

let n = 0;
/** Signs a new person up from their own address; answers the client and their workspace's console path. */
async function signedUp(name = 'Ana Lima') {
  n++;
  const c = consoleClient(h, `10.0.0.${n}`);
  const home = await signUpConfirmed(h, c, { name, email: `person${n}@example.com`, password });
  return { c, home, email: `person${n}@example.com` };
}

const keys: string[] = [];
const keyIn = (body: string) => {
  const key = /id="new-key"[^>]*value="([^"]+)"/.exec(body)?.[1];
  if (key) keys.push(key);
  return key;
};
const me = (key: string) => h.app.inject({ url: '/api/v1/me', headers: { authorization: `Bearer ${key}` } });

describe('Console pages (/app/…): sign-up, sign-in, keys, API access — happy', () => {
  it('sign-in: a CSP without inline scripts, labelled fields, the way back in (Forgot password?)', async () => {
    const res = await consoleClient(h).get('/app/sign-in');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/text\/html/);
    const csp = String(res.headers['content-security-policy']);
    expect(csp).toMatch(/script-src 'self'/);
    expect(csp).not.toMatch(/unsafe-inline/);
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.body).toContain('<label for="f-email">Email</label>');
    expect(res.body).toContain('<a href="/app/forgot-password">Forgot password?</a>');
    expect(res.body).not.toMatch(/<script>/);
  });

  it('/docs keeps working and the API answers without the console headers', async () => {
    const docs = await h.app.inject({ url: '/docs' });
    expect([200, 302]).toContain(docs.statusCode);
    expect(String(docs.headers['content-security-policy'] ?? (await h.app.inject({ url: '/docs/' })).headers['content-security-policy'])).toMatch(/script-src 'self'/);
    const api = await h.app.inject({ url: '/api/v1/me' });
    expect(api.statusCode).toBe(401);
    expect(api.headers['content-security-policy']).toBeUndefined();
    const openapi = await h.app.inject({ url: '/openapi.json' });
    expect(openapi.statusCode).toBe(200);
    expect(Object.keys(openapi.json().paths).filter((p) => p.startsWith('/app'))).toEqual([]);
  });

  it('sign-up signs in with a fresh HttpOnly SameSite=Lax session cookie, and lands on the overview once the address is confirmed', async () => {
    const c = consoleClient(h, '10.9.0.1');
    c.jar.set('mk_session', 'A'.repeat(43));
    const res = await c.post('/app/sign-up', { name: 'Bo', email: 'bo@example.com', password });
    expect(res.statusCode).toBe(303);
    const cookie = ([] as string[]).concat(res.headers['set-cookie'] ?? []).find((l) => l.startsWith('mk_session='))!;
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Lax/);
    expect(cookie).toMatch(/Path=\/app/);
    expect(cookie).not.toMatch(/Secure/);
    expect(c.jar.get('mk_session')).not.toBe('A'.repeat(43));
    expect(res.headers.location).toBe('/app/check-email');
    const link = await outboxLink(h.database.pool, 'bo@example.com', 'verify_email');
    await c.post('/app/verify-email', { token: new URLSearchParams(link.split('?')[1]).get('token')! }, { from: link });
    const overview = await c.get((await c.get('/app')).headers.location!);
    expect(overview.statusCode).toBe(200);
    expect(overview.body).toContain('$0.00');
  });

  it('keys: create with expiry, no-store, revoke through a confirmation page, roll with a grace', async () => {
    const { c, home } = await signedUp();
    const base = `${home}/settings/api-keys`;
    const created = await c.post(base, { name: 'Bot', can_place_orders: '1', expires_on: new Date(h.clock.now() + 30 * 86_400_000).toISOString().slice(0, 10) });
    expect(created.statusCode).toBe(200);
    expect(created.headers['cache-control']).toBe('no-store');
    const key = keyIn(created.body)!;
    expect(created.body).toContain(`curl -s http://localhost:80/api/v1/me -H &quot;Authorization: Bearer ${key}&quot;`);
    expect((await me(key)).json().data.key.can_place_orders).toBe(true);
    const list = await c.get(base);
    expect(list.body).not.toContain(key);
    const id = /\/settings\/api-keys\/(\d+)\/revoke/.exec(list.body)![1]!;
    // Rolling: the old key works for the chosen hours, the new one at once.
    const rolled = await c.post(`${base}/${id}/roll`, { grace_hours: '2' }, { from: `${base}/${id}/roll` });
    expect(rolled.statusCode).toBe(200);
    const next = keyIn(rolled.body)!;
    expect((await me(next)).statusCode).toBe(200);
    expect((await me(key)).statusCode).toBe(200);
    h.clock.advance(2 * 3_600_000 + 1000);
    expect((await me(key)).statusCode).toBe(401);
    expect((await me(next)).statusCode).toBe(200);
    // Revoking: a confirmation page whose button is "Revoke", then 401 within the cache's 5 s.
    const nextId = /\/settings\/api-keys\/(\d+)\/revoke/.exec((await c.get(base)).body)![1]!;
    const confirm = await c.get(`${base}/${nextId}/revoke`);
    expect(confirm.body).toContain('<button type="submit" class="danger">Revoke</button>');
    expect((await c.post(`${base}/${nextId}/revoke`, {})).statusCode).toBe(200);
    h.clock.advance(6000);
    expect((await me(next)).statusCode).toBe(401);
    // Bad input names its field.
    const bad = await c.post(base, { name: '', expires_on: '0' });
    expect(bad.statusCode).toBe(422);
    expect(bad.body).toContain('Key name must not be empty');
    expect(bad.body).toContain('Expires on (optional) must be a date such as 2027-01-31');
    expect((await c.post(`${base}/${id}/roll`, { grace_hours: '1' }, { from: base })).statusCode).toBe(409);
    const other = keyIn((await c.post(base, { name: 'Other' })).body)!;
    const otherId = /\/settings\/api-keys\/(\d+)\/revoke/.exec((await c.get(base)).body)![1]!;
    const tooLong = await c.post(`${base}/${otherId}/roll`, { grace_hours: '73' }, { from: base });
    expect(tooLong.statusCode).toBe(422);
    expect(tooLong.body).toContain('from 0 to 72');
    expect((await me(other)).statusCode).toBe(200);
  });

  it('API access: a read-only key that answers Interface B', async () => {
    const { c, home } = await signedUp();
    const res = await c.post(`${home}/settings/api-access`, { name: 'Shop' });
    expect(res.statusCode).toBe(200);
    const key = keyIn(res.body)!;
    expect(res.body).toContain(`/api/account/details?api_key=${key}`);
    const details = await h.app.inject({ url: `/api/account/details?api_key=${key}` });
    expect(details.statusCode).toBe(200);
    const page = await c.get(`${home}/settings/api-access`);
    expect(page.body).toContain(key.slice(0, 8));
  });

  it('a publisher account has its API keys page', async () => {
    const owner = await signedUp();
    const { rows } = await h.database.pool.query<{ id: number }>('SELECT id FROM users WHERE email = $1', [owner.email]);
    const pub = await createPublisher(h.database.pool, 'Pub One');
    await addMember(h.database.pool, { publisherId: pub.id }, rows[0]!.id, 'owner');
    const page = await owner.c.get(`/app/p/${pub.id}/settings/api-keys`);
    expect(page.statusCode).toBe(200);
    expect(page.body).not.toContain('Can place orders');
    const res = await owner.c.post(`/app/p/${pub.id}/settings/api-keys`, { name: 'Pub key' });
    const key = keyIn(res.body)!;
    expect(res.body).toContain('/api/v1/publisher/me');
    expect((await h.app.inject({ url: '/api/v1/publisher/me', headers: { authorization: `Bearer ${key}` } })).statusCode).toBe(200);
    expect((await owner.c.get(`/app/p/${pub.id}/settings/api-access`)).statusCode).toBe(404);
    expect((await owner.c.get(`/app/p/${pub.id}`)).statusCode).toBe(200);
  });
});

describe('Console pages (/app/…): sessions, tokens, tenants, limits, redirects, logs — security', () => {
  it('no session: every signed-in page redirects to sign-in', async () => {
    const c = consoleClient(h);
    for (const url of ['/app/w/1', '/app/w/1/settings', '/app/w/1/settings/api-keys', '/app/w/1/settings/api-access', '/app/p/1/settings/api-keys', '/app/w/1/settings/members']) {
      const res = await c.get(url);
      expect(res.statusCode, url).toBe(303);
      expect(res.headers.location).toBe(`/app/sign-in?next=${encodeURIComponent(url)}`);
    }
    const post = await c.post('/app/w/1/settings/api-keys', { name: 'x' }, { csrf: false });
    expect(post.statusCode).toBe(303);
  });

  it('a form without its token is refused with 403', async () => {
    const { c, home } = await signedUp();
    await c.get(home);
    const res = await c.post(`${home}/settings/api-keys`, { name: 'forged' }, { csrf: false });
    expect(res.statusCode).toBe(403);
    expect(res.body).toContain('Form expired');
    const wrong = await c.post(`${home}/settings/api-keys`, { name: 'forged', _csrf: 'not-a-token' }, { csrf: false });
    expect(wrong.statusCode).toBe(403);
    const signIn = await consoleClient(h).post('/app/sign-in', { email: 'x@example.com', password }, { csrf: false });
    expect(signIn.statusCode).toBe(403);
  });

  it("another tenant's pages and keys answer 404", async () => {
    const a = await signedUp();
    const b = await signedUp();
    const created = await a.c.post(`${a.home}/settings/api-keys`, { name: 'A key' });
    const aKeyId = /\/settings\/api-keys\/(\d+)\/revoke/.exec((await a.c.get(`${a.home}/settings/api-keys`)).body)![1]!;
    expect(keyIn(created.body)).toBeDefined();
    for (const url of [a.home, `${a.home}/settings`, `${a.home}/settings/api-keys`, `${a.home}/settings/api-access`, `${a.home}/settings/api-keys/${aKeyId}/revoke`, '/app/w/999999', '/app/w/abc']) {
      expect((await b.c.get(url)).statusCode, url).toBe(404);
    }
    expect((await b.c.post(`${a.home}/settings/api-keys/${aKeyId}/revoke`, {}, { from: b.home })).statusCode).toBe(404);
    // B's own page asked for A's key id: 404 too, and A's key still works.
    expect((await b.c.get(`${b.home}/settings/api-keys/${aKeyId}/revoke`)).statusCode).toBe(404);
    expect((await me(keyIn(created.body)!)).statusCode).toBe(200);
  });

  it('a member sees no "Can place orders" box, and a forged spending key is 403', async () => {
    const owner = await signedUp();
    const wsId = Number(owner.home.split('/').pop());
    const user = await createUser(h.database.pool, { email: 'member@example.com', name: 'Mem Ber', password });
    await addMember(h.database.pool, { workspaceId: wsId }, user.id, 'member');
    const c = consoleClient(h, '10.8.0.1');
    expect((await c.post('/app/sign-in', { email: 'member@example.com', password })).statusCode).toBe(303);
    const keys = await c.get(`${owner.home}/settings/api-keys`);
    expect(keys.statusCode).toBe(200);
    expect(keys.body).not.toContain('Can place orders</label>');
    expect((await c.post(`${owner.home}/settings/api-keys`, { name: 'spend', can_place_orders: '1' })).statusCode).toBe(403);
    const readOnly = await c.post(`${owner.home}/settings/api-keys`, { name: 'read' });
    expect(readOnly.statusCode).toBe(200);
    expect((await me(keyIn(readOnly.body)!)).json().data.key.can_place_orders).toBe(false);
  });

  it('a viewer creates no key, not even a read-only one: 403 on API keys and API access of a workspace, and on a publisher account', async () => {
    const owner = await signedUp();
    const wsId = Number(owner.home.split('/').pop());
    const pub = await createPublisher(h.database.pool, 'Pub Viewed');
    const user = await createUser(h.database.pool, { email: 'viewer@example.com', name: 'Vic Viewer', password });
    await addMember(h.database.pool, { workspaceId: wsId }, user.id, 'viewer');
    await addMember(h.database.pool, { publisherId: pub.id }, user.id, 'viewer');
    const c = consoleClient(h, '10.8.0.2');
    expect((await c.post('/app/sign-in', { email: 'viewer@example.com', password })).statusCode).toBe(303);
    const count = async () =>
      (await h.database.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM api_keys WHERE workspace_id = $1 OR publisher_id = $2', [wsId, pub.id])).rows[0]!.n;
    const before = await count();
    for (const base of [`${owner.home}/settings/api-keys`, `${owner.home}/settings/api-access`, `/app/p/${pub.id}/settings/api-keys`]) {
      const list = await c.get(base);
      expect(list.statusCode, base).toBe(200);
      expect(list.body, base).not.toMatch(/Create key|Generate key/);
      const forged = await c.post(base, { name: 'read' });
      expect(forged.statusCode, base).toBe(403);
      expect(keyIn(forged.body), base).toBeUndefined();
    }
    expect(await count()).toBe(before);
  });

  it('sign-in: one message for unknown email and wrong password, then 429 with Retry-After for that account from that address, never for the owner elsewhere', async () => {
    const { email } = await signedUp();
    const c = consoleClient(h, '10.7.0.1');
    const unknown = await c.post('/app/sign-in', { email: 'nobody@example.com', password });
    const wrong = await c.post('/app/sign-in', { email, password: 'wrong password' });
    expect(unknown.statusCode).toBe(401);
    expect(wrong.statusCode).toBe(401);
    expect(unknown.body).toContain('Email or password is wrong.');
    expect(wrong.body).toContain('Email or password is wrong.');
    await c.post('/app/sign-in', { email, password: 'wrong password' });
    await c.post('/app/sign-in', { email, password: 'wrong password' });
    // The fourth attempt from that address is refused, the right password too: guessing cannot be told from knowing.
    const blocked = await c.post('/app/sign-in', { email, password });
    expect(blocked.statusCode).toBe(429);
    expect(Number(blocked.headers['retry-after'])).toBeGreaterThan(0);
    // The owner, from another address, is not locked out by someone else's wrong passwords.
    const owner = await consoleClient(h, '10.7.0.2').post('/app/sign-in', { email, password });
    expect(owner.statusCode).toBe(303);
  });

  it('sign-ups are limited per address: 429 with Retry-After', async () => {
    const c = consoleClient(h, '10.6.0.1');
    for (let i = 0; i < 3; i++) expect((await c.post('/app/sign-up', { name: 'Many', email: `many${i}@example.com`, password })).statusCode).toBe(303);
    const blocked = await c.post('/app/sign-up', { name: 'Many', email: 'many3@example.com', password });
    expect(blocked.statusCode).toBe(429);
    expect(Number(blocked.headers['retry-after'])).toBeGreaterThan(0);
    expect(blocked.body).toContain('Too many attempts');
  });

  it('after sign-in, goes back only to a console page of this site', async () => {
    const { email } = await signedUp();
    const signIn = (next: string) => consoleClient(h, '10.5.0.1').post('/app/sign-in', { email, password, next }, { from: '/app/sign-in' });
    expect((await signIn('/app/w/1/settings')).headers.location).toBe('/app/w/1/settings');
    for (const next of ['https://evil.example/', '//evil.example/app', '/api/v1/me', 'javascript:alert(1)']) {
      expect((await signIn(next)).headers.location, next).toBe('/app');
    }
    // Dot segments, also percent-encoded or behind a backslash, are resolved before the check, as a browser resolves them.
    for (const next of ['/app/../../evil', '/app/..', '/app/w/1/../../../api/v1/me', '/app/%2e%2e/evil', '/app/.%2E/%2e./evil', '/app/%2E%2E', '/app\\..\\evil', '/app/..\\evil']) {
      expect((await signIn(next)).headers.location, next).toBe('/app');
    }
    expect((await signIn('/app/w/1/../2/./settings')).headers.location).toBe('/app/w/2/settings');
    expect((await signIn('/app/w/1/orders?status=completed')).headers.location).toBe('/app/w/1/orders?status=completed');
    // The sign-in page carries only the resolved path in its form.
    const page = await consoleClient(h, '10.5.0.1').get(`/app/sign-in?next=${encodeURIComponent('/app/../../evil')}`);
    expect(page.body).not.toContain('evil');
  });

  it('a password change ends every session of the user', async () => {
    const { c, home, email } = await signedUp();
    expect((await c.get(home)).statusCode).toBe(200);
    const { rows } = await h.database.pool.query<{ id: number }>('SELECT id FROM users WHERE email = $1', [email]);
    await setPassword(h.database.pool, rows[0]!.id, 'another long password');
    expect((await c.get(home)).statusCode).toBe(303);
  });

  it('sessions end after 12 idle hours', async () => {
    const { c, home } = await signedUp();
    h.clock.advance(11 * 3_600_000);
    expect((await c.get(home)).statusCode).toBe(200);
    h.clock.advance(11 * 3_600_000);
    expect((await c.get(home)).statusCode).toBe(200);
    h.clock.advance(12 * 3_600_000 + 1000);
    expect((await c.get(home)).statusCode).toBe(303);
  });

  it('sessions end 30 days after sign-in, however busy; ended sessions are purged at a sign-in', async () => {
    const { c, home } = await signedUp();
    for (let hours = 0; hours < 30 * 24 - 11; hours += 11) {
      h.clock.advance(11 * 3_600_000);
      expect((await c.get(home)).statusCode, `after ${hours + 11} h`).toBe(200);
    }
    h.clock.advance(11 * 3_600_000);
    expect((await c.get(home)).statusCode).toBe(303);
    const before = await h.database.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM sessions WHERE expires_at <= $1', [new Date(h.clock.now())]);
    expect(before.rows[0]!.n).toBeGreaterThan(0);
    await signedUp();
    const after = await h.database.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM sessions WHERE expires_at <= $1', [new Date(h.clock.now())]);
    expect(after.rows[0]!.n).toBe(0);
  });

  it('sign-out ends the session', async () => {
    const { c, home } = await signedUp();
    const session = c.jar.get('mk_session')!;
    expect((await c.post('/app/sign-out', {}, { from: home })).statusCode).toBe(303);
    c.jar.set('mk_session', session);
    expect((await c.get(home)).statusCode).toBe(303);
  });

  // Last: everything above used passwords, session ids, CSRF tokens and raw keys.
  it('logs hold no password, session id, CSRF token or raw key', async () => {
    const secrets = [password, 'wrong password', 'another long password', ...seenSecrets, ...keys];
    expect(seenSecrets.size).toBeGreaterThan(10);
    expect(keys.length).toBeGreaterThan(5);
    const log = h.logs.join('');
    expect(log).toContain('"url":"/app/sign-in"');
    expect(secrets.filter((s) => s.length >= 8 && log.includes(s))).toEqual([]);
  });
});
