import { describe, expect, it } from 'vitest';
import { createKey } from '../../src/domain/keys/key-service.js';
import { createPublisher } from '../../src/domain/publishers/publisher-service.js';
import { addMember, roleIn } from '../../src/domain/users/memberships.js';
import { createUser, findUserByEmail } from '../../src/domain/users/user-service.js';
import { createWorkspace, getApprovalRules } from '../../src/domain/workspaces/workspace-service.js';
import { setupApp } from '../helpers/app.js';
import { joinByMail, consoleClient } from './helpers.js';

// Settings → Members, the invite link, and Settings → Approval rules, through app.inject as a
// browser without JavaScript. Every refusal is the domain's; these check the pages show it.

const h = await setupApp({ SIGNUP: 'closed', SIGNIN_FAILURES_PER_ACCOUNT: 3, SIGNIN_FAILURES_PER_ADDRESS: 1000, SIGNUPS_PER_ADDRESS_PER_HOUR: 100, INVITATIONS_PER_WORKSPACE_PER_DAY: 3 });
const password = 'correct horse battery';
const DAY = 86_400_000;

let n = 0;
/** A user with their own browser, signed in. */
async function person(name: string) {
  n++;
  const email = `member${n}@example.com`;
  const user = await createUser(h.database.pool, { email, name, password });
  const c = consoleClient(h, `10.3.0.${n}`);
  expect((await c.post('/app/sign-in', { email, password })).statusCode).toBe(303);
  return { c, user, email };
}

/** A workspace (made as the CLI makes one) owned by a signed-in person. */
async function ownedWorkspace() {
  const owner = await person('Olga Owner');
  const ws = await createWorkspace(h.database.pool, { name: `Members ${n}` });
  await addMember(h.database.pool, { workspaceId: ws.id }, owner.user.id, 'owner');
  return { owner, ws, base: `/app/w/${ws.id}` };
}

const linkIn = (body: string) => {
  const m = /id="invite-link"[^>]*value="([^"]+)"/.exec(body);
  return m ? new URL(m[1]!.replaceAll('&amp;', '&')) : undefined;
};

