import { describe, expect, it } from 'vitest';
import { setStaff } from '../../src/domain/users/user-service.js';
import { setupApp } from '../helpers/app.js';
import { workspaceWithKeys } from '../helpers/fixtures.js';
import { expectLedgerInvariants } from '../helpers/ledger-invariants.js';
import { PASSWORD, personIn } from '../helpers/notify.js';
import { consoleClient } from './helpers.js';

// Adding funds and the operations console through app.inject, as a browser without JavaScript
// (docs/billing.md): an owner's "Add funds", the request's page and its invoice; members and
// viewers refused (403); staff confirm, reject and adjust at /app/ops, which is 404 for everyone
// else; two staff pressing at once credit once; staff actions shown with their author; no key on
// any staff page. The same flow in Chromium is browser-funds.test.ts.

const h = await setupApp({ SIGNIN_FAILURES_PER_ADDRESS: 1000, RATE_LIMIT_PER_MINUTE: 1_000_000, TOPUP_MIN_CENTS: 1_000, TOPUP_MAX_CENTS: 5_000_000 });
const pool = h.database.pool;
let ip = 0;

async function signedIn(user: { email: string }) {
  const c = consoleClient(h, `10.58.0.${++ip}`);
  expect((await c.post('/app/sign-in', { email: user.email, password: PASSWORD })).statusCode).toBe(303);
  return c;
}

/** A workspace with an owner, a member and a viewer, each signed in; its keys too (for the "no keys on staff pages" check). */
async function setup(balanceCents = 1_000) {
  const ws = await workspaceWithKeys(pool, { balanceCents, name: `Acme ${ip + 1}` });
  const people = {
    owner: await personIn(h, { workspaceId: ws.workspaceId }, 'owner', { name: 'Olga Owner' }),
    member: await personIn(h, { workspaceId: ws.workspaceId }, 'member'),
    viewer: await personIn(h, { workspaceId: ws.workspaceId }, 'viewer'),
  };
  return {
    ws,
    w: `/app/w/${ws.workspaceId}`,
    owner: await signedIn(people.owner),
    member: await signedIn(people.member),
    viewer: await signedIn(people.viewer),
  };
}

/** A staff member signed in: a user with no membership, made staff as `user set-staff` does. */
async function staffMember(name: string) {
  const other = await workspaceWithKeys(pool);
  const person = await personIn(h, { workspaceId: other.workspaceId }, 'viewer', { name });
  await pool.query('DELETE FROM memberships WHERE user_id = $1', [person.id]);
  await setStaff(pool, person.id, true);
  return { c: await signedIn(person), id: person.id, name };
}

const hidden = (page: string, name: string) => new RegExp(`name="${name}" value="([^"]+)"`).exec(page)?.[1];
const balanceOf = async (workspaceId: number) =>
  Number((await pool.query(`SELECT balance FROM ledger_accounts WHERE workspace_id = $1 AND kind = 'available'`, [workspaceId])).rows[0].balance);

/** The owner asks for a top-up on the Funds page: answers the request's id and reference. */
async function addFunds(s: Awaited<ReturnType<typeof setup>>, amount: string) {
  const form = await s.owner.get(`${s.w}/funds`);
  const res = await s.owner.post(`${s.w}/funds`, { amount_usd: amount, idempotency_key: hidden(form.body, 'idempotency_key')! }, { from: `${s.w}/funds` });
  expect(res.statusCode, res.body).toBe(303);
  const id = Number(/\/funds\/(\d+)\?done=requested$/.exec(res.headers.location!)![1]);
  const { rows } = await pool.query<{ reference: string }>('SELECT reference FROM top_up_requests WHERE id = $1', [id]);
  return { id, reference: rows[0]!.reference, path: `${s.w}/funds/${id}` };
}

