import { Writable } from 'node:stream';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { marketplaceApp, serverOptions } from '../../src/app.js';
import { defaultConfig } from '../../src/config.js';
import { createKey } from '../../src/domain/keys/key-service.js';
import { createPublisher } from '../../src/domain/publishers/publisher-service.js';
import { addMember } from '../../src/domain/users/memberships.js';
import { setStaff } from '../../src/domain/users/user-service.js';
import { createLogger } from '../../src/logger.js';
import type { Harness } from '../helpers/app.js';
import { ManualClock } from '../helpers/clock.js';
import { createTestDatabase } from '../helpers/db.js';
import { consoleClient, signUpConfirmed } from './helpers.js';

// The console's security suite, walked from the router so a page added later is covered without
// touching this file: every route behind the sign-in gate redirects to sign-in without a session,
// answers 404 for another tenant's ids (before anything else), and refuses a form without its
// CSRF token with 403 on the person's own workspace or publisher account.

const routes: Array<{ method: string; url: string; formToken?: boolean }> = [];
const database = await createTestDatabase();
const config = defaultConfig({ SIGNUP: 'open', PUBLIC_BASE_URL: 'http://127.0.0.1:3000', ORDER_SWEEP_INTERVAL_MS: 0, EVENTS_POLL_INTERVAL_MS: 0, LINK_CHECK_POLL_MS: 0 });
const clock = new ManualClock(Date.now());
const logs: string[] = [];
const app = Fastify(serverOptions(config, createLogger('info', new Writable({ write: (c, _e, cb) => (logs.push(String(c)), cb()) }))));
app.addHook('onRoute', (r) => {
  for (const method of ([] as string[]).concat(r.method)) if (method !== 'HEAD') routes.push({ method, url: r.url, ...(r.config?.formToken === false ? { formToken: false } : {}) });
});
await app.register(marketplaceApp, { config, database, clock });
await app.ready();
afterAll(async () => {
  await app.close();
  await database.drop();
});
const h = { app, database, clock, config, logs } as unknown as Harness;

const gated = () => routes.filter((r) => /^\/app\/[wp]\/:targetId/.test(r.url));
/** The console's routes outside a workspace or publisher account: sign-in, sign-up, invitations, OAuth consent. */
const ungated = () => routes.filter((r) => /^\/app(\/|$)/.test(r.url) && !/^\/app\/[wp]\/:targetId/.test(r.url) && !r.url.startsWith('/app/assets/'));
const password = 'correct horse battery';

interface Tenant {
  c: ReturnType<typeof consoleClient>;
  workspaceId: number;
  publisherId: number;
  userId: number;
  keyId: number;
  publisherKeyId: number;
}

async function tenant(n: number): Promise<Tenant> {
  const c = consoleClient(h, `10.1.0.${n}`);
  const home = await signUpConfirmed(h, c, { name: `Tenant ${n}`, email: `tenant${n}@example.com`, password });
  const workspaceId = Number(home.split('/').pop());
  const { rows } = await database.pool.query<{ id: number }>('SELECT id FROM users WHERE email = $1', [`tenant${n}@example.com`]);
  const userId = rows[0]!.id;
  const pub = await createPublisher(database.pool, `Publisher of tenant ${n}`);
  await addMember(database.pool, { publisherId: pub.id }, userId, 'owner');
  const key = await createKey(database.pool, { workspaceId, name: 'read' });
  const { rows: pk } = await database.pool.query<{ id: number }>('SELECT id FROM api_keys WHERE publisher_id = $1', [pub.id]);
  return { c, workspaceId, publisherId: pub.id, userId, keyId: key.id, publisherKeyId: pk[0]!.id };
}

/** The route's path with the tenant's ids: its workspace or publisher, key and member. */
function pathFor(url: string, t: Tenant) {
  const publisher = url.startsWith('/app/p/');
  return url
    .replace(':targetId', String(publisher ? t.publisherId : t.workspaceId))
    .replace(':keyId', String(publisher ? t.publisherKeyId : t.keyId))
    .replace(':userId', String(t.userId))
    .replace(/:\w+/g, '1');
}

let a: Tenant;
let b: Tenant;
beforeAll(async () => {
  a = await tenant(1);
  b = await tenant(2);
});