describe('Console members page (/app/w/{id}/settings/members) and invitation links — happy', () => {
  it('invite → the link (no-store, not in the log) → sign up through it → member → role changed → removed', async () => {
    const { owner, ws, base } = await ownedWorkspace();
    const bad = await owner.c.post(`${base}/settings/members/invite`, { email: 'not an email', role: 'boss' }, { from: `${base}/settings/members` });
    expect(bad.statusCode).toBe(422);
    expect(bad.body).toContain('Nobody was invited');

    const invited = await owner.c.post(`${base}/settings/members/invite`, { email: 'New.Person@example.com', role: 'member' }, { from: `${base}/settings/members` });
    expect(invited.statusCode).toBe(200);
    expect(invited.headers['cache-control']).toBe('no-store');
    const link = linkIn(invited.body)!;
    expect(link.pathname).toBe('/app/invitation');
    const token = link.searchParams.get('token')!;
    expect((await owner.c.get(`${base}/settings/members`)).body).toContain('New.Person@example.com');

    // Signed in as someone else: the page says so, and joining is refused.
    const other = await person('Otto Other');
    const wrong = await other.c.get(`/app/invitation?token=${token}`);
    expect(wrong.body).toContain('this invitation is for New.Person@example.com');
    expect((await other.c.post('/app/invitation', { token }, { from: `/app/invitation?token=${token}` })).statusCode).toBe(403);

    // A new person: sign up through the link, even with SIGNUP=closed.
    const newcomer = consoleClient(h, '10.3.9.1');
    const landing = await newcomer.get(`/app/invitation?token=${token}`);
    expect(landing.statusCode).toBe(200);
    expect(landing.body).toContain('>Continue</button>');
    // No account yet: the one form makes none; it mails the address a link that does.
    const asked = await newcomer.post('/app/invitation/accept', { token, name: 'Nia New', password: 'short' }, { from: `/app/invitation?token=${token}` });
    expect(asked.statusCode).toBe(200);
    expect(asked.body).toContain('Check your email');
    expect(await findUserByEmail(h.database.pool, 'new.person@example.com')).toBeNull();
    const joined = await joinByMail(h, newcomer, token, 'New.Person@example.com', { name: 'Nia New', password });
    expect(joined.statusCode).toBe(303);
    expect(joined.headers.location).toBe(base);
    expect((await newcomer.get(base)).statusCode).toBe(200);
    const niaUser = (await findUserByEmail(h.database.pool, 'new.person@example.com'))!;
    expect(await roleIn(h.database.pool, niaUser.id, { workspaceId: ws.id })).toBe('member');

    // Used up.
    const again = await consoleClient(h, '10.3.9.2').get(`/app/invitation?token=${token}`);
    expect(again.statusCode).toBe(409);

    // The token never reached a log line.
    const logs = h.logs.join('');
    expect(logs).not.toContain(token);

    // The owner promotes her, then removes her.
    const promoted = await owner.c.post(`${base}/settings/members/${niaUser.id}/role`, { role: 'owner' }, { from: `${base}/settings/members` });
    expect(promoted.statusCode).toBe(303);
    expect(await roleIn(h.database.pool, niaUser.id, { workspaceId: ws.id })).toBe('owner');
    const confirm = await owner.c.get(`${base}/settings/members/${niaUser.id}/remove`);
    expect(confirm.body).toContain('>Remove</button>');
    const removed = await owner.c.post(`${base}/settings/members/${niaUser.id}/remove`, {}, { from: `${base}/settings/members/${niaUser.id}/remove` });
    expect(removed.statusCode).toBe(303);
    expect(await roleIn(h.database.pool, niaUser.id, { workspaceId: ws.id })).toBeNull();
    expect((await newcomer.get(base)).statusCode).toBe(404);
  });

  it('an existing account signs in through the link (wrong password counted), and an expired link says so', async () => {
    const { owner, base } = await ownedWorkspace();
    const pub = await createPublisher(h.database.pool, 'Members publisher');
    await addMember(h.database.pool, { publisherId: pub.id }, owner.user.id, 'owner');
    const existing = await createUser(h.database.pool, { email: 'existing@example.com', name: 'Ed Existing', password });
    const invited = await owner.c.post(`/app/p/${pub.id}/settings/members/invite`, { email: 'existing@example.com', role: 'viewer' }, { from: `/app/p/${pub.id}/settings/members` });
    const token = linkIn(invited.body)!.searchParams.get('token')!;
    const ed = consoleClient(h, '10.3.9.3');
    expect((await ed.get(`/app/invitation?token=${token}`)).body).toContain('>Continue</button>');
    // The same form: for an existing account its password signs in (a name typed is not used).
    const wrong = await ed.post('/app/invitation/accept', { token, name: 'Someone', password: 'not the password' }, { from: `/app/invitation?token=${token}` });
    expect(wrong.statusCode).toBe(401);
    expect(wrong.body).toContain('Email or password is wrong');
    const right = await ed.post('/app/invitation/accept', { token, name: '', password }, { from: `/app/invitation?token=${token}` });
    expect(right.statusCode).toBe(303);
    expect(right.headers.location).toBe(`/app/p/${pub.id}`);
    expect(await roleIn(h.database.pool, existing.id, { publisherId: pub.id })).toBe('viewer');

    const late = await owner.c.post(`${base}/settings/members/invite`, { email: 'late@example.com', role: 'member' }, { from: `${base}/settings/members` });
    const lateToken = linkIn(late.body)!.searchParams.get('token')!;
    h.clock.advance(7 * DAY);
    const expired = await consoleClient(h, '10.3.9.4').get(`/app/invitation?token=${lateToken}`);
    expect(expired.statusCode).toBe(409);
    expect(expired.body).toContain('expired');
    expect((await consoleClient(h, '10.3.9.5').get('/app/invitation?token=nonsense')).statusCode).toBe(404);
  });
});