describe('Funds (/app/w/{id}/funds) — happy', () => {
  it('an owner adds funds: the request with its reference and instructions, its printable invoice; nothing credited yet', async () => {
    const s = await setup();
    const page = await s.owner.get(`${s.w}/funds`);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('Add funds');
    expect(page.body).toContain('from $10.00 to $50,000.00');
    expect(page.body).toMatch(/<a href="\/app\/w\/\d+\/funds" aria-current="page">Funds<\/a>/);
    const t = await addFunds(s, '250.50');
    const shown = await s.owner.get(`${t.path}?done=requested`);
    expect(shown.body).toContain(`Requested: pay $250.50 with the reference ${t.reference}.`);
    expect(shown.body).toContain('Waiting for your payment');
    expect(shown.body).toMatch(new RegExp(`Pay \\$250\\.50 by bank transfer[^<]*${t.reference}`));
    expect(shown.body).toContain('Cancel top-up');
    const invoice = await s.owner.get(`${t.path}/invoice`);
    expect(invoice.statusCode).toBe(200);
    expect(invoice.headers['content-type']).toMatch(/^text\/html/);
    expect(invoice.body).toContain('<link rel="stylesheet" href="/app/assets/invoice.css">');
    expect(invoice.body).toContain(`Invoice ${t.reference}`);
    expect(invoice.body).toContain(`${s.ws.workspaceId}`);
    expect(invoice.body).toContain('$250.50');
    expect(invoice.body).not.toContain('class="sections"');
    const css = await s.owner.get('/app/assets/invoice.css');
    expect(css.statusCode).toBe(200);
    expect(css.body).toContain('@media print');
    expect(await balanceOf(s.ws.workspaceId)).toBe(1_000);
  });

  it('the same form sent twice requests once', async () => {
    const s = await setup();
    const form = await s.owner.get(`${s.w}/funds`);
    const fields = { amount_usd: '40', idempotency_key: hidden(form.body, 'idempotency_key')! };
    const [a, b] = [await s.owner.post(`${s.w}/funds`, fields, { from: `${s.w}/funds` }), await s.owner.post(`${s.w}/funds`, fields, { from: `${s.w}/funds` })];
    expect(a.headers.location).toBe(b.headers.location);
    expect((await pool.query('SELECT count(*)::int AS n FROM top_up_requests WHERE workspace_id = $1', [s.ws.workspaceId])).rows[0].n).toBe(1);
  });

  it('cancel while pending; the form sent again meets the new status (409) and the page as it is', async () => {
    const s = await setup();
    const t = await addFunds(s, '30');
    const cancelled = await s.owner.post(`${t.path}/cancel`, {}, { from: t.path });
    expect(cancelled.statusCode).toBe(303);
    expect((await s.owner.get(cancelled.headers.location!)).body).toContain('Cancelled: a payment sent for it now is not added to the balance.');
    const again = await s.owner.post(`${t.path}/cancel`, {}, { from: `${s.w}/funds` });
    expect(again.statusCode).toBe(409);
    expect(again.body).toContain('Nothing was cancelled: the top-up is cancelled.');
  });
});

describe('Funds — unhappy', () => {
  it('members and viewers see the page without the form; their posts are 403 and request nothing', async () => {
    const s = await setup();
    const t = await addFunds(s, '20');
    for (const c of [s.member, s.viewer]) {
      const page = await c.get(`${s.w}/funds`);
      expect(page.statusCode).toBe(200);
      expect(page.body).not.toContain('Request top-up');
      expect(page.body).toContain("Only the workspace's owners add funds.");
      const posted = await c.post(`${s.w}/funds`, { amount_usd: '20', idempotency_key: '00000000-0000-4000-8000-000000000000' }, { from: `${s.w}/funds` });
      expect(posted.statusCode).toBe(403);
      expect((await c.get(t.path)).body).not.toContain('Cancel top-up');
      expect((await c.post(`${t.path}/cancel`, {}, { from: t.path })).statusCode).toBe(403);
    }
    expect((await pool.query('SELECT status, count(*)::int AS n FROM top_up_requests WHERE workspace_id = $1 GROUP BY status', [s.ws.workspaceId])).rows).toEqual([{ status: 'pending', n: 1 }]);
  });

  it('an amount outside the limits or not a number: 422, the field named, what was typed kept; another workspace is 404', async () => {
    const s = await setup();
    for (const [typed, words] of [
      ['9.99', 'Amount (USD) must be at least $10.00'],
      ['50000.01', 'Amount (USD) must be at most $50,000.00'],
      ['ten', 'Amount (USD) must be a number of US dollars such as 150 or 99.50'],
      ['', 'Amount (USD) is required'],
    ]) {
      const form = await s.owner.get(`${s.w}/funds`);
      const res = await s.owner.post(`${s.w}/funds`, { amount_usd: typed!, idempotency_key: hidden(form.body, 'idempotency_key')! }, { from: `${s.w}/funds` });
      expect(res.statusCode, typed).toBe(422);
      expect(res.body, typed).toContain(words);
      expect(res.body).toContain(`value="${typed}"`);
    }
    const other = await setup();
    const theirs = await addFunds(other, '15');
    expect((await s.owner.get(`${s.w}/funds/${theirs.id}`)).statusCode).toBe(404);
    expect((await s.owner.get(`${other.w}/funds/${theirs.id}/invoice`)).statusCode).toBe(404);
    expect((await s.owner.post(`${s.w}/funds/${theirs.id}/cancel`, {}, { from: `${s.w}/funds` })).statusCode).toBe(404);
  });
});

