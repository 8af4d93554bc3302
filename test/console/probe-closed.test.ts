import { describe, expect, it } from 'vitest';
import { addMember } from '../../src/domain/users/memberships.js';
import { createUser, findUserByEmail } from '../../src/domain/users/user-service.js';
import { createWorkspace } from '../../src/domain/workspaces/workspace-service.js';
import { setupApp } from '../helpers/app.js';
import { outboxLink } from '../helpers/mail.js';
import { consoleClient, joinByMail, seenSecrets } from './helpers.js';

// SIGNUP=closed under attack: the sign-up form is gone, and an invite link adds only the invited
// email, once, before it expires; the link's token leaves by no Referer.

const h = await setupApp({ SIGNUP: 'closed', SIGNIN_FAILURES_PER_ADDRESS: 1000, SIGNUPS_PER_ADDRESS_PER_HOUR: 100 });
const password = 'correct horse battery';
const DAY = 86_400_000;

let n = 0;
async function owner() {
  n++;
  const email = `closed-owner${n}@example.com`;
  const user = await createUser(h.database.pool, { email, name: 'Owner', password });
  const ws = await createWorkspace(h.database.pool, { name: `Closed ${n}` });
  await addMember(h.database.pool, { workspaceId: ws.id }, user.id, 'owner');
  const c = consoleClient(h, `10.9.1.${n}`);
  expect((await c.post('/app/sign-in', { email, password })).statusCode).toBe(303);
  return { c, user, base: `/app/w/${ws.id}` };
}

async function invite(o: Awaited<ReturnType<typeof owner>>, email: string, role = 'viewer') {
  const res = await o.c.post(`${o.base}/settings/members/invite`, { email, role }, { from: `${o.base}/settings/members` });
  expect(res.statusCode).toBe(200);
  const link = /id="invite-link"[^>]*value="([^"]+)"/.exec(res.body)![1]!.replaceAll('&amp;', '&');
  return new URL(link).searchParams.get('token')!;
}

describe('Console sign-up and invitation links with SIGNUP=closed (probe) — security', () => {
  it('the sign-up form is closed both ways and makes no account', async () => {
    const c = consoleClient(h, '10.9.2.1');
    expect((await c.get('/app/sign-up')).statusCode).toBe(404);
    const token = await c.token('/app/sign-in');
    const res = await h.app.inject({
      method: 'POST',
      url: '/app/sign-up',
      headers: { cookie: [...c.jar].map(([k, v]) => `${k}=${v}`).join('; '), 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ _csrf: token, name: 'Sneak', email: 'sneak@example.com', password }).toString(),
      remoteAddress: '10.9.2.1',
    });
    expect(res.statusCode).toBe(404);
    expect(await findUserByEmail(h.database.pool, 'sneak@example.com')).toBeNull();
  });

  it('an invite link makes an account for the invited email only, whatever the form says', async () => {
    const o = await owner();
    const token = await invite(o, 'invited-only@example.com');
    const c = consoleClient(h, '10.9.2.2');
    const page = await c.get(`/app/invitation?token=${token}`);
    expect(page.statusCode).toBe(200);
    expect(page.headers['referrer-policy']).toBe('no-referrer');
    const asked = await c.post('/app/invitation/accept', { token, name: 'Sneak', email: 'other@example.com', password }, { from: `/app/invitation?token=${token}` });
    expect(asked.statusCode).toBe(200);
    expect(await findUserByEmail(h.database.pool, 'invited-only@example.com')).toBeNull();
    const link = await outboxLink(h.database.pool, 'invited-only@example.com', 'invitation_proof');
    const mail_token = new URLSearchParams(link.split('?')[1]).get('mail_token')!;
    seenSecrets.add(mail_token);
    const res = await c.post('/app/invitation/finish', { token, mail_token, name: 'Sneak', email: 'other@example.com', password }, { from: link });
    expect(res.statusCode).toBe(303);
    expect(await findUserByEmail(h.database.pool, 'other@example.com')).toBeNull();
    expect(await findUserByEmail(h.database.pool, 'invited-only@example.com')).not.toBeNull();
    const again = await consoleClient(h, '10.9.2.3').post('/app/invitation/accept', { token, name: 'Twice', password }, { from: '/app/sign-in' });
    expect(again.statusCode).toBe(409);
  });

  it('an expired link makes no account', async () => {
    const o = await owner();
    const token = await invite(o, 'late@example.com');
    const c = consoleClient(h, '10.9.2.4');
    const form = await c.token(`/app/invitation?token=${token}`);
    h.clock.advance(7 * DAY + 1000);
    const res = await h.app.inject({
      method: 'POST',
      url: '/app/invitation/accept',
      headers: { cookie: [...c.jar].map(([k, v]) => `${k}=${v}`).join('; '), 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ _csrf: form, token, name: 'Late', password }).toString(),
      remoteAddress: '10.9.2.4',
    });
    expect(res.statusCode).toBe(409);
    expect(await findUserByEmail(h.database.pool, 'late@example.com')).toBeNull();
  });

  it('a removed member loses every page at their next request', async () => {
    const o = await owner();
    const token = await invite(o, 'leaver@example.com', 'member');
    const c = consoleClient(h, '10.9.2.5');
    expect((await joinByMail(h, c, token, 'leaver@example.com', { name: 'Leaver', password })).statusCode).toBe(303);
    expect((await c.get(`${o.base}/settings/api-keys`)).statusCode).toBe(200);
    const leaver = (await findUserByEmail(h.database.pool, 'leaver@example.com'))!;
    expect((await o.c.post(`${o.base}/settings/members/${leaver.id}/remove`, {}, { from: `${o.base}/settings/members/${leaver.id}/remove` })).statusCode).toBe(303);
    expect((await c.get(`${o.base}/settings/api-keys`)).statusCode).toBe(404);
    expect((await c.post(`${o.base}/settings/api-access`, { name: 'after' }, { from: '/app/sign-in' })).statusCode).toBe(404);
  });
});
