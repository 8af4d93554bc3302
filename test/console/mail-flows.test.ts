import { afterAll, describe, expect, it } from 'vitest';
import { createUser } from '../../src/domain/users/user-service.js';
import { addMember } from '../../src/domain/users/memberships.js';
import { createWorkspace } from '../../src/domain/workspaces/workspace-service.js';
import { setupApp } from '../helpers/app.js';
import { outboxLink, outboxRows } from '../helpers/mail.js';
import { linkIn, pathOf, startSmtp } from '../helpers/smtp.js';
import { consoleClient, seenSecrets } from './helpers.js';

// The console's mails against a real SMTP server in the test process (docs/mail.md): sign-up's
// address confirmation, "Forgot password?", invitations by mail, and an account someone made with
// another's address taken back. The mail worker is driven explicitly (drain), on the test clock.

const smtp = await startSmtp();
afterAll(() => smtp.stop());
const h = await setupApp({
  SIGNUP: 'open',
  SMTP_URL: smtp.url,
  MAIL_FROM: 'Marketplace <no-reply@market.example>',
  PUBLIC_BASE_URL: 'http://127.0.0.1:3000',
  SIGNUPS_PER_ADDRESS_PER_HOUR: 1000,
  SIGNIN_FAILURES_PER_ACCOUNT: 4,
  SIGNIN_FAILURES_PER_ADDRESS: 1000,
});
const password = 'correct horse battery';
const newPassword = 'a brand new passphrase';

let n = 0;
const nextIp = () => `10.61.${Math.floor(++n / 250)}.${n % 250}`;

/** Sends what is due and answers the mails that arrived to `address` meanwhile. */
async function deliver(address: string) {
  const before = smtp.to(address).length;
  await h.app.mailWorker.drain();
  return smtp.to(address).slice(before);
}

async function signUp(email: string, name = 'Ana Lima') {
  const c = consoleClient(h, nextIp());
  const res = await c.post('/app/sign-up', { name, email, password }, { from: '/app/sign-in' });
  expect(res.statusCode).toBe(303);
  return { c, res };
}

const signInStatus = async (email: string, pw: string) => (await consoleClient(h, nextIp()).post('/app/sign-in', { email, password: pw })).statusCode;