describe('Console members page: removing someone, and the keys they made — happy', () => {
  const keyState = async (workspaceId: number, name: string) =>
    (await h.database.pool.query<{ revoked: boolean }>('SELECT revoked_at IS NOT NULL AS revoked FROM api_keys WHERE workspace_id = $1 AND name = $2', [workspaceId, name])).rows[0]!.revoked
      ? 'revoked'
      : 'active';

  /** A workspace whose member Mo made a key in the console; its owner made one, and the CLI one. */
  async function withKeys() {
    const { owner, ws, base } = await ownedWorkspace();
    const mo = await person('Mo Maker');
    await addMember(h.database.pool, { workspaceId: ws.id }, mo.user.id, 'member');
    const keys = `${base}/settings/api-keys`;
    expect((await mo.c.post(keys, { name: 'Mo reader' }, { from: keys })).statusCode).toBe(200);
    expect((await owner.c.post(keys, { name: 'Olga spender', can_place_orders: '1' }, { from: keys })).statusCode).toBe(200);
    await createKey(h.database.pool, { workspaceId: ws.id, name: 'CLI key' });
    return { owner, mo, ws, base, remove: `${base}/settings/members/${mo.user.id}/remove` };
  }

  it('the Remove page lists the keys they made with "Also revoke their keys" ticked; removing with it revokes those keys and no other', async () => {
    const { owner, ws, remove } = await withKeys();
    const page = await owner.c.get(remove);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('Mo reader');
    expect(page.body).not.toContain('Olga spender');
    expect(page.body).not.toContain('CLI key');
    expect(page.body).toMatch(/<input id="f-revoke_keys" name="revoke_keys" type="checkbox" value="1"[^>]* checked>/);
    expect(page.body).toContain('Also revoke their keys');
    const removed = await owner.c.post(remove, { revoke_keys: '1' }, { from: remove });
    expect(removed.statusCode).toBe(303);
    expect([await keyState(ws.id, 'Mo reader'), await keyState(ws.id, 'Olga spender'), await keyState(ws.id, 'CLI key')]).toEqual(['revoked', 'active', 'active']);
  });

  it('unticked, the keys they made stay: they are the workspace\'s', async () => {
    const { owner, ws, mo, remove } = await withKeys();
    expect((await owner.c.post(remove, {}, { from: remove })).statusCode).toBe(303);
    expect(await roleIn(h.database.pool, mo.user.id, { workspaceId: ws.id })).toBeNull();
    expect(await keyState(ws.id, 'Mo reader')).toBe('active');
  });

  it('a key rolled by someone else is theirs: the new key is not listed with the remover\'s choice', async () => {
    const { owner, ws, base, remove } = await withKeys();
    const { rows } = await h.database.pool.query<{ id: number }>(`SELECT id FROM api_keys WHERE workspace_id = $1 AND name = 'Mo reader'`, [ws.id]);
    const roll = `${base}/settings/api-keys/${rows[0]!.id}/roll`;
    expect((await owner.c.post(roll, { grace_hours: '0' }, { from: roll })).statusCode).toBe(200);
    const page = await owner.c.get(remove);
    expect(page.body).not.toContain('Mo reader'); // the rolled key stopped at once; the new one is the owner's
    expect(page.body).not.toContain('f-revoke_keys');
  });

  it('leaving: the page offers no such choice, and the keys they made stay', async () => {
    const { mo, ws, remove } = await withKeys();
    const page = await mo.c.get(remove);
    expect(page.body).toContain('>Leave</button>');
    expect(page.body).not.toContain('f-revoke_keys');
    expect((await mo.c.post(remove, { revoke_keys: '1' }, { from: remove })).statusCode).toBe(303);
    expect(await keyState(ws.id, 'Mo reader')).toBe('active');
  });

  it('a publisher account: the keys a member made are listed and revoked alike', async () => {
    const owner = await person('Pia Publisher');
    const pub = await createPublisher(h.database.pool, `Keys publisher ${n}`);
    await addMember(h.database.pool, { publisherId: pub.id }, owner.user.id, 'owner');
    const mo = await person('Max Member');
    await addMember(h.database.pool, { publisherId: pub.id }, mo.user.id, 'member');
    const keys = `/app/p/${pub.id}/settings/api-keys`;
    expect((await mo.c.post(keys, { name: 'Max key' }, { from: keys })).statusCode).toBe(200);
    const remove = `/app/p/${pub.id}/settings/members/${mo.user.id}/remove`;
    expect((await owner.c.get(remove)).body).toContain('Max key');
    expect((await owner.c.post(remove, { revoke_keys: '1' }, { from: remove })).statusCode).toBe(303);
    const { rows } = await h.database.pool.query(`SELECT revoked_at FROM api_keys WHERE publisher_id = $1 AND name = 'Max key'`, [pub.id]);
    expect(rows[0].revoked_at).not.toBeNull();
  });
});

