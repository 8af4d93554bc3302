import { describe, expect, it } from 'vitest';
import { visiblePrefix } from '../../src/domain/keys/key-format.js';
import { rollKey } from '../../src/domain/keys/key-service.js';
import { addMember } from '../../src/domain/users/memberships.js';
import { createUser } from '../../src/domain/users/user-service.js';
import { topUpWorkspace } from '../../src/domain/workspaces/top-up.js';
import { setupApp } from '../helpers/app.js';
import { publisherWithOutlet } from '../helpers/catalog.js';
import { bearer } from '../helpers/fixtures.js';
import { consoleClient, signUpConfirmed } from './helpers.js';

// The console's key form and key page for a spending key's budget and expiry (docs/console.md,
// docs/budgets.md) through app.inject: what they store, what the key page shows, and every bad
// input answered with the form again naming the field (422), never a 500 and nothing written.
// The happy path in a real browser is in browser-budget.test.ts.

const h = await setupApp({ SIGNUP: 'open', SIGNUPS_PER_ADDRESS_PER_HOUR: 100, RATE_LIMIT_PER_MINUTE: 1_000_000 });
const password = 'correct horse battery';
h.clock.set(Date.parse('2027-03-10T12:00:00Z'));

let n = 0;
async function signedUp() {
  n++;
  const c = consoleClient(h, `10.40.0.${n}`);
  const home = await signUpConfirmed(h, c, { name: `Budget ${n}`, email: `budget${n}@example.com`, password });
  return { c, home, keys: `${home}/settings/api-keys`, workspaceId: Number(home.split('/').pop()) };
}

const keyIn = (body: string) => /id="new-key"[^>]*value="([^"]+)"/.exec(body)?.[1];
const row = async (id: number) =>
  (
    await h.database.pool.query(
      'SELECT order_limit_cents::int AS o, daily_limit_cents::int AS d, monthly_limit_cents::int AS m, expires_at FROM api_keys WHERE id = $1',
      [id],
    )
  ).rows[0];