describe('Address confirmation by mail (EMAIL_VERIFICATION=required) — happy', () => {
  it('sign-up → "Check your email" and nothing else → the mailed link → Confirm → the console opens', async () => {
    const { c, res } = await signUp('newcomer@example.com');
    expect(res.headers.location).toBe('/app/check-email');
    const check = await c.get('/app/check-email');
    expect(check.statusCode).toBe(200);
    expect(check.body).toContain('<h1>Check your email</h1>');
    expect(check.body).toContain('newcomer@example.com');
    expect(check.body).toContain('>Send again</button>');
    // Nothing else: no workspace switcher, no section navigation, and every console page waits.
    expect(check.body).not.toContain('aria-label="Workspaces and publisher accounts"');
    expect(check.body).not.toContain('aria-label="Console"');
    const { rows } = await h.database.pool.query<{ id: number }>(`SELECT workspace_id AS id FROM memberships m JOIN users u ON u.id = m.user_id WHERE u.email = 'newcomer@example.com'`);
    const home = `/app/w/${rows[0]!.id}`;
    for (const url of ['/app', home, `${home}/settings/api-keys`]) {
      const page = await c.get(url);
      expect(page.statusCode, url).toBe(303);
      expect(page.headers.location).toBe('/app/check-email');
    }
    expect((await c.post(`${home}/settings/api-keys`, { name: 'Sneaky' }, { from: '/app/check-email' })).headers.location).toBe('/app/check-email');

    const [mail] = await deliver('newcomer@example.com');
    expect(mail).toBeDefined();
    const parsed = mail!.parsed;
    expect(parsed.subject).toBe('Confirm your email address');
    expect(parsed.from?.text).toBe('"Marketplace" <no-reply@market.example>');
    expect(parsed.messageId).toMatch(/^<[0-9a-f-]{36}@127\.0\.0\.1>$|^<[0-9a-f-]{36}@localhost>$/);
    expect(parsed.headers.get('auto-submitted')).toBe('auto-generated');
    // The login of SMTP_URL was used.
    expect(smtp.logins.at(-1)).toEqual({ username: 'mailer', password: smtp.password });
    const link = linkIn(parsed.text, 'verify-email');
    expect(link.startsWith('http://127.0.0.1:3000/app/verify-email?token=')).toBe(true);
    expect(parsed.html).toContain(`href="${link}"`);
    seenSecrets.add(new URL(link).searchParams.get('token')!);

    // Opening the link changes nothing (a mail scanner opens links): a button does.
    const opened = await c.get(pathOf(link));
    expect(opened.statusCode).toBe(200);
    expect(opened.headers['cache-control']).toBe('no-store');
    expect(opened.body).toContain('>Confirm address</button>');
    expect((await c.get(home)).headers.location).toBe('/app/check-email');
    const confirmed = await c.post('/app/verify-email', { token: new URL(link).searchParams.get('token')! }, { from: pathOf(link) });
    expect(confirmed.statusCode).toBe(303);
    expect(confirmed.headers.location).toBe('/app');
    expect((await c.get('/app')).headers.location).toBe(home);
    const overview = await c.get(home);
    expect(overview.statusCode).toBe(200);
    expect(overview.body).toContain('aria-label="Console"');
    // The link is used up; opened again by its confirmed owner it just leads on.
    expect((await c.get(pathOf(link))).headers.location).toBe('/app');
    expect((await consoleClient(h, nextIp()).get(pathOf(link))).statusCode).toBe(409);
  });

  it('"Send again" mails a new link, a few times an hour; opened in another browser the link asks for the password', async () => {
    const { c } = await signUp('again@example.com');
    expect(await deliver('again@example.com')).toHaveLength(1);
    const sent = await c.post('/app/check-email', {});
    expect(sent.headers.location).toBe('/app/check-email?sent=1');
    expect((await c.get('/app/check-email?sent=1')).body).toContain('Sent again to again@example.com.');
    const [second] = await deliver('again@example.com');
    const link = linkIn(second!.parsed.text, 'verify-email');
    for (let i = 0; i < 4; i++) expect((await c.post('/app/check-email', {})).statusCode).toBe(303);
    const limited = await c.post('/app/check-email', {});
    expect(limited.statusCode).toBe(429);
    expect(limited.headers['retry-after']).toBeDefined();

    // Another browser, not signed in: the account's password first; a wrong one confirms nothing.
    const phone = consoleClient(h, nextIp());
    const page = await phone.get(pathOf(link));
    expect(page.body).toContain('>Sign in and confirm</button>');
    const token = new URL(link).searchParams.get('token')!;
    const wrong = await phone.post('/app/verify-email/sign-in', { token, password: 'not the password' }, { from: pathOf(link) });
    expect(wrong.statusCode).toBe(401);
    const right = await phone.post('/app/verify-email/sign-in', { token, password }, { from: pathOf(link) });
    expect(right.headers.location).toBe('/app');
    expect((await phone.get('/app')).headers.location).toMatch(/^\/app\/w\/\d+$/);
    // The first browser's session sees the console now too.
    expect((await c.get('/app')).headers.location).toMatch(/^\/app\/w\/\d+$/);
  });

  it('accounts made by the CLI (createUser) and by an invitation are confirmed: no mail, straight in', async () => {
    await createUser(h.database.pool, { email: 'operator-made@example.com', name: 'Op Made', password });
    expect(await signInStatus('operator-made@example.com', password)).toBe(303);
    expect(await outboxRows(h.database.pool, 'operator-made@example.com')).toEqual([]);
  });
});