describe('Every signed-in console route — security', () => {
  it('walks the router (a broken walk would pass vacuously)', () => {
    const urls = gated().map((r) => `${r.method} ${r.url}`);
    for (const known of ['GET /app/w/:targetId', 'POST /app/w/:targetId/settings/api-keys', 'GET /app/p/:targetId/settings/api-keys', 'POST /app/w/:targetId/settings/api-keys/:keyId/revoke']) {
      expect(urls).toContain(known);
    }
    expect(urls.length).toBeGreaterThan(20);
  });

  it('no session: a redirect to sign-in', async () => {
    const anonymous = consoleClient(h, '10.1.1.1');
    for (const r of gated()) {
      const url = pathFor(r.url, a);
      const res = r.method === 'GET' ? await anonymous.get(url) : await anonymous.post(url, {}, { csrf: false });
      expect(res.statusCode, `${r.method} ${url}`).toBe(303);
      expect(res.headers.location, `${r.method} ${url}`).toMatch(/^\/app\/sign-in/);
    }
  });

  it("another tenant's ids: 404, with a valid form token too", async () => {
    for (const r of gated()) {
      const url = pathFor(r.url, a);
      const res = r.method === 'GET' ? await b.c.get(url) : await b.c.post(url, {}, { from: `/app/w/${b.workspaceId}` });
      expect(res.statusCode, `${r.method} ${url}`).toBe(404);
    }
  });

  it("another tenant's key or member id on one's own pages: 404", async () => {
    for (const r of gated().filter((x) => /:keyId|:userId/.test(x.url))) {
      const own = pathFor(r.url, b);
      const url = own.replace(`/${b.keyId}/`, `/${a.keyId}/`).replace(`/${b.publisherKeyId}/`, `/${a.publisherKeyId}/`).replace(`/${b.userId}/`, `/${a.userId}/`);
      expect(url).not.toBe(own);
      const res = r.method === 'GET' ? await b.c.get(url) : await b.c.post(url, {}, { from: `/app/w/${b.workspaceId}` });
      expect(res.statusCode, `${r.method} ${url}`).toBe(404);
    }
  });

  it('a form without its token: 403, on every state-changing route', async () => {
    const posts = gated().filter((r) => r.method !== 'GET');
    expect(posts.length).toBeGreaterThan(5);
    for (const r of posts) {
      const url = pathFor(r.url, b);
      const res = await b.c.post(url, { name: 'forged' }, { csrf: false });
      expect(res.statusCode, `${r.method} ${url}`).toBe(403);
    }
  });

  it('a form without its token: 403 on every other console route too, signed out or in (taken from the router)', async () => {
    // The one-click unsubscribe takes no form token (below): its signed link is its authority.
    const others = ungated().filter((r) => r.method !== 'GET' && r.formToken !== false);
    const urls = others.map((r) => `${r.method} ${r.url}`);
    // The walk must find the signed-out forms, else it proves nothing about them.
    for (const known of ['/app/sign-in', '/app/sign-up', '/app/sign-out', '/app/invitation', '/app/invitation/accept', '/app/oauth/:uid']) {
      expect(urls).toContain(`POST ${known}`);
    }
    for (const r of others) {
      const url = r.url.replace(/:\w+/g, '1');
      const signedOut = await consoleClient(h, '10.1.2.1').post(url, { name: 'forged' }, { csrf: false });
      // A route behind the sign-in gate sends a signed-out browser to sign in before it reads the form.
      if (signedOut.statusCode === 303) expect(signedOut.headers.location, `signed out: ${r.method} ${url}`).toMatch(/^\/app\/sign-in/);
      else expect(signedOut.statusCode, `signed out: ${r.method} ${url}`).toBe(403);
      // The operations console is staff's only (docs/billing.md): anyone else is told there is no
      // such page before the form is read; staff without the token are refused as everywhere.
      if (r.url.startsWith('/app/ops/')) {
        expect((await b.c.post(url, { name: 'forged' }, { csrf: false })).statusCode, `signed in, not staff: ${r.method} ${url}`).toBe(404);
        await setStaff(database.pool, b.userId, true);
        expect((await b.c.post(url, { name: 'forged' }, { csrf: false })).statusCode, `signed in, staff: ${r.method} ${url}`).toBe(403);
        await setStaff(database.pool, b.userId, false);
        continue;
      }
      expect((await b.c.post(url, { name: 'forged' }, { csrf: false })).statusCode, `signed in: ${r.method} ${url}`).toBe(403);
    }
    expect(urls.filter((u) => u.startsWith('POST /app/ops/')).length, 'the walk finds the operations console\'s forms').toBeGreaterThan(2);
    // The one route taken without a form token: the one-click unsubscribe, authorised by its signed link (docs/mail.md).
    expect(routes.filter((r) => r.formToken === false).map((r) => `${r.method} ${r.url}`)).toEqual(['POST /app/unsubscribe']);
  });
});
