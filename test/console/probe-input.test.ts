import { describe, expect, it } from 'vitest';
import { createPublisher } from '../../src/domain/publishers/publisher-service.js';
import { addMember } from '../../src/domain/users/memberships.js';
import { createUser } from '../../src/domain/users/user-service.js';
import { createWorkspace, getApprovalRules, setApprovalRules } from '../../src/domain/workspaces/workspace-service.js';
import { setupApp } from '../helpers/app.js';
import { consoleClient } from './helpers.js';

// Malformed console input (probe): text PostgreSQL cannot store, bodies the parsers refuse, ids
// out of range, fields sent twice, a form token from another session, paths written another way.
// Each is a 4xx naming what is wrong, never a 500, and changes nothing.

const h = await setupApp({ SIGNUP: 'open', SIGNIN_FAILURES_PER_ACCOUNT: 50, SIGNIN_FAILURES_PER_ADDRESS: 1000, SIGNUPS_PER_ADDRESS_PER_HOUR: 100 });
const password = 'correct horse battery';

let n = 0;
async function owner() {
  n++;
  const email = `input${n}@example.com`;
  const user = await createUser(h.database.pool, { email, name: 'Ida Input', password });
  const ws = await createWorkspace(h.database.pool, { name: `Input ${n}` });
  await addMember(h.database.pool, { workspaceId: ws.id }, user.id, 'owner');
  const c = consoleClient(h, `10.9.0.${n}`);
  expect((await c.post('/app/sign-in', { email, password })).statusCode).toBe(303);
  return { c, user, email, ws, base: `/app/w/${ws.id}` };
}

describe('Console input the database cannot store or the parsers refuse (probe) — unhappy', () => {
  it('a NUL in an email or a key name is a 4xx naming the field, never a 500', async () => {
    const anon = consoleClient(h, '10.9.1.1');
    const signIn = await anon.post('/app/sign-in', { email: 'a\u0000b@example.com', password });
    expect(signIn.statusCode).toBe(401);
    const signUp = await anon.post('/app/sign-up', { name: 'Nul', email: 'a\u0000b@example.com', password }, { from: '/app/sign-in' });
    expect(signUp.statusCode).toBe(422);
    expect(signUp.body).toContain('must be an email address');

    const { c, base } = await owner();
    const key = await c.post(`${base}/settings/api-keys`, { name: 'k\u0000x' });
    expect(key.statusCode).toBe(422);
    expect(key.body).toContain('must not contain control characters');
    const invite = await c.post(`${base}/settings/members/invite`, { email: 'a\u0000b@example.com', role: 'viewer' }, { from: `${base}/settings/members` });
    expect(invite.statusCode).toBe(422);
    expect(invite.body).toContain('must be an email address');
  });

  it('a JSON body the parser refuses is the 400 page, signed in or not', async () => {
    for (const payload of ['{"a":', '{"a":1,"a":2}']) {
      const res = await h.app.inject({ method: 'POST', url: '/app/sign-in', headers: { 'content-type': 'application/json' }, payload });
      expect(res.statusCode).toBe(400);
      expect(res.body).toContain('Bad request');
    }
  });

  it('a member id beyond PostgreSQL integer is 404, as for one that does not exist', async () => {
    const { c, base } = await owner();
    const res = await c.post(`${base}/settings/members/2147483648/role`, { role: 'viewer' }, { from: `${base}/settings/members` });
    expect(res.statusCode).toBe(404);
  });

  it('a field sent twice is refused naming it, and the setting stays as it was', async () => {
    const { c, ws, base } = await owner();
    await setApprovalRules(h.database.pool, ws.id, { maxOrderCents: 25_000, approvalAboveCents: 10_000 });
    const url = `${base}/settings/approval-rules`;
    const token = await c.token(url);
    const post = (payload: string) =>
      h.app.inject({
        method: 'POST',
        url,
        headers: { cookie: [...c.jar].map(([k, v]) => `${k}=${v}`).join('; '), 'content-type': 'application/x-www-form-urlencoded' },
        payload: `_csrf=${encodeURIComponent(token)}&${payload}`,
        remoteAddress: '10.9.0.99',
      });
    const res = await post('max_order=250&max_order=300&approval_above=100');
    expect(res.statusCode).toBe(422);
    expect(res.body).toContain('max_order');
    // An empty approval amount means "never": one sent twice must not lift it.
    const above = await post('max_order=250&approval_above=&approval_above=100');
    expect(above.statusCode).toBe(422);
    expect(above.body).toContain('Ask for approval above (USD) must be sent once, as text');
    expect(await getApprovalRules(h.database.pool, ws.id)).toMatchObject({ max_order_cents: 25_000, approval_above_cents: 10_000 });
  });

  it('a role that does not exist is refused naming the field', async () => {
    const { c, ws, base } = await owner();
    const other = await createUser(h.database.pool, { email: `other${n}@example.com`, name: 'Otto', password });
    await addMember(h.database.pool, { workspaceId: ws.id }, other.id, 'member');
    const res = await c.post(`${base}/settings/members/${other.id}/role`, { role: 'admin' }, { from: `${base}/settings/members` });
    expect(res.statusCode).toBe(422);
    expect(res.body).toContain('role must be one of');
  });

  it('a form token from the session before is refused in the next one, in the same browser', async () => {
    const first = await owner();
    const old = await first.c.token(first.base);
    expect((await first.c.post('/app/sign-out', {}, { from: first.base })).statusCode).toBe(303);
    const second = await createUser(h.database.pool, { email: `next${n}@example.com`, name: 'Ned Next', password });
    await addMember(h.database.pool, { workspaceId: first.ws.id }, second.id, 'owner');
    expect((await first.c.post('/app/sign-in', { email: `next${n}@example.com`, password })).statusCode).toBe(303);
    const url = `${first.base}/settings/approval-rules`;
    const forged = await first.c.post(url, { max_order: '1' }, { token: old });
    expect(forged.statusCode).toBe(403);
    expect((await getApprovalRules(h.database.pool, first.ws.id)).max_order_cents).toBeNull();
    // The new session's own token works.
    expect((await first.c.post(url, { max_order: '2' })).statusCode).toBe(200);
  });

  it('a path written another way (%70 for p) is the route it reaches: a publisher page needs the publisher', async () => {
    const { c, ws } = await owner();
    const pub = await createPublisher(h.database.pool, 'Probe publisher');
    expect(pub.id).toBeGreaterThan(0);
    // The person belongs to workspace ws.id, not to publisher ws.id.
    const res = await c.get(`/app/%70/${ws.id}/settings/api-keys`);
    expect(res.statusCode).toBe(404);
    expect((await c.get(`/app/w/${ws.id}/settings/api-keys`)).statusCode).toBe(200);
  });

  it('a method no route takes is 404, not "form expired"', async () => {
    const res = await h.app.inject({ method: 'DELETE', url: '/app/sign-in' });
    expect(res.statusCode).toBe(404);
  });
});
