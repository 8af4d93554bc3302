import { describe, expect, it } from 'vitest';
import { visiblePrefix } from '../../src/domain/keys/key-format.js';
import { addMember } from '../../src/domain/users/memberships.js';
import { createUser } from '../../src/domain/users/user-service.js';
import { setupApp } from '../helpers/app.js';
import { bearer } from '../helpers/fixtures.js';
import { consoleClient, signUpConfirmed } from './helpers.js';

// "Orders need a person's approval" on the console's key form and key page (docs/console.md):
// what they store, who may change it, and a box on a key that cannot spend refused naming it.

const h = await setupApp({ SIGNUP: 'open', SIGNUPS_PER_ADDRESS_PER_HOUR: 100, RATE_LIMIT_PER_MINUTE: 1_000_000 });
const password = 'correct horse battery';
const LABEL = `<label for="f-needs_approval">Orders need a person's approval</label>`;

let n = 0;
async function signedUp() {
  n++;
  const c = consoleClient(h, `10.42.0.${n}`);
  const home = await signUpConfirmed(h, c, { name: `Approver ${n}`, email: `approver${n}@example.com`, password });
  return { c, home, keys: `${home}/settings/api-keys`, workspaceId: Number(home.split('/').pop()) };
}

const keyIn = (body: string) => /id="new-key"[^>]*value="([^"]+)"/.exec(body)?.[1];
const idOf = async (key: string) =>
  (await h.database.pool.query<{ id: number }>('SELECT id FROM api_keys WHERE prefix = $1', [visiblePrefix(key)])).rows[0]!.id;
const flagOf = async (id: number) =>
  (await h.database.pool.query<{ needs_approval: boolean }>('SELECT needs_approval FROM api_keys WHERE id = $1', [id])).rows[0]!.needs_approval;