describe('Forgot password — happy', () => {
  it('mail → link → "New password" → it works, the old one and every old session do not', async () => {
    const ana = await createUser(h.database.pool, { email: 'forgetful@example.com', name: 'Fay Forget', password });
    await addMember(h.database.pool, { workspaceId: (await createWorkspace(h.database.pool, { name: 'Forgetful' })).id }, ana.id, 'owner');
    const laptop = consoleClient(h, nextIp());
    expect((await laptop.post('/app/sign-in', { email: 'forgetful@example.com', password })).statusCode).toBe(303);
    expect((await laptop.get('/app')).statusCode).toBe(303);

    const browser = consoleClient(h, nextIp());
    const signIn = await browser.get('/app/sign-in');
    expect(signIn.body).toContain('<a href="/app/forgot-password">Forgot password?</a>');
    const form = await browser.get('/app/forgot-password');
    expect(form.body).toContain('<label for="f-email">Email</label>');
    expect(form.body).toContain('>Send reset link</button>');
    const asked = await browser.post('/app/forgot-password', { email: 'Forgetful@Example.com' });
    expect(asked.statusCode).toBe(200);
    expect(asked.body).toContain('we sent it a link to set a new password');

    const [mail] = await deliver('forgetful@example.com');
    expect(mail!.parsed.subject).toBe('Reset your password');
    expect(mail!.parsed.html).toBeTruthy();
    const link = linkIn(mail!.parsed.text, 'reset-password');
    const token = new URL(link).searchParams.get('token')!;
    seenSecrets.add(token);
    // Only the token's hash is stored.
    const stored = await h.database.pool.query(`SELECT 1 FROM user_tokens WHERE token_hash = $1`, [token]);
    expect(stored.rows).toHaveLength(0);

    const page = await browser.get(pathOf(link));
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('<label for="f-password">New password</label>');
    expect(page.body).toContain('>Set password</button>');
    const short = await browser.post('/app/reset-password', { token, password: 'short' }, { from: pathOf(link) });
    expect(short.statusCode).toBe(422);
    expect(short.body).toContain('New password must be at least 8 characters');
    const set = await browser.post('/app/reset-password', { token, password: newPassword }, { from: pathOf(link) });
    expect(set.statusCode).toBe(303);
    expect(set.headers.location).toBe('/app');
    expect((await browser.get('/app')).headers.location).toMatch(/^\/app\/w\/\d+$/);

    // The laptop's session ended; the old password fails, the new one works.
    expect((await laptop.get('/app')).headers.location).toBe('/app/sign-in');
    expect(await signInStatus('forgetful@example.com', password)).toBe(401);
    expect(await signInStatus('forgetful@example.com', newPassword)).toBe(303);
    // Used once: the link is refused now.
    const again = await consoleClient(h, nextIp()).get(pathOf(link));
    expect(again.statusCode).toBe(409);
    expect(again.body).toContain('already been used');
    const reused = await consoleClient(h, nextIp()).post('/app/reset-password', { token, password: 'yet another passphrase' }, { from: '/app/forgot-password' });
    expect(reused.statusCode).toBe(409);
    expect(await signInStatus('forgetful@example.com', 'yet another passphrase')).toBe(401);
  });

  it('an unknown address gets the same page, and no mail is queued or sent', async () => {
    await createUser(h.database.pool, { email: 'known@example.com', name: 'Kim Known', password });
    const known = await consoleClient(h, nextIp()).post('/app/forgot-password', { email: 'known@example.com' });
    const unknown = await consoleClient(h, nextIp()).post('/app/forgot-password', { email: 'nobody@example.com' });
    expect(unknown.statusCode).toBe(known.statusCode);
    const strip = (body: string) => body.replace(/known@example\.com|nobody@example\.com/g, 'ADDRESS').replace(/name="_csrf" value="[^"]+"/g, '');
    expect(strip(unknown.body)).toBe(strip(known.body));
    expect(await deliver('known@example.com')).toHaveLength(1);
    expect(smtp.to('nobody@example.com')).toHaveLength(0);
    expect(await outboxRows(h.database.pool, 'nobody@example.com')).toEqual([]);
  });

  it('a link past its hour (test clock) is refused, and so is a token no link has; a bad address is named', async () => {
    await createUser(h.database.pool, { email: 'slow@example.com', name: 'Sol Slow', password });
    await consoleClient(h, nextIp()).post('/app/forgot-password', { email: 'slow@example.com' });
    const [mail] = await deliver('slow@example.com');
    const link = linkIn(mail!.parsed.text, 'reset-password');
    const token = new URL(link).searchParams.get('token')!;
    h.clock.advance(61 * 60_000);
    const late = await consoleClient(h, nextIp()).get(pathOf(link));
    expect(late.statusCode).toBe(409);
    expect(late.body).toContain('expired');
    const post = await consoleClient(h, nextIp()).post('/app/reset-password', { token, password: newPassword }, { from: '/app/forgot-password' });
    expect(post.statusCode).toBe(409);
    expect(await signInStatus('slow@example.com', newPassword)).toBe(401);
    expect((await consoleClient(h, nextIp()).get('/app/reset-password?token=nonsense')).statusCode).toBe(404);
    expect((await consoleClient(h, nextIp()).get('/app/reset-password')).statusCode).toBe(404);
    const bad = await consoleClient(h, nextIp()).post('/app/forgot-password', { email: 'not an address' });
    expect(bad.statusCode).toBe(422);
    expect(bad.body).toContain('Email must be an email address');
  });

  it('counted by the sign-in limits, never given back: one client past the address\'s limit gets 429, for sign-in too; spread over clients, the address is slowed', async () => {
    await createUser(h.database.pool, { email: 'flooded@example.com', name: 'Flo Flood', password });
    const ip = nextIp();
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await consoleClient(h, ip).post('/app/forgot-password', { email: 'flooded@example.com' })).statusCode);
    expect(statuses).toEqual([200, 200, 200, 200, 429]);
    expect((await consoleClient(h, ip).post('/app/sign-in', { email: 'flooded@example.com', password })).statusCode).toBe(429);
    expect(await deliver('flooded@example.com')).toHaveLength(4);
    // From other clients the address as a whole is over its count: one request per wait (1 s
    // first), the others refused with the wait, a sign-in with the right password too.
    const spread: number[] = [];
    for (let i = 0; i < 3; i++) spread.push((await consoleClient(h, nextIp()).post('/app/forgot-password', { email: 'flooded@example.com' })).statusCode);
    expect(spread).toEqual([200, 429, 429]);
    expect(await signInStatus('flooded@example.com', password)).toBe(429);
    expect(await deliver('flooded@example.com')).toHaveLength(1);
  });
});