describe('Console members page (/app/w/{id}/settings/members): roles, tenants, tokens — security', () => {
  it('a viewer sees members but no invite form, and a forged invite or role change is 403', async () => {
    const { ws, base } = await ownedWorkspace();
    const viewer = await person('Vic Viewer');
    await addMember(h.database.pool, { workspaceId: ws.id }, viewer.user.id, 'viewer');
    const page = await viewer.c.get(`${base}/settings/members`);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('Olga Owner');
    expect(page.body).not.toContain('>Invite</button>');
    expect(page.body).not.toContain('Change role');
    const forged = await viewer.c.post(`${base}/settings/members/invite`, { email: 'x@example.com', role: 'owner' }, { from: `${base}/settings/members` });
    expect(forged.statusCode).toBe(403);
    const promote = await viewer.c.post(`${base}/settings/members/${viewer.user.id}/role`, { role: 'owner' }, { from: `${base}/settings/members` });
    expect(promote.statusCode).toBe(403);
    expect(await roleIn(h.database.pool, viewer.user.id, { workspaceId: ws.id })).toBe('viewer');
  });

  it("another workspace's members page and actions are 404; a post without its token is 403", async () => {
    const { base } = await ownedWorkspace();
    const stranger = await person('Sam Stranger');
    expect((await stranger.c.get(`${base}/settings/members`)).statusCode).toBe(404);
    expect((await stranger.c.post(`${base}/settings/members/invite`, { email: 'x@example.com', role: 'owner' }, { from: '/app/sign-in' })).statusCode).toBe(404);
    const mine = await ownedWorkspace();
    const noToken = await mine.owner.c.post(`${mine.base}/settings/members/invite`, { email: 'x@example.com', role: 'member' }, { csrf: false });
    expect(noToken.statusCode).toBe(403);
    expect((await h.database.pool.query(`SELECT 1 FROM invitations WHERE email = 'x@example.com'`)).rowCount).toBe(0);
  });
});