const keyCount = async (workspaceId: number) =>
  (await h.database.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM api_keys WHERE workspace_id = $1', [workspaceId])).rows[0]!.n;
const me = async (key: string) => (await h.app.inject({ url: '/api/v1/me', headers: bearer(key) })).json().data.key;
const checked = (body: string) => /<input id="f-needs_approval"[^>]* checked>/.test(body);

describe('Console key form: "Orders need a person\'s approval" — happy', () => {
  it('ticked, a spending key is made with it (the API shows it, the key page says so); unticked, without', async () => {
    const a = await signedUp();
    const form = await a.c.get(a.keys);
    expect(form.body).toContain(LABEL);
    expect(checked(form.body)).toBe(false);

    const res = await a.c.post(a.keys, { name: 'Watched agent', can_place_orders: '1', needs_approval: '1' });
    expect(res.statusCode, res.body).toBe(200);
    const key = keyIn(res.body)!;
    const id = await idOf(key);
    expect(await flagOf(id)).toBe(true);
    expect(await me(key)).toMatchObject({ can_place_orders: true, needs_approval: true });
    const page = await a.c.get(`${a.keys}/${id}`);
    expect(page.body).toMatch(/<dt>Orders need a person.s approval<\/dt><dd>Yes<\/dd>/);
    expect(checked(page.body)).toBe(true);

    const plain = keyIn((await a.c.post(a.keys, { name: 'Trusted agent', can_place_orders: '1' })).body)!;
    expect(await flagOf(await idOf(plain))).toBe(false);
    expect(await me(plain)).toMatchObject({ needs_approval: false });
  });
});

describe('Console key form: "Orders need a person\'s approval" — errors', () => {
  it('ticked on a key that cannot place orders: 422 naming it, nothing created (here and on API access)', async () => {
    const a = await signedUp();
    const before = await keyCount(a.workspaceId);
    const res = await a.c.post(a.keys, { name: 'Reader', needs_approval: '1' });
    expect(res.statusCode).toBe(422);
    expect(res.body).toContain('The key was not created: check the fields below.');
    expect(res.body).toContain(`<p class="error" id="f-needs_approval-error">Orders need a person's approval is for a spending key (one that can place orders)</p>`);
    // Shown with its error though "Can place orders" is unticked, and kept ticked.
    expect(res.body).toContain('class="field check spending-only shown"');
    expect(checked(res.body)).toBe(true);
    const access = await a.c.post(`${a.home}/settings/api-access`, { name: 'Shop', needs_approval: '1' });
    expect(access.statusCode).toBe(422);
    expect(access.body).toContain('id="f-needs_approval-error"');
    // Sent twice: refused, not read as ticked or unticked.
    const twice = await a.c.post(a.keys, [['name', 'Agent'], ['can_place_orders', '1'], ['needs_approval', '1'], ['needs_approval', '']]);
    expect(twice.statusCode).toBe(422);
    expect(twice.body).toContain('must be sent once, as text');
    expect(await keyCount(a.workspaceId)).toBe(before);
  });
});

describe('Console key page: the approval form', () => {
  async function spendingKey() {
    const a = await signedUp();
    const res = await a.c.post(a.keys, { name: 'Agent', can_place_orders: '1', daily_limit_usd: '500' });
    const key = keyIn(res.body)!;
    const id = await idOf(key);
    return { ...a, key, id, page: `${a.keys}/${id}` };
  }

  it('an owner turns it on and off; saving the budget leaves it as it is — happy', async () => {
    const s = await spendingKey();
    const page = await s.c.get(s.page);
    expect(page.body).toContain(`<form method="post" action="${s.page}/approval" novalidate>`);
    expect(checked(page.body)).toBe(false);

    const on = await s.c.post(`${s.page}/approval`, { needs_approval: '1' }, { from: s.page });
    expect(on.statusCode, on.body).toBe(200);
    expect(on.body).toContain('Agent&#39;s orders now wait for a person&#39;s approval.');
    expect(checked(on.body)).toBe(true);
    expect(await flagOf(s.id)).toBe(true);
    expect(await me(s.key)).toMatchObject({ needs_approval: true });

    // The budget form has no approval box: saving it does not lift the approval.
    const budget = await s.c.post(s.page, { order_limit_usd: '', daily_limit_usd: '400', monthly_limit_usd: '', expires_on: '' });
    expect(budget.statusCode).toBe(200);
    expect(await flagOf(s.id)).toBe(true);

    const off = await s.c.post(`${s.page}/approval`, {}, { from: s.page });
    expect(off.statusCode).toBe(200);
    expect(off.body).toContain('Agent&#39;s orders no longer wait for a person&#39;s approval.');
    expect(await flagOf(s.id)).toBe(false);
  });

  it('a read-only key has no approval form; a forged one is 422 naming the field — errors', async () => {
    const a = await signedUp();
    const key = keyIn((await a.c.post(a.keys, { name: 'Reader' })).body)!;
    const id = await idOf(key);
    const page = await a.c.get(`${a.keys}/${id}`);
    expect(page.body).not.toContain('f-needs_approval');
    expect(page.body).not.toContain('Orders need a person');
    const forged = await a.c.post(`${a.keys}/${id}/approval`, { needs_approval: '1' }, { from: `${a.keys}/${id}` });
    expect(forged.statusCode).toBe(422);
    expect(forged.body).toContain(`<p class="error" id="f-needs_approval-error">Orders need a person's approval is for a spending key (one that can place orders)</p>`);
    expect(await flagOf(id)).toBe(false);
  });

  it('a member and a viewer see it without the form and a forged post is 403; no CSRF token is 403; a revoked key is 409 — security', async () => {
    const s = await spendingKey();
    await s.c.post(`${s.page}/approval`, { needs_approval: '1' }, { from: s.page });
    for (const role of ['member', 'viewer'] as const) {
      const email = `${role}-${s.id}@example.com`;
      const user = await createUser(h.database.pool, { email, name: role, password });
      await addMember(h.database.pool, { workspaceId: s.workspaceId }, user.id, role);
      const c = consoleClient(h, `10.43.0.${s.id % 200}`);
      expect((await c.post('/app/sign-in', { email, password })).statusCode).toBe(303);
      const page = await c.get(s.page);
      expect(page.statusCode).toBe(200);
      expect(page.body).toMatch(/<dt>Orders need a person.s approval<\/dt><dd>Yes<\/dd>/);
      expect(page.body).not.toContain('f-needs_approval');
      expect((await c.post(`${s.page}/approval`, {}, { from: s.page })).statusCode).toBe(403);
    }
    expect((await s.c.post(`${s.page}/approval`, {}, { csrf: false })).statusCode).toBe(403);
    expect(await flagOf(s.id)).toBe(true);
    expect((await s.c.post(`${s.page}/revoke`, {})).statusCode).toBe(200);
    expect((await s.c.post(`${s.page}/approval`, {}, { from: s.keys })).statusCode).toBe(409);
    expect(await flagOf(s.id)).toBe(true);
  });
});