describe('The operations console (/app/ops)', () => {
  it('is 404 for anyone not staff, page and form alike, and has no link in their navigation; signed out it asks to sign in', async () => {
    const s = await setup();
    const t = await addFunds(s, '20');
    for (const path of ['/app/ops', `/app/ops/top-ups/${t.id}`, `/app/ops/workspaces/${s.ws.workspaceId}`, '/app/ops/publishers/1', '/app/ops/nothing']) {
      expect((await s.owner.get(path)).statusCode, path).toBe(404);
    }
    expect((await s.owner.post(`/app/ops/top-ups/${t.id}/confirm`, { received_usd: '20' }, { csrf: false })).statusCode).toBe(404);
    expect((await s.owner.post(`/app/ops/top-ups/${t.id}/confirm`, { received_usd: '20' }, { from: s.w })).statusCode).toBe(404);
    expect((await s.owner.post(`/app/ops/workspaces/${s.ws.workspaceId}/adjust`, { direction: 'credit', amount_usd: '5', reason: 'x' }, { from: s.w })).statusCode).toBe(404);
    expect((await s.owner.get(s.w)).body).not.toContain('href="/app/ops"');
    expect((await consoleClient(h, '10.58.9.9').get('/app/ops')).statusCode).toBe(303);
    expect(await balanceOf(s.ws.workspaceId)).toBe(1_000);
  });

  it('staff confirm a different amount: credited as received, shown with its author; the owner sees it paid and the balance', async () => {
    const s = await setup(0);
    const t = await addFunds(s, '100');
    const staff = await staffMember('Sam Staff');
    const home = await staff.c.get('/app/ops');
    expect(home.statusCode).toBe(200);
    expect(home.body).toContain('<a href="/app/ops" aria-current="page">Operations</a>');
    expect(home.body).toContain(`<a href="/app/ops/top-ups/${t.id}">${t.reference}</a>`);
    const page = await staff.c.get(`/app/ops/top-ups/${t.id}`);
    expect(page.body).toContain('value="100.00"');
    const done = await staff.c.post(`/app/ops/top-ups/${t.id}/confirm`, { received_usd: '99.5' }, { from: `/app/ops/top-ups/${t.id}` });
    expect(done.statusCode).toBe(303);
    expect((await staff.c.get(done.headers.location!)).body).toContain(`Confirmed: $99.50 added to ${(await pool.query('SELECT name FROM workspaces WHERE id = $1', [s.ws.workspaceId])).rows[0].name}`);
    expect(await balanceOf(s.ws.workspaceId)).toBe(9_950);
    const actions = (await staff.c.get('/app/ops')).body;
    expect(actions).toMatch(new RegExp(`<td>Sam Staff</td><td>Confirmed a top-up</td>.*<td>\\$99\\.50</td><td><a href="/app/ops/top-ups/${t.id}">${t.reference}</a>`));
    expect((await staff.c.get(`/app/ops/top-ups/${t.id}`)).body).toMatch(/Decided by<\/dt><dd>Sam Staff, /);
    const owner = await s.owner.get(t.path);
    expect(owner.body).toContain('Paid: funds added');
    expect(owner.body).toContain('$99.50');
    expect((await s.owner.get(`${s.w}/funds`)).body).toMatch(/Available balance<\/dt><dd>\$99\.50</);
    expect((await s.owner.get(`${t.path}/invoice`)).body).toContain('Paid: $99.50 received on');
    // Confirmed once: the form again is 409, the page as it is now.
    const again = await staff.c.post(`/app/ops/top-ups/${t.id}/confirm`, { received_usd: '99.5' }, { from: '/app/ops' });
    expect(again.statusCode).toBe(409);
    expect(again.body).toContain('Nothing was done: the top-up is confirmed.');
    expect(await balanceOf(s.ws.workspaceId)).toBe(9_950);
  });

  it('two staff pressing "Confirm received" at once: one credit, one 409', async () => {
    const s = await setup(0);
    const t = await addFunds(s, '60');
    const [a, b] = [await staffMember('Staff A'), await staffMember('Staff B')];
    const path = `/app/ops/top-ups/${t.id}`;
    const [ta, tb] = [await a.c.token(path), await b.c.token(path)];
    const answers = await Promise.all([
      a.c.post(`${path}/confirm`, { received_usd: '60' }, { token: ta }),
      b.c.post(`${path}/confirm`, { received_usd: '60' }, { token: tb }),
    ]);
    expect(answers.map((r) => r.statusCode).sort()).toEqual([303, 409]);
    expect(await balanceOf(s.ws.workspaceId)).toBe(6_000);
    await expectLedgerInvariants(h.database);
  });

  it('staff reject with a reason (required), which the owner reads', async () => {
    const s = await setup();
    const t = await addFunds(s, '25');
    const staff = await staffMember('Rita Rejects');
    const empty = await staff.c.post(`/app/ops/top-ups/${t.id}/reject`, { reason: ' ' }, { from: `/app/ops/top-ups/${t.id}` });
    expect(empty.statusCode).toBe(422);
    expect(empty.body).toContain('Reason is required');
    const done = await staff.c.post(`/app/ops/top-ups/${t.id}/reject`, { reason: 'No transfer arrived with this reference.' }, { from: `/app/ops/top-ups/${t.id}` });
    expect(done.statusCode).toBe(303);
    const owner = (await s.owner.get(t.path)).body;
    expect(owner).toContain('Rejected');
    expect(owner).toContain('No transfer arrived with this reference.');
    expect((await staff.c.get('/app/ops')).body).toMatch(/<td>Rita Rejects<\/td><td>Rejected a top-up<\/td>/);
  });

  it('staff find workspaces and publishers by name, id or reference, with balances, and see no key anywhere', async () => {
    const s = await setup(12_345);
    const t = await addFunds(s, '10');
    const staff = await staffMember('Finn Finder');
    const name = (await pool.query('SELECT name FROM workspaces WHERE id = $1', [s.ws.workspaceId])).rows[0].name as string;
    const { rows } = await pool.query(`INSERT INTO publishers (name) VALUES ('Finder Daily') RETURNING id`);
    await pool.query(`INSERT INTO ledger_accounts (kind, publisher_id) VALUES ('pending', $1), ('payable', $1)`, [rows[0].id]);
    const byName = (await staff.c.get(`/app/ops?q=${encodeURIComponent(name.toLowerCase())}`)).body;
    expect(byName).toContain(`<a href="/app/ops/workspaces/${s.ws.workspaceId}">${name}</a></td><td>${s.ws.workspaceId}</td><td>$123.45</td>`);
    expect((await staff.c.get(`/app/ops?q=${s.ws.workspaceId}`)).body).toContain(`/app/ops/workspaces/${s.ws.workspaceId}`);
    expect((await staff.c.get('/app/ops?q=finder%20daily')).body).toContain(`<a href="/app/ops/publishers/${rows[0].id}">Finder Daily</a>`);
    expect((await staff.c.get(`/app/ops?q=${t.reference.toLowerCase().replace(/-/g, ' ')}`)).body).toContain(`Top-up <a href="/app/ops/top-ups/${t.id}">${t.reference}</a>`);
    expect((await staff.c.get('/app/ops?q=zzz-nothing-here')).body).toContain('Nothing found.');
    expect((await staff.c.get(`/app/ops/publishers/${rows[0].id}`)).body).toContain('Payable');
    // Keys: none of the workspace's keys, nor any prefix of one, is on a staff page.
    const { rows: keys } = await pool.query<{ prefix: string }>('SELECT prefix FROM api_keys WHERE workspace_id = $1', [s.ws.workspaceId]);
    expect(keys.length).toBeGreaterThan(0);
    for (const path of ['/app/ops', `/app/ops?q=${s.ws.workspaceId}`, `/app/ops/workspaces/${s.ws.workspaceId}`, `/app/ops/top-ups/${t.id}`]) {
      const body = (await staff.c.get(path)).body;
      for (const key of [s.ws.readKey, s.ws.spendKey, ...keys.map((k) => k.prefix)]) expect(body, path).not.toContain(key);
      expect(body).not.toContain('mk_');
    }
    // Being staff is no membership: the workspace's own pages stay 404.
    expect((await staff.c.get(s.w)).statusCode).toBe(404);
    expect((await staff.c.get(`${s.w}/settings/api-keys`)).statusCode).toBe(404);
  });

  it('adjust with a reason: credited, listed with the author; a bad form is 422 naming each field; sent twice, adjusted once', async () => {
    const s = await setup(1_000);
    const staff = await staffMember('Ada Adjuster');
    const path = `/app/ops/workspaces/${s.ws.workspaceId}`;
    const keyOf = async () => hidden((await staff.c.get(path)).body, 'idempotency_key')!;
    const noReason = await staff.c.post(`${path}/adjust`, { direction: 'credit', amount_usd: '5', reason: '', idempotency_key: await keyOf() }, { from: path });
    expect(noReason.statusCode).toBe(422);
    expect(noReason.body).toContain('Reason is required');
    const tooMuch = await staff.c.post(`${path}/adjust`, { direction: 'debit', amount_usd: '10.01', reason: 'Wrong', idempotency_key: await keyOf() }, { from: path });
    expect(tooMuch.statusCode).toBe(422);
    expect(tooMuch.body).toContain('Amount (USD) is more than the available balance ($10.00)');
    const noWay = await staff.c.post(`${path}/adjust`, { direction: 'sideways', amount_usd: '1', reason: 'x', idempotency_key: await keyOf() }, { from: path });
    expect(noWay.statusCode).toBe(422);
    expect(noWay.body).toContain('Direction must be credit or debit');
    const fields = { direction: 'credit', amount_usd: '12.34', reason: 'Goodwill for the outage', idempotency_key: await keyOf() };
    const [a, b] = [await staff.c.post(`${path}/adjust`, fields, { from: path }), await staff.c.post(`${path}/adjust`, fields, { from: path })];
    expect([a.statusCode, b.statusCode]).toEqual([303, 303]);
    expect(await balanceOf(s.ws.workspaceId)).toBe(1_000 + 1_234);
    const page = (await staff.c.get(a.headers.location!)).body;
    expect(page).toContain('Adjusted: the available balance is now $22.34.');
    expect(page).toMatch(/<td>Ada Adjuster<\/td><td>\$12\.34<\/td><td class="prewrap">Goodwill for the outage<\/td>/);
    expect((await staff.c.get('/app/ops')).body).toMatch(/<td>Ada Adjuster<\/td><td>Adjusted the balance<\/td>.*<td>\$12\.34<\/td><td>Goodwill for the outage<\/td>/);
    await expectLedgerInvariants(h.database);
  });

  it('a staff member made not staff gets 404 on the next page', async () => {
    const staff = await staffMember('Gone Soon');
    expect((await staff.c.get('/app/ops')).statusCode).toBe(200);
    await setStaff(pool, staff.id, false);
    expect((await staff.c.get('/app/ops')).statusCode).toBe(404);
  });
});