describe('Console invitation links: which addresses have accounts — security', () => {
  it('the invite link opened signed out looks the same whether the address has an account or not', async () => {
    const { owner, base } = await ownedWorkspace();
    await createUser(h.database.pool, { email: 'has-account@example.com', name: 'Hal Has', password });
    const open = async (email: string) => {
      const res = await owner.c.post(`${base}/settings/members/invite`, { email, role: 'member' }, { from: `${base}/settings/members` });
      const token = linkIn(res.body)!.searchParams.get('token')!;
      const page = await consoleClient(h, '10.3.8.1').get(`/app/invitation?token=${token}`);
      expect(page.statusCode).toBe(200);
      // What differs by design: the token, the form token, the address itself.
      return page.body.replaceAll(token, 'TOKEN').replace(/name="_csrf" value="[^"]+"/g, 'name="_csrf" value="CSRF"').replaceAll(email, 'EMAIL');
    };
    expect(await open('no-account@example.com')).toBe(await open('has-account@example.com'));
  });

  it('invitations are limited per workspace: 429 with Retry-After, nothing made; a refused one does not count; another workspace is not affected', async () => {
    const { owner, ws, base } = await ownedWorkspace();
    const invite = (email: string, where = base) => owner.c.post(`${where}/settings/members/invite`, { email, role: 'viewer' }, { from: `${where}/settings/members` });
    expect((await invite('not an email')).statusCode).toBe(422);
    for (let i = 0; i < 3; i++) expect((await invite(`limited${i}@example.com`)).statusCode).toBe(200);
    const refused = await invite('limited3@example.com');
    expect(refused.statusCode).toBe(429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(refused.body).toContain('Nobody was invited');
    const pending = await h.database.pool.query('SELECT email FROM invitations WHERE workspace_id = $1', [ws.id]);
    expect(pending.rows.map((r) => r.email).sort()).toEqual(['limited0@example.com', 'limited1@example.com', 'limited2@example.com']);
    const other = await createWorkspace(h.database.pool, { name: 'Another of Olga' });
    await addMember(h.database.pool, { workspaceId: other.id }, owner.user.id, 'owner');
    expect((await invite('elsewhere@example.com', `/app/w/${other.id}`)).statusCode).toBe(200);
  });
});

describe('Console members page (/app/w/{id}/settings/members): the last owner — errors', () => {
  it('the last owner cannot demote or remove themselves; the page says why', async () => {
    const { owner, ws, base } = await ownedWorkspace();
    const demote = await owner.c.post(`${base}/settings/members/${owner.user.id}/role`, { role: 'member' }, { from: `${base}/settings/members` });
    expect(demote.statusCode).toBe(409);
    expect(demote.body).toContain('at least one owner');
    const leave = await owner.c.post(`${base}/settings/members/${owner.user.id}/remove`, {}, { from: `${base}/settings/members/${owner.user.id}/remove` });
    expect(leave.statusCode).toBe(409);
    expect(await roleIn(h.database.pool, owner.user.id, { workspaceId: ws.id })).toBe('owner');
  });
});

describe('Console approval rules page (/app/w/{id}/settings/rules) — happy', () => {
  it('an owner saves the rules (the same domain call as the CLI); a bad amount names the field; a member cannot', async () => {
    const { owner, ws, base } = await ownedWorkspace();
    const url = `${base}/settings/approval-rules`;
    expect((await owner.c.get(url)).body).toContain('No limit');
    const bad = await owner.c.post(url, { max_order: '12,34' }, { from: url });
    expect(bad.statusCode).toBe(422);
    expect(bad.body).toContain('Maximum order (USD) must be an amount');
    // Read as every form's amount (and the API's *_usd): rounded half up to the cent.
    expect((await owner.c.post(url, { max_order: '12.345' }, { from: url })).statusCode).toBe(200);
    expect((await getApprovalRules(h.database.pool, ws.id)).max_order_cents).toBe(1_235);
    const saved = await owner.c.post(url, { max_order: '250.5', auto_approve_drafts: '1' }, { from: url });
    expect(saved.statusCode).toBe(200);
    expect(saved.body).toContain('$250.50');
    expect(await getApprovalRules(h.database.pool, ws.id)).toMatchObject({ max_order_cents: 25_050, auto_approve_drafts: true });
    await owner.c.post(url, { max_order: '' }, { from: url });
    expect(await getApprovalRules(h.database.pool, ws.id)).toMatchObject({ max_order_cents: null, auto_approve_drafts: false });

    const member = await person('Mo Member');
    await addMember(h.database.pool, { workspaceId: ws.id }, member.user.id, 'member');
    const seen = await member.c.get(url);
    expect(seen.statusCode).toBe(200);
    expect(seen.body).toContain('Only an owner can change these rules');
    expect((await member.c.post(url, { max_order: '1' }, { from: url })).statusCode).toBe(403);
    expect((await getApprovalRules(h.database.pool, ws.id)).max_order_cents).toBeNull();
  });

  it('"Ask for approval above" is saved in cents, shown in dollars and cleared when empty; bad amounts are named; a member or viewer cannot change it', async () => {
    const { owner, ws, base } = await ownedWorkspace();
    const url = `${base}/settings/approval-rules`;
    const page = await owner.c.get(url);
    expect(page.body).toContain('<label for="f-approval_above">Ask for approval above (USD)</label>');
    expect(page.body).toMatch(/<dt>Ask for approval above<\/dt><dd>Never<\/dd>/);

    const saved = await owner.c.post(url, { max_order: '500', approval_above: '1,200.5' }, { from: url });
    expect(saved.statusCode, saved.body).toBe(200);
    expect(await getApprovalRules(h.database.pool, ws.id)).toMatchObject({ max_order_cents: 50_000, approval_above_cents: 120_050 });
    expect(saved.body).toMatch(/<dt>Ask for approval above<\/dt><dd>\$1,200\.50<\/dd>/);
    expect(saved.body).toMatch(/<input id="f-approval_above" name="approval_above" type="text" value="1200.50"/);
    // 0 is an amount: every order of a key asks.
    await owner.c.post(url, { max_order: '500', approval_above: '0' }, { from: url });
    expect((await getApprovalRules(h.database.pool, ws.id)).approval_above_cents).toBe(0);

    // Both fields bad: each is named, the typed text is kept, nothing is changed.
    const bad = await owner.c.post(url, { max_order: 'lots', approval_above: '1,2345' }, { from: url });
    expect(bad.statusCode).toBe(422);
    expect(bad.body).toContain('The rules were not changed: check the fields below.');
    expect(bad.body).toMatch(/<input id="f-approval_above"[^>]*value="1,2345"[^>]*aria-invalid="true"/);
    expect(bad.body).toContain('<p class="error" id="f-approval_above-error">Ask for approval above (USD) must be an amount such as 100 or 100.50, or empty for never</p>');
    expect(bad.body).toContain('<p class="error" id="f-max_order-error">Maximum order (USD) must be an amount');
    for (const value of ['-5', '1e3', '99999999999999999999']) {
      const refused = await owner.c.post(url, { max_order: '500', approval_above: value }, { from: url });
      expect(refused.statusCode, value).toBe(422);
      expect(refused.body).toContain('id="f-approval_above-error"');
    }
    expect((await getApprovalRules(h.database.pool, ws.id)).approval_above_cents).toBe(0);

    // Empty: never.
    await owner.c.post(url, { max_order: '500', approval_above: '' }, { from: url });
    expect(await getApprovalRules(h.database.pool, ws.id)).toMatchObject({ max_order_cents: 50_000, approval_above_cents: null });

    for (const role of ['member', 'viewer'] as const) {
      const other = await person(`Someone ${role}`);
      await addMember(h.database.pool, { workspaceId: ws.id }, other.user.id, role);
      const seen = await other.c.get(url);
      expect(seen.statusCode).toBe(200);
      expect(seen.body).toMatch(/<dt>Ask for approval above<\/dt><dd>Never<\/dd>/);
      expect(seen.body).not.toContain('f-approval_above');
      const forged = await other.c.post(url, { max_order: '500', approval_above: '1' }, { from: url });
      expect(forged.statusCode).toBe(403);
    }
    expect((await getApprovalRules(h.database.pool, ws.id)).approval_above_cents).toBeNull();
  });
});