describe('Invitations by mail — happy', () => {
  it('the invite form mails the link (text and escaped HTML) and still shows it to copy; the mailed link joins', async () => {
    const owner = await createUser(h.database.pool, { email: 'inviter@example.com', name: 'Ines <b>Owner</b>', password });
    const workspaceId = (await createWorkspace(h.database.pool, { name: 'Acme & "Sons"' })).id;
    await addMember(h.database.pool, { workspaceId }, owner.id, 'owner');
    const c = consoleClient(h, nextIp());
    await c.post('/app/sign-in', { email: 'inviter@example.com', password });
    const members = `/app/w/${workspaceId}/settings/members`;
    const invited = await c.post(`${members}/invite`, { email: 'guest@example.com', role: 'member' }, { from: members });
    expect(invited.statusCode).toBe(200);
    expect(invited.body).toContain('We mailed this link to');
    const copied = /id="invite-link"[^>]*value="([^"]+)"/.exec(invited.body)![1]!.replace(/&amp;/g, '&');

    const [mail] = await deliver('guest@example.com');
    const parsed = mail!.parsed;
    expect(parsed.subject).toBe('Ines <b>Owner</b> invites you to Acme & "Sons"');
    const link = linkIn(parsed.text, 'invitation');
    expect(link).toBe(copied);
    expect(parsed.text).toContain('as member');
    expect(parsed.html).toContain('Ines &lt;b&gt;Owner&lt;/b&gt;');
    expect(parsed.html).toContain('Acme &amp; &quot;Sons&quot;');
    expect(parsed.html).not.toContain('<b>Owner</b>');

    // Signed out, the form makes no account: it mails the address a link that finishes joining.
    const guest = consoleClient(h, nextIp());
    const token = new URL(link).searchParams.get('token')!;
    const asked = await guest.post('/app/invitation/accept', { token, password }, { from: pathOf(link) });
    expect(asked.statusCode).toBe(200);
    expect(asked.body).toContain('Check your email');
    expect((await h.database.pool.query(`SELECT 1 FROM users WHERE email = 'guest@example.com'`)).rowCount).toBe(0);
    const [finish] = await deliver('guest@example.com');
    expect(finish!.parsed.subject).toBe('Finish joining the Marketplace console');
    expect(finish!.parsed.text).not.toContain('Owner');
    const mailed = linkIn(finish!.parsed.text, 'invitation');
    expect(new URL(mailed).searchParams.get('token')).toBe(token);
    const form = await guest.get(pathOf(mailed));
    expect(form.body).toContain('action="/app/invitation/finish"');
    const proof = new URL(mailed).searchParams.get('mail_token')!;
    const short = await guest.post('/app/invitation/finish', { token, mail_token: proof, name: 'Gus Guest', password: 'short' }, { from: pathOf(mailed) });
    expect(short.statusCode).toBe(422);
    const joined = await guest.post('/app/invitation/finish', { token, mail_token: proof, name: 'Gus Guest', password }, { from: pathOf(mailed) });
    expect(joined.headers.location).toBe(`/app/w/${workspaceId}`);
    expect((await guest.get(`/app/w/${workspaceId}`)).statusCode).toBe(200);
    // Used once.
    expect((await consoleClient(h, nextIp()).post('/app/invitation/finish', { token, mail_token: proof, name: 'Again', password }, { from: '/app/sign-in' })).statusCode).toBe(409);
  });

  it('an account someone made with the address, never confirmed: the invitation takes it back (new password, every session ended)', async () => {
    // The squatter signs up first with the address of the person who will be invited.
    const squatter = await signUp('cfo@example.com', 'Not The CFO');
    await deliver('cfo@example.com'); // the confirmation goes to the real owner, who ignores it
    const owner = await createUser(h.database.pool, { email: 'boss@example.com', name: 'Bo Boss', password });
    const workspaceId = (await createWorkspace(h.database.pool, { name: 'Finance' })).id;
    await addMember(h.database.pool, { workspaceId }, owner.id, 'owner');
    const boss = consoleClient(h, nextIp());
    await boss.post('/app/sign-in', { email: 'boss@example.com', password });
    await boss.post(`/app/w/${workspaceId}/settings/members/invite`, { email: 'cfo@example.com', role: 'owner' }, { from: `/app/w/${workspaceId}/settings/members` });
    const [mail] = await deliver('cfo@example.com');
    const link = linkIn(mail!.parsed.text, 'invitation');
    const token = new URL(link).searchParams.get('token')!;

    // The squatter's own session is offered no "Join" either: an unconfirmed account joins only by claiming.
    const squatterView = await squatter.c.get(pathOf(link));
    expect(squatterView.body).not.toContain('>Join</button>');

    // Signed out, the page is the one form any address gets: nothing tells that an account is there.
    const cfo = consoleClient(h, nextIp());
    const page = await cfo.get(pathOf(link));
    expect(page.body).toContain('action="/app/invitation/accept"');
    expect(page.body).toContain('>Continue</button>');
    expect(page.body).not.toContain('Set a password to join');
    const stranger = await boss.post(`/app/w/${workspaceId}/settings/members/invite`, { email: 'nobody-yet@example.com', role: 'owner' }, { from: `/app/w/${workspaceId}/settings/members` });
    const strangerLink = /id="invite-link"[^>]*value="([^"]+)"/.exec(stranger.body)![1]!.replace(/&amp;/g, '&');
    const strangerToken = new URL(strangerLink).searchParams.get('token')!;
    const formOf = (body: string, email: string, t: string) =>
      body.slice(body.indexOf('<form method="post" action="/app/invitation/accept"')).replaceAll(email, 'EMAIL').replaceAll(t, 'TOKEN').replace(/name="_csrf" value="[^"]*"/, '');
    const strangerPage = await consoleClient(h, nextIp()).get(pathOf(strangerLink));
    expect(formOf(page.body, 'cfo@example.com', token)).toBe(formOf(strangerPage.body, 'nobody-yet@example.com', strangerToken));

    // Sent, the answer is the one an address without an account gets; nothing changed, nobody signed in.
    const sent = await cfo.post('/app/invitation/accept', { token, name: 'Real CFO', password: newPassword }, { from: pathOf(link) });
    const sentStranger = await consoleClient(h, nextIp()).post('/app/invitation/accept', { token: strangerToken, name: 'Real CFO', password: newPassword }, { from: pathOf(strangerLink) });
    expect(sent.statusCode).toBe(200);
    expect(sentStranger.statusCode).toBe(200);
    expect(sent.body.replaceAll('cfo@example.com', 'EMAIL').replace(/name="_csrf" value="[^"]*"/, '')).toBe(
      sentStranger.body.replaceAll('nobody-yet@example.com', 'EMAIL').replace(/name="_csrf" value="[^"]*"/, ''),
    );
    expect(sent.headers['set-cookie']).toBeUndefined();
    expect(await signInStatus('cfo@example.com', password)).not.toBe(401);
    expect(await signInStatus('cfo@example.com', newPassword)).toBe(401);

    // The link mailed to the address claims the account, as a new account would be made.
    const [finish] = await deliver('cfo@example.com');
    const mailed = linkIn(finish!.parsed.text, 'invitation');
    const proof = new URL(mailed).searchParams.get('mail_token')!;
    expect((await cfo.get(pathOf(mailed))).body).toContain('action="/app/invitation/finish"');
    const claimed = await cfo.post('/app/invitation/finish', { token, mail_token: proof, name: 'Real CFO', password: newPassword }, { from: pathOf(mailed) });
    expect(claimed.statusCode).toBe(303);
    expect(claimed.headers.location).toBe(`/app/w/${workspaceId}`);
    expect((await cfo.get(`/app/w/${workspaceId}`)).statusCode).toBe(200);
    // The squatter is out: session ended, password changed; the account is confirmed and renamed.
    expect((await squatter.c.get('/app')).headers.location).toBe('/app/sign-in');
    expect(await signInStatus('cfo@example.com', password)).toBe(401);
    const user = await h.database.pool.query(`SELECT name, email_verified_at FROM users WHERE email = 'cfo@example.com'`);
    expect(user.rows[0].name).toBe('Real CFO');
    expect(user.rows[0].email_verified_at).not.toBeNull();
  });

  it('an owner who invites an unconfirmed account and uses the copied link signed out does not take it over', async () => {
    // The victim signed up, never confirmed, and belongs to a workspace.
    const victim = await signUp('target@example.com', 'Tia Target');
    await deliver('target@example.com');
    const victimId = (await h.database.pool.query<{ id: number }>(`SELECT id FROM users WHERE email = 'target@example.com'`)).rows[0]!.id;
    const victimWs = (await createWorkspace(h.database.pool, { name: 'Tia private' })).id;
    await addMember(h.database.pool, { workspaceId: victimWs }, victimId, 'owner');
    // The attacker owns a workspace and invites the victim's address, then copies the link.
    const attacker = await createUser(h.database.pool, { email: 'mallory@example.com', name: 'Mallory', password });
    const ownWs = (await createWorkspace(h.database.pool, { name: 'Bait' })).id;
    await addMember(h.database.pool, { workspaceId: ownWs }, attacker.id, 'owner');
    const m = consoleClient(h, nextIp());
    await m.post('/app/sign-in', { email: 'mallory@example.com', password });
    const invited = await m.post(`/app/w/${ownWs}/settings/members/invite`, { email: 'target@example.com', role: 'member' }, { from: `/app/w/${ownWs}/settings/members` });
    const copied = /id="invite-link"[^>]*value="([^"]+)"/.exec(invited.body)![1]!.replace(/&amp;/g, '&');
    const token = new URL(copied).searchParams.get('token')!;
    const before = (await h.database.pool.query(`SELECT password_hash FROM users WHERE id = $1`, [victimId])).rows[0].password_hash;

    // Signed out, with a password of the attacker's choosing.
    const out = consoleClient(h, nextIp());
    const sent = await out.post('/app/invitation/accept', { token, name: 'Mallory', password: newPassword }, { from: pathOf(copied) });
    expect(sent.statusCode).toBe(200);
    expect(sent.body).toContain('Check your email');
    expect(sent.headers['set-cookie']).toBeUndefined();
    expect((await out.get(`/app/w/${victimWs}`)).statusCode).not.toBe(200);
    expect(await signInStatus('target@example.com', newPassword)).toBe(401);
    const after = await h.database.pool.query(`SELECT name, password_hash, email_verified_at FROM users WHERE id = $1`, [victimId]);
    expect(after.rows[0]).toEqual({ name: 'Tia Target', password_hash: before, email_verified_at: null });
    expect((await victim.c.get('/app/check-email')).statusCode).toBe(200); // the victim's session is intact
    // A made-up proof, or none, finishes nothing.
    for (const mail_token of ['', '9999999999.' + 'A'.repeat(43)]) {
      const forged = await out.post('/app/invitation/finish', { token, mail_token, name: 'Mallory', password: newPassword }, { from: pathOf(copied) });
      expect(forged.statusCode).toBe(403);
    }
    expect((await h.database.pool.query(`SELECT password_hash FROM users WHERE id = $1`, [victimId])).rows[0].password_hash).toBe(before);

    // The mail went to the victim's address only; its link completes the claim there.
    const finish = (await deliver('target@example.com')).find((mail) => mail.parsed.subject === 'Finish joining the Marketplace console');
    expect(smtp.to('mallory@example.com').some((mail) => mail.parsed.subject === 'Finish joining the Marketplace console')).toBe(false);
    const mailed = linkIn(finish!.parsed.text, 'invitation');
    const real = consoleClient(h, nextIp());
    const claimed = await real.post('/app/invitation/finish', { token, mail_token: new URL(mailed).searchParams.get('mail_token')!, name: 'Tia Real', password: newPassword }, { from: pathOf(mailed) });
    expect([claimed.statusCode, /<p class="problem"[^>]*>([^<]*)</.exec(claimed.body)?.[1]]).toEqual([303, undefined]);
    expect(claimed.headers.location).toBe(`/app/w/${ownWs}`);
    expect((await real.get(`/app/w/${victimWs}`)).statusCode).toBe(200);
    expect((await victim.c.get('/app')).headers.location).toBe('/app/sign-in');
  });

  it('signed in as an account that never confirmed its address: "Set a password to join" claims it from that session; signed out, that form claims nothing', async () => {
    const me = await signUp('unsure@example.com', 'Una Unsure');
    const other = consoleClient(h, nextIp());
    expect((await other.post('/app/sign-in', { email: 'unsure@example.com', password })).statusCode).toBe(303);
    const owner = await createUser(h.database.pool, { email: 'host@example.com', name: 'Hal Host', password });
    const workspaceId = (await createWorkspace(h.database.pool, { name: 'Hosts' })).id;
    await addMember(h.database.pool, { workspaceId }, owner.id, 'owner');
    const host = consoleClient(h, nextIp());
    await host.post('/app/sign-in', { email: 'host@example.com', password });
    const invited = await host.post(`/app/w/${workspaceId}/settings/members/invite`, { email: 'unsure@example.com', role: 'member' }, { from: `/app/w/${workspaceId}/settings/members` });
    const link = /id="invite-link"[^>]*value="([^"]+)"/.exec(invited.body)![1]!.replace(/&amp;/g, '&');
    const token = new URL(link).searchParams.get('token')!;

    // A signed-out post to the signed-in form shows the page again and claims nothing.
    const signedOut = await consoleClient(h, nextIp()).post('/app/invitation/claim', { token, name: 'Sneak', password: newPassword }, { from: pathOf(link) });
    expect(signedOut.statusCode).toBe(200);
    expect(signedOut.body).toContain('>Continue</button>');
    expect((await h.database.pool.query(`SELECT name FROM users WHERE email = 'unsure@example.com'`)).rows[0].name).toBe('Una Unsure');

    const view = await me.c.get(pathOf(link));
    expect(view.body).toContain('Set a password to join');
    expect(view.body).toContain('<label for="f-password">New password</label>');
    expect(view.body).toContain('value="Una Unsure"');
    const short = await me.c.post('/app/invitation/claim', { token, name: 'Una Sure', password: 'short' }, { from: pathOf(link) });
    expect(short.statusCode).toBe(422);
    const claimed = await me.c.post('/app/invitation/claim', { token, name: 'Una Sure', password: newPassword }, { from: pathOf(link) });
    expect(claimed.statusCode).toBe(303);
    expect(claimed.headers.location).toBe(`/app/w/${workspaceId}`);
    // This browser goes on in a new session; the account's other session ended.
    expect((await me.c.get(`/app/w/${workspaceId}`)).statusCode).toBe(200);
    expect((await other.get('/app')).headers.location).toBe('/app/sign-in');
    const user = await h.database.pool.query(`SELECT name, email_verified_at FROM users WHERE email = 'unsure@example.com'`);
    expect(user.rows[0].name).toBe('Una Sure');
    expect(user.rows[0].email_verified_at).not.toBeNull();
  });

  it('"Forgot password?" also takes back an account made with one\'s address, and confirms it', async () => {
    const squatter = await signUp('victim@example.com', 'Squatter');
    const [confirmation] = await deliver('victim@example.com');
    // The real owner opens the confirmation mail: without the squatter's password it confirms nothing.
    const victim = consoleClient(h, nextIp());
    const page = await victim.get(pathOf(linkIn(confirmation!.parsed.text, 'verify-email')));
    expect(page.body).toContain('>Sign in and confirm</button>');
    expect(page.body).toContain('Forgot password?');
    await victim.post('/app/forgot-password', { email: 'victim@example.com' });
    const [reset] = await deliver('victim@example.com');
    const link = linkIn(reset!.parsed.text, 'reset-password');
    await victim.post('/app/reset-password', { token: new URL(link).searchParams.get('token')!, password: newPassword }, { from: pathOf(link) });
    expect((await victim.get('/app')).headers.location).toMatch(/^\/app\/w\/\d+$/);
    expect((await squatter.c.get('/app')).headers.location).toBe('/app/sign-in');
    // The old confirmation link died with the reset.
    expect((await consoleClient(h, nextIp()).get(pathOf(linkIn(confirmation!.parsed.text, 'verify-email')))).statusCode).toBe(409);
  });
});