const keyCount = async (workspaceId: number) =>
  (await h.database.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM api_keys WHERE workspace_id = $1', [workspaceId])).rows[0]!.n;
const idOf = async (key: string) =>
  (await h.database.pool.query<{ id: number }>('SELECT id FROM api_keys WHERE prefix = $1', [visiblePrefix(key)])).rows[0]!.id;

/** A 422 page that names the field (its label, then the message) and marks it invalid. */
function namesField(body: string, field: string, text: RegExp) {
  expect(body).toContain(`id="f-${field}"`);
  expect(body).toMatch(new RegExp(`<input id="f-${field}"[^>]*aria-invalid="true"`));
  const error = new RegExp(`<p class="error" id="f-${field}-error">([^<]*)</p>`).exec(body)?.[1];
  expect(error, `${field} error`).toMatch(text);
}

describe('Console key form (POST /app/w/{id}/settings/api-keys) — happy', () => {
  it('a spending key with limits (dollars rounded half up) and an expiry date; the key page shows them', async () => {
    const a = await signedUp();
    const res = await a.c.post(a.keys, {
      name: 'Agent',
      can_place_orders: '1',
      order_limit_usd: '200',
      daily_limit_usd: '500.005',
      monthly_limit_usd: '5000',
      expires_on: '2027-06-30',
    });
    expect(res.statusCode, res.body).toBe(200);
    const key = keyIn(res.body)!;
    const id = await idOf(key);
    expect(await row(id)).toEqual({ o: 20_000, d: 50_001, m: 500_000, expires_at: new Date('2027-06-30T00:00:00Z') });
    // The API sees the same budget.
    const me = await h.app.inject({ url: '/api/v1/me', headers: bearer(key) });
    expect(me.json().data.key.budget).toMatchObject({ order_limit_cents: 20_000, day: { limit_cents: 50_001 }, expires_at: '2027-06-30T00:00:00Z' });

    const list = await a.c.get(a.keys);
    expect(list.body).toContain(`<a href="${a.keys}/${id}">Agent</a>`);
    const page = await a.c.get(`${a.keys}/${id}`);
    expect(page.statusCode).toBe(200);
    expect(page.body).toMatch(/<th scope="row">Per order<\/th><td>\$200\.00<\/td>/);
    expect(page.body).toMatch(/<th scope="row">Today \(UTC day\)<\/th><td>\$500\.01<\/td><td>\$0\.00<\/td><td>\$500\.01<\/td><td><time datetime="2027-03-11T00:00:00Z" title="2027-03-11 00:00 UTC">in 12 hours<\/time><\/td>/);
    expect(page.body).toMatch(/<th scope="row">This month \(UTC\)<\/th><td>\$5,000\.00<\/td><td>\$0\.00<\/td><td>\$5,000\.00<\/td><td><time datetime="2027-04-01T00:00:00Z" title="2027-04-01 00:00 UTC">in 22 days<\/time><\/td>/);
    expect(page.body).toContain('value="500.01"');
    expect(page.body).toContain('value="2027-06-30"');
  });
});

describe('Console key form (POST /app/w/{id}/settings/api-keys) — errors', () => {
  it.each([
    ['daily_limit_usd', '-5', /^Limit per day \(USD\) must be an amount of US dollars/],
    ['order_limit_usd', 'ten', /^Limit per order \(USD\) must be an amount of US dollars/],
    ['monthly_limit_usd', '1e3', /^Limit per month \(USD\) must be an amount of US dollars/],
    ['monthly_limit_usd', '10000000.01', /^Limit per month \(USD\) must be an amount of US dollars from 0 to 10,000,000/],
    ['expires_on', '2027-03-10', /^Expires on \(optional\) must be in the future/],
    ['expires_on', '2001-01-01', /^Expires on \(optional\) must be in the future/],
    ['expires_on', '2027-02-30', /^Expires on \(optional\) must be a date such as 2027-01-31/],
    ['expires_on', 'tomorrow', /^Expires on \(optional\) must be a date/],
  ])('%s = %s: the form again naming the field, nothing created', async (field, value, message) => {
    const a = await signedUp();
    const before = await keyCount(a.workspaceId);
    const res = await a.c.post(a.keys, { name: 'Agent', can_place_orders: '1', daily_limit_usd: '50', [field]: value });
    expect(res.statusCode).toBe(422);
    namesField(res.body, field, message);
    expect(res.body).toContain('The key was not created: check the fields below.');
    expect(res.body).toContain(`value="${value}"`); // what the person typed, kept
    expect(await keyCount(a.workspaceId)).toBe(before);
  });

  it('limits on a read-only key: refused by the domain, named on the form', async () => {
    const a = await signedUp();
    const before = await keyCount(a.workspaceId);
    const res = await a.c.post(a.keys, { name: 'Reader', daily_limit_usd: '5' });
    expect(res.statusCode).toBe(422);
    namesField(res.body, 'daily_limit_usd', /must be empty: a budget is only for a key that can place orders/);
    // The budget fields are shown with the error even though the box is unticked.
    expect(res.body).toContain('<fieldset class="budget shown">');
    expect(await keyCount(a.workspaceId)).toBe(before);
    // The API access page (read-only keys) has no budget fields: a forged one is refused the same way.
    const access = await a.c.post(`${a.home}/settings/api-access`, { name: 'Shop', monthly_limit_usd: '5' });
    expect(access.statusCode).toBe(422);
    namesField(access.body, 'monthly_limit_usd', /only for a key that can place orders/);
  });
});

describe('Console key page (/app/w/{id}/settings/api-keys/{key})', () => {
  async function spendingKey(limits: Record<string, string> = {}) {
    const a = await signedUp();
    const res = await a.c.post(a.keys, { name: 'Agent', can_place_orders: '1', ...limits });
    expect(res.statusCode, res.body).toBe(200);
    const key = keyIn(res.body)!;
    const id = await idOf(key);
    return { ...a, key, id, page: `${a.keys}/${id}` };
  }

  describe('shows and changes the budget — happy', () => {
    it('shows what was spent today; changes and clears each limit and the expiry', async () => {
      const s = await spendingKey({ daily_limit_usd: '500' });
      await topUpWorkspace(h.database.pool, s.workspaceId, 1_000_000, h.clock.now());
      const pub = await publisherWithOutlet(h.database, [{ publisher_price_cents: 10_000 }]);
      const offer = pub.offers[0]!;
      const placed = await h.app.inject({
        method: 'POST',
        url: '/api/v1/orders',
        headers: { ...bearer(s.key), 'idempotency-key': `kb-${s.id}` },
        payload: { offer_ids: [offer.id], target_url: 'https://buyer.example/' },
      });
      expect(placed.statusCode, placed.body).toBe(201);
      const spent = `$${(offer.price / 100).toFixed(2)}`;
      const left = `$${((50_000 - offer.price) / 100).toFixed(2)}`;
      const page = await s.c.get(s.page);
      expect(page.body).toContain(`<th scope="row">Today (UTC day)</th><td>$500.00</td><td>${spent}</td><td>${left}</td>`);
      // A month without a limit still shows what was spent.
      expect(page.body).toContain(`<th scope="row">This month (UTC)</th><td>No limit</td><td>${spent}</td><td>—</td>`);

      const changed = await s.c.post(s.page, { order_limit_usd: '150', daily_limit_usd: '1', monthly_limit_usd: '', expires_on: '2027-12-31' });
      expect(changed.statusCode, changed.body).toBe(200);
      expect(changed.body).toContain("Saved Agent&#39;s budget and expiry.");
      expect(await row(s.id)).toEqual({ o: 15_000, d: 100, m: null, expires_at: new Date('2027-12-31T00:00:00Z') });
      // Lowered below what was spent: nothing left, and the next placement is refused.
      expect(changed.body).toContain(`<th scope="row">Today (UTC day)</th><td>$1.00</td><td>${spent}</td><td>$0.00</td>`);

      const cleared = await s.c.post(s.page, { order_limit_usd: '', daily_limit_usd: '', monthly_limit_usd: '', expires_on: '' });
      expect(cleared.statusCode).toBe(200);
      expect(await row(s.id)).toEqual({ o: null, d: null, m: null, expires_at: null });
      expect(cleared.body).toContain('<th scope="row">Per order</th><td>No limit</td>');
    });

    it("a rolled key's grace: the expiry left as shown keeps its instant; the limits change on the whole chain", async () => {
      const s = await spendingKey({ daily_limit_usd: '500' });
      const rolled = await rollKey(h.database.pool, { workspaceId: s.workspaceId }, s.id, 5, h.clock);
      const graceEnds = new Date(h.clock.now() + 5 * 3_600_000);
      const res = await s.c.post(s.page, { order_limit_usd: '', daily_limit_usd: '20', monthly_limit_usd: '', expires_on: '2027-03-10' });
      expect(res.statusCode, res.body).toBe(200);
      expect(await row(s.id)).toEqual({ o: null, d: 2000, m: null, expires_at: graceEnds });
      expect(await row(rolled.id)).toEqual({ o: null, d: 2000, m: null, expires_at: null });
    });
  });

  describe('bad limits and expiries — errors', () => {
    it.each([
      ['daily_limit_usd', '-1', /^Limit per day \(USD\) must be an amount of US dollars/],
      ['order_limit_usd', '12,50', /^Limit per order \(USD\) must be an amount/],
      ['expires_on', '2027-03-09', /^Expires on must be in the future/],
      ['expires_on', '31/12/2027', /^Expires on must be a date such as 2027-01-31/],
    ])('%s = %s: 422 naming the field, nothing changed', async (field, value, message) => {
      const s = await spendingKey({ daily_limit_usd: '500' });
      const res = await s.c.post(s.page, { order_limit_usd: '', daily_limit_usd: '500', monthly_limit_usd: '', expires_on: '', [field]: value });
      expect(res.statusCode).toBe(422);
      namesField(res.body, field, message);
      expect(res.body).toContain('The key was not changed: check the fields below.');
      expect(await row(s.id)).toEqual({ o: null, d: 50_000, m: null, expires_at: null });
    });

    it("a read-only key's page: no budget, only its expiry; a forged limit is named and refused", async () => {
      const a = await signedUp();
      const key = keyIn((await a.c.post(a.keys, { name: 'Reader' })).body)!;
      const id = await idOf(key);
      const page = await a.c.get(`${a.keys}/${id}`);
      expect(page.body).not.toContain('f-daily_limit_usd');
      expect(page.body).toContain('Change the expiry');
      const forged = await a.c.post(`${a.keys}/${id}`, { daily_limit_usd: '5', expires_on: '' });
      expect(forged.statusCode).toBe(422);
      namesField(forged.body, 'daily_limit_usd', /only for a key that can place orders/);
      const unchanged = await a.c.post(`${a.keys}/${id}`, { expires_on: '' });
      expect(unchanged.statusCode).toBe(422);
      expect(unchanged.body).toContain('The key was not changed: nothing to change');
      expect((await a.c.post(`${a.keys}/${id}`, { expires_on: '2028-01-01' })).statusCode).toBe(200);
      expect((await row(id)).expires_at).toEqual(new Date('2028-01-01T00:00:00Z'));
    });
  });

  describe('who may change it — security', () => {
    it('who may change it: a member and a viewer see the budget without the form, and a forged form is 403; a revoked key is 409', async () => {
      const s = await spendingKey({ daily_limit_usd: '500' });
      for (const role of ['member', 'viewer'] as const) {
        const email = `${role}-${s.id}@example.com`;
        const user = await createUser(h.database.pool, { email, name: role, password });
        await addMember(h.database.pool, { workspaceId: s.workspaceId }, user.id, role);
        const c = consoleClient(h, `10.41.0.${s.id % 200}`);
        expect((await c.post('/app/sign-in', { email, password })).statusCode).toBe(303);
        const page = await c.get(s.page);
        expect(page.statusCode).toBe(200);
        expect(page.body).toContain('<td>$500.00</td>');
        expect(page.body).not.toContain('f-daily_limit_usd');
        expect(page.body).toContain('Your role cannot change this key.');
        expect((await c.post(s.page, { daily_limit_usd: '999999' }, { from: s.page })).statusCode).toBe(403);
      }
      expect((await row(s.id)).d).toBe(50_000);
      expect((await s.c.post(`${s.page}/revoke`, {})).statusCode).toBe(200);
      expect((await s.c.post(s.page, { daily_limit_usd: '1' }, { from: s.keys })).statusCode).toBe(409);
      expect((await row(s.id)).d).toBe(50_000);
      // The page of a key that does not exist, or is not an id: 404.
      expect((await s.c.get(`${s.keys}/2147483648`)).statusCode).toBe(404);
      expect((await s.c.get(`${s.keys}/999999`)).statusCode).toBe(404);
    });
  });
});