describe('Mail with SMTP on — security', () => {
  it('no link, token or SMTP password reaches the log', async () => {
    const all = h.logs.join('');
    expect(all).not.toContain(smtp.password);
    // The request log names a link's page with its token redacted; the mails' own links never appear.
    expect(all).not.toMatch(/token=(?!\[REDACTED\])/);
    expect(all).not.toContain('http://127.0.0.1:3000/app/');
    const tokens = smtp.received.flatMap((m) => [...(m.parsed.text ?? '').matchAll(/token=([A-Za-z0-9_-]+)/g)].map((x) => x[1]!));
    expect(tokens.length).toBeGreaterThan(10);
    for (const token of tokens) expect(all).not.toContain(token);
    expect(all).toContain('"msg":"mail sent"');
    const sent = await h.database.pool.query(`SELECT count(*)::int AS n FROM mail_outbox WHERE status = 'sent' AND (body_text IS NOT NULL OR body_html IS NOT NULL)`);
    expect(sent.rows[0].n).toBe(0);
  });
});

describe('EMAIL_VERIFICATION=optional — security', async () => {
  const o = await setupApp({ SIGNUP: 'open', EMAIL_VERIFICATION: 'optional', SIGNUPS_PER_ADDRESS_PER_HOUR: 1000 });

  it('an unconfirmed person uses the console, but makes no spending key and joins no invitation as they are; confirmed, they do', async () => {
    const c = consoleClient(o, nextIp());
    const res = await c.post('/app/sign-up', { name: 'Opal Optional', email: 'optional@example.com', password });
    const home = res.headers.location!;
    expect(home).toMatch(/^\/app\/w\/\d+$/);
    const overview = await c.get(home);
    expect(overview.statusCode).toBe(200);
    expect(overview.body).toContain('Your email address is not confirmed yet');
    const keys = await c.get(`${home}/settings/api-keys`);
    expect(keys.body).not.toContain('id="f-can_place_orders"');
    expect(keys.body).toContain('A key that can place orders needs your email address confirmed first');
    const forged = await c.post(`${home}/settings/api-keys`, { name: 'Spender', can_place_orders: '1' });
    expect(forged.statusCode).toBe(403);
    expect(forged.body).toContain('Confirm your email address first');
    expect((await c.post(`${home}/settings/api-keys`, { name: 'Reader' })).statusCode).toBe(200);

    // Invited while unconfirmed: the link offers no "Join", and a forged join is refused.
    const owner = await createUser(o.database.pool, { email: 'opt-owner@example.com', name: 'Otto Owner', password });
    const workspaceId = (await createWorkspace(o.database.pool, { name: 'Optional team' })).id;
    await addMember(o.database.pool, { workspaceId }, owner.id, 'owner');
    const boss = consoleClient(o, nextIp());
    await boss.post('/app/sign-in', { email: 'opt-owner@example.com', password });
    const invited = await boss.post(`/app/w/${workspaceId}/settings/members/invite`, { email: 'optional@example.com', role: 'member' }, { from: `/app/w/${workspaceId}/settings/members` });
    const link = /id="invite-link"[^>]*value="([^"]+)"/.exec(invited.body)![1]!.replace(/&amp;/g, '&');
    const token = new URL(link).searchParams.get('token')!;
    const view = await c.get(pathOf(link));
    expect(view.body).not.toContain('>Join</button>');
    expect(view.body).toContain('Set a password to join');
    const join = await c.post('/app/invitation', { token }, { from: pathOf(link) });
    expect(join.statusCode).toBe(403);
    expect(join.body).toContain('cannot join as it is');

    // Confirmed through the mailed link: the box is there and a spending key is made.
    const confirm = await outboxLink(o.database.pool, 'optional@example.com', 'verify_email');
    await c.post('/app/verify-email', { token: new URLSearchParams(confirm.split('?')[1]).get('token')! }, { from: confirm });
    expect((await c.get(home)).body).not.toContain('Your email address is not confirmed yet');
    expect((await c.get(`${home}/settings/api-keys`)).body).toContain('id="f-can_place_orders"');
    expect((await c.post(`${home}/settings/api-keys`, { name: 'Spender', can_place_orders: '1' })).statusCode).toBe(200);
    expect((await c.post('/app/invitation', { token }, { from: pathOf(link) })).headers.location).toBe(`/app/w/${workspaceId}`);
  });
});
