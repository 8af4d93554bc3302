import { describe, expect, it } from 'vitest';
import { adjustBalance } from '../../src/domain/billing/adjustments.js';
import { createBilling } from '../../src/domain/billing/billing-deps.js';
import { webhookSecretBox } from '../../src/domain/webhooks/secret-box.js';
import { confirmTopUp, rejectTopUp } from '../../src/domain/billing/confirm.js';
import { requestTopUp } from '../../src/domain/billing/top-ups.js';
import { DomainError } from '../../src/domain/errors.js';
import { sequenceEvents } from '../../src/domain/events/sequencer.js';
import { valueOf } from '../../src/domain/idempotency/record-once.js';
import { setStaff } from '../../src/domain/users/user-service.js';
import { setupApp } from '../helpers/app.js';
import { bearer, workspaceWithKeys } from '../helpers/fixtures.js';
import { expectLedgerInvariants } from '../helpers/ledger-invariants.js';
import { personIn } from '../helpers/notify.js';

// Adding funds through the API (docs/billing.md): POST/GET /api/v1/top-ups, cancel; and the
// staff's side through the domain's calls the operations console makes: confirmed once however
// many staff press at once, a different amount credited as received, the event and the mail.
// The console's pages and their refusals are test/console/funds.test.ts.

const h = await setupApp({ RATE_LIMIT_PER_MINUTE: 1_000_000, TOPUP_MIN_CENTS: 1_000, TOPUP_MAX_CENTS: 5_000_000 });
const pool = h.database.pool;
const billing = createBilling(pool, h.clock, h.config, webhookSecretBox(pool, h.config.SECRETS_KEY));

const post = (key: string, url: string, payload: unknown = {}, headers: Record<string, string> = {}) =>
  h.app.inject({ method: 'POST', url, headers: { ...bearer(key), ...headers }, payload: payload as object });
const get = (key: string, url: string) => h.app.inject({ method: 'GET', url, headers: bearer(key) });
const balanceOf = async (workspaceId: number) =>
  Number((await pool.query(`SELECT balance FROM ledger_accounts WHERE workspace_id = $1 AND kind = 'available'`, [workspaceId])).rows[0].balance);

/** A staff member (as `user create --staff` makes one). */
async function staffMember(name = 'Sam Staff') {
  const person = await personIn(h, { workspaceId: (await workspaceWithKeys(pool)).workspaceId }, 'viewer', { name });
  await setStaff(pool, person.id, true);
  return { userId: person.id, name };
}

async function requested(key: string, usd: number) {
  const res = await post(key, '/api/v1/top-ups', { amount_usd: usd });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().data as { id: number; reference: string; status: string; amount_cents: number; instructions: string; invoice_url: string };
}

describe('POST /api/v1/top-ups — happy', () => {
  it('a spending key requests a top-up: a reference, the instructions with it, the invoice link; nothing is credited yet', async () => {
    const ws = await workspaceWithKeys(pool, { balanceCents: 5_000 });
    const t = await requested(ws.spendKey, 250.5);
    expect(t).toMatchObject({ status: 'pending', amount_cents: 25_050, amount_formatted: '$250.50', received_cents: null, provider: 'bank_transfer', reject_reason: null });
    expect(t.reference).toMatch(/^TU-[2-9A-HJKMNP-TV-Z]{4}-[2-9A-HJKMNP-TV-Z]{4}$/);
    expect(t.instructions).toContain(t.reference);
    expect(t.instructions).toContain('$250.50');
    expect(t.invoice_url).toBe(`http://127.0.0.1:3000/app/w/${ws.workspaceId}/funds/${t.id}/invoice`);
    expect(await balanceOf(ws.workspaceId)).toBe(5_000);
    // Read with any key of the workspace, one and the list.
    expect((await get(ws.readKey, `/api/v1/top-ups/${t.id}`)).json().data).toEqual(t);
    const list = (await get(ws.readKey, '/api/v1/top-ups?status=pending')).json();
    expect(list.data.map((x: { id: number }) => x.id)).toEqual([t.id]);
    expect(list.meta.total).toBe(1);
    expect((await get(ws.readKey, '/api/v1/top-ups?status=confirmed')).json().data).toEqual([]);
  });

  it('an Idempotency-Key sent twice makes one request; references differ between requests', async () => {
    const ws = await workspaceWithKeys(pool);
    const first = await post(ws.spendKey, '/api/v1/top-ups', { amount_usd: 20 }, { 'idempotency-key': 'tu-1' });
    const again = await post(ws.spendKey, '/api/v1/top-ups', { amount_usd: 20 }, { 'idempotency-key': 'tu-1' });
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toBe(first.body);
    const other = await requested(ws.spendKey, 20);
    expect(other.reference).not.toBe(first.json().data.reference);
    expect((await pool.query('SELECT count(*)::int AS n FROM top_up_requests WHERE workspace_id = $1', [ws.workspaceId])).rows[0].n).toBe(2);
  });
});

describe('POST /api/v1/top-ups — unhappy', () => {
  it('a read-only key is 403; amounts outside the limits, not a number or missing are 422 naming amount_usd; another workspace reads 404', async () => {
    const ws = await workspaceWithKeys(pool);
    const refused = await post(ws.readKey, '/api/v1/top-ups', { amount_usd: 50 });
    expect(refused.statusCode).toBe(403);
    expect(refused.json().message).toMatch(/cannot spend/);
    for (const [body, message] of [
      [{ amount_usd: 9.99 }, 'must be at least $10.00'],
      [{ amount_usd: 50_000.01 }, 'must be at most $50,000.00'],
      [{ amount_usd: 0 }, 'must be greater than 0'],
      [{ amount_usd: '100' }, 'must be a number of US dollars'],
      [{}, 'is required'],
    ] as const) {
      const res = await post(ws.spendKey, '/api/v1/top-ups', body);
      expect(res.statusCode, JSON.stringify(body)).toBe(422);
      expect(res.json().errors.amount_usd, JSON.stringify(body)).toEqual([message]);
    }
    expect((await post(ws.spendKey, '/api/v1/top-ups', { amount_usd: 10, extra: 1 })).json().errors).toHaveProperty('extra');
    expect((await pool.query('SELECT count(*)::int AS n FROM top_up_requests WHERE workspace_id = $1', [ws.workspaceId])).rows[0].n).toBe(0);
    const mine = await requested(ws.spendKey, 10);
    const other = await workspaceWithKeys(pool);
    expect((await get(other.readKey, `/api/v1/top-ups/${mine.id}`)).statusCode).toBe(404);
    expect((await post(other.spendKey, `/api/v1/top-ups/${mine.id}/cancel`)).statusCode).toBe(404);
    expect((await get(ws.readKey, '/api/v1/top-ups/999999999')).statusCode).toBe(404);
  });

  it('at most 10 requests wait at once: the 11th is 409 until one is cancelled', async () => {
    const ws = await workspaceWithKeys(pool);
    const made = [];
    for (let i = 0; i < 10; i++) made.push(await requested(ws.spendKey, 10));
    const eleventh = await post(ws.spendKey, '/api/v1/top-ups', { amount_usd: 10 });
    expect(eleventh.statusCode).toBe(409);
    expect(eleventh.json()).toMatchObject({ reason: 'too_many_pending' });
    expect((await post(ws.spendKey, `/api/v1/top-ups/${made[0]!.id}/cancel`)).statusCode).toBe(200);
    await requested(ws.spendKey, 10);
  });
});

describe('POST /api/v1/top-ups/{id}/cancel', () => {
  it('cancels while pending (a spending key), not after: 409 naming the status; a read-only key is 403', async () => {
    const ws = await workspaceWithKeys(pool);
    const t = await requested(ws.spendKey, 30);
    expect((await post(ws.readKey, `/api/v1/top-ups/${t.id}/cancel`)).statusCode).toBe(403);
    const cancelled = await post(ws.spendKey, `/api/v1/top-ups/${t.id}/cancel`);
    expect(cancelled.statusCode).toBe(200);
    expect(cancelled.json().data).toMatchObject({ status: 'cancelled', decided_at: expect.any(String) });
    const again = await post(ws.spendKey, `/api/v1/top-ups/${t.id}/cancel`);
    expect(again.statusCode).toBe(409);
    expect(again.json()).toMatchObject({ status: 'cancelled', message: 'Cannot cancel: the top-up is cancelled.' });
    // Staff cannot confirm a cancelled request: nothing is credited.
    const staff = await staffMember();
    await expect(confirmTopUp(billing, staff, t.id, 3_000)).rejects.toMatchObject({ code: 'conflict' });
    // A confirmed one cannot be cancelled.
    const paid = await requested(ws.spendKey, 40);
    await confirmTopUp(billing, staff, paid.id, 4_000);
    const late = await post(ws.spendKey, `/api/v1/top-ups/${paid.id}/cancel`);
    expect(late.statusCode).toBe(409);
    expect(late.json().status).toBe('confirmed');
  });
});

describe('Staff confirming a top-up', () => {
  it('credits what was received (which may differ), records who confirmed it, the event balance.topped_up and a mail to the owners only', async () => {
    const ws = await workspaceWithKeys(pool, { balanceCents: 1_000 });
    const owner = await personIn(h, { workspaceId: ws.workspaceId }, 'owner');
    const member = await personIn(h, { workspaceId: ws.workspaceId }, 'member');
    const staff = await staffMember('Sam Staff');
    const t = await requested(ws.spendKey, 100);
    const confirmed = await confirmTopUp(billing, staff, t.id, 9_950);
    expect(confirmed).toMatchObject({ status: 'confirmed', amount_cents: 10_000, received_cents: 9_950, decided_by: { user_id: staff.userId, name: 'Sam Staff' } });
    expect(await balanceOf(ws.workspaceId)).toBe(1_000 + 9_950);
    // The request names its ledger transaction, a top-up of exactly what was received.
    const { rows: entries } = await pool.query(
      `SELECT t.kind, e.amount, a.kind AS account FROM top_up_requests r JOIN ledger_transactions t ON t.id = r.ledger_transaction_id
         JOIN ledger_entries e ON e.transaction_id = t.id JOIN ledger_accounts a ON a.id = e.account_id WHERE r.id = $1 ORDER BY a.kind`,
      [t.id],
    );
    expect(entries).toEqual([
      { kind: 'top_up', amount: 9_950, account: 'available' },
      { kind: 'top_up', amount: -9_950, account: 'external' },
    ]);
    const api = (await get(ws.readKey, `/api/v1/top-ups/${t.id}`)).json().data;
    expect(api).toMatchObject({ status: 'confirmed', received_cents: 9_950, received_formatted: '$99.50' });
    const { rows: events } = await pool.query(`SELECT type, actor, data FROM events WHERE workspace_id = $1 AND type LIKE 'balance.%'`, [ws.workspaceId]);
    expect(events).toEqual([
      {
        type: 'balance.topped_up',
        actor: 'system',
        data: { workspace_id: ws.workspaceId, amount: 9_950, amount_formatted: '$99.50', balance: 10_950, balance_formatted: '$109.50', top_up: api, confirmed_by_user_id: staff.userId },
      },
    ]);
    // The feed shows it; a publisher never could.
    await sequenceEvents(pool, h.clock.now());
    const feed = (await get(ws.readKey, '/api/v1/events?type=balance.topped_up')).json().data;
    expect(feed).toHaveLength(1);
    // The notifier mails the owners (they may add funds), not the member.
    await h.app.notifier.drain();
    const { rows: mails } = await pool.query(`SELECT to_address, subject, body_text FROM mail_outbox WHERE kind = 'funds_added' AND to_address = ANY($1)`, [[owner.email, member.email]]);
    expect(mails.map((m) => m.to_address)).toEqual([owner.email]);
    expect(mails[0].subject).toBe(`Funds added: $99.50 (${t.reference})`);
    expect(mails[0].body_text).toContain('The request was for $100.00; $99.50 arrived, and that is what was added.');
    expect(mails[0].body_text).toContain(`/app/w/${ws.workspaceId}/funds/${t.id}`);
    await expectLedgerInvariants(h.database);
  });

  it('two staff confirming at once, and fifty: one credit, the others 409; the ledger sums to zero', async () => {
    for (const n of [2, 50]) {
      const ws = await workspaceWithKeys(pool, { balanceCents: 0 });
      const staff = await Promise.all(Array.from({ length: Math.min(n, 3) }, (_, i) => staffMember(`Staff ${n}-${i}`)));
      const t = await requested(ws.spendKey, 75);
      const outcomes = await Promise.allSettled(Array.from({ length: n }, (_, i) => confirmTopUp(billing, staff[i % staff.length]!, t.id, 7_500)));
      const done = outcomes.filter((o) => o.status === 'fulfilled');
      const refused = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected');
      expect(done, `${n} at once`).toHaveLength(1);
      expect(refused.every((o) => o.reason instanceof DomainError && o.reason.code === 'conflict'), `${n} at once`).toBe(true);
      expect(await balanceOf(ws.workspaceId)).toBe(7_500);
      const { rows } = await pool.query(`SELECT count(*)::int AS n FROM ledger_transactions WHERE workspace_id = $1 AND kind = 'top_up'`, [ws.workspaceId]);
      expect(rows[0].n).toBe(1);
      expect((await pool.query(`SELECT count(*)::int AS n FROM events WHERE workspace_id = $1 AND type = 'balance.topped_up'`, [ws.workspaceId])).rows[0].n).toBe(1);
    }
    await expectLedgerInvariants(h.database);
  });

  it('only staff: a user who is not (or no longer) staff is told the top-up does not exist, and nothing moves', async () => {
    const ws = await workspaceWithKeys(pool, { balanceCents: 0 });
    const staff = await staffMember();
    const t = await requested(ws.spendKey, 20);
    await setStaff(pool, staff.userId, false);
    await expect(confirmTopUp(billing, staff, t.id, 2_000)).rejects.toMatchObject({ code: 'not_found' });
    await expect(rejectTopUp(billing, staff, t.id, 'No money came')).rejects.toMatchObject({ code: 'not_found' });
    await expect(adjustBalance(billing, staff, ws.workspaceId, 100, 'Goodwill')).rejects.toMatchObject({ code: 'not_found' });
    expect(await balanceOf(ws.workspaceId)).toBe(0);
    expect((await get(ws.readKey, `/api/v1/top-ups/${t.id}`)).json().data.status).toBe('pending');
  });

  it('rejects with a reason the workspace reads (required), once', async () => {
    const ws = await workspaceWithKeys(pool);
    const staff = await staffMember();
    const t = await requested(ws.spendKey, 20);
    await expect(rejectTopUp(billing, staff, t.id, '   ')).rejects.toMatchObject({ code: 'invalid_input', details: { errors: { reason: ['is required'] } } });
    await rejectTopUp(billing, staff, t.id, 'No transfer with this reference arrived within 30 days.');
    expect((await get(ws.readKey, `/api/v1/top-ups/${t.id}`)).json().data).toMatchObject({ status: 'rejected', reject_reason: 'No transfer with this reference arrived within 30 days.' });
    await expect(confirmTopUp(billing, staff, t.id, 2_000)).rejects.toMatchObject({ code: 'conflict', details: { status: 'rejected' } });
  });

  it('a received amount of zero is refused naming received_usd', async () => {
    const ws = await workspaceWithKeys(pool);
    const staff = await staffMember();
    const t = await requested(ws.spendKey, 20);
    await expect(confirmTopUp(billing, staff, t.id, 0)).rejects.toMatchObject({ code: 'invalid_input', details: { errors: { received_usd: ['must be an amount above 0'] } } });
  });
});

describe('Staff adjustments', () => {
  it('credit and debit with a reason: their own ledger transaction against the adjustments account, the author recorded, balance.adjusted', async () => {
    const ws = await workspaceWithKeys(pool, { balanceCents: 1_000 });
    const staff = await staffMember('Ada Adjuster');
    const credit = valueOf(await adjustBalance(billing, staff, ws.workspaceId, 2_500, '  Goodwill credit for the outage of 1 December  '));
    expect(credit).toMatchObject({ amount_cents: 2_500, reason: 'Goodwill credit for the outage of 1 December', staff: { user_id: staff.userId, name: 'Ada Adjuster' }, balance_cents: 3_500 });
    valueOf(await adjustBalance(billing, staff, ws.workspaceId, -500, 'Transfer TU-XXXX credited twice'));
    expect(await balanceOf(ws.workspaceId)).toBe(3_000);
    const { rows } = await pool.query(
      `SELECT t.kind, a.kind AS account, e.amount FROM ledger_adjustments j JOIN ledger_transactions t ON t.id = j.ledger_transaction_id
         JOIN ledger_entries e ON e.transaction_id = t.id JOIN ledger_accounts a ON a.id = e.account_id
        WHERE j.workspace_id = $1 ORDER BY j.id, a.kind`,
      [ws.workspaceId],
    );
    expect(rows).toEqual([
      { kind: 'adjustment', account: 'available', amount: 2_500 },
      { kind: 'adjustment', account: 'adjustments', amount: -2_500 },
      { kind: 'adjustment', account: 'available', amount: -500 },
      { kind: 'adjustment', account: 'adjustments', amount: 500 },
    ]);
    const { rows: events } = await pool.query(`SELECT data FROM events WHERE workspace_id = $1 AND type = 'balance.adjusted' ORDER BY id`, [ws.workspaceId]);
    expect(events.map((e) => [e.data.amount, e.data.balance, e.data.adjusted_by_user_id])).toEqual([
      [2_500, 3_500, staff.userId],
      [-500, 3_000, staff.userId],
    ]);
    // The workspace's ledger shows them, as kind adjustment.
    const ledger = (await get(ws.readKey, '/api/v1/ledger')).json().data;
    expect(ledger.filter((l: { kind: string }) => l.kind === 'adjustment').map((l: { amount: number }) => l.amount)).toEqual([-500, 2_500]);
    await expectLedgerInvariants(h.database);
  });

  it('refuses a debit beyond the available balance, no reason, and zero, each naming its field; nothing moves', async () => {
    const ws = await workspaceWithKeys(pool, { balanceCents: 1_000 });
    const staff = await staffMember();
    await expect(adjustBalance(billing, staff, ws.workspaceId, -1_001, 'Too much')).rejects.toMatchObject({
      code: 'invalid_input',
      details: { errors: { amount_usd: ['is more than the available balance ($10.00)'] } },
    });
    await expect(adjustBalance(billing, staff, ws.workspaceId, 100, ' ')).rejects.toMatchObject({ details: { errors: { reason: ['is required'] } } });
    await expect(adjustBalance(billing, staff, ws.workspaceId, 100, 'x'.repeat(1001))).rejects.toMatchObject({ details: { errors: { reason: ['must be at most 1,000 characters'] } } });
    await expect(adjustBalance(billing, staff, ws.workspaceId, 0, 'Zero')).rejects.toMatchObject({ details: { errors: { amount_usd: ['must be an amount other than 0'] } } });
    await expect(adjustBalance(billing, staff, 999_999, 100, 'Nobody')).rejects.toMatchObject({ code: 'not_found' });
    expect(await balanceOf(ws.workspaceId)).toBe(1_000);
  });
});

describe('The workspace-only events', () => {
  it('a publisher cannot follow or subscribe to balance events (422 naming the field)', async () => {
    const { rows } = await pool.query(`INSERT INTO publishers (name) VALUES ('Events pub') RETURNING id`);
    const { createKey } = await import('../../src/domain/keys/key-service.js');
    const key = await createKey(pool, { publisherId: rows[0].id });
    const res = await get(key.key, '/api/v1/publisher/events?type=balance.topped_up');
    expect(res.statusCode).toBe(422);
    expect(res.json().errors).toHaveProperty('type');
  });

  it('the request made in the console by a person goes the same way (requestTopUp as the person)', async () => {
    const ws = await workspaceWithKeys(pool);
    const owner = await personIn(h, { workspaceId: ws.workspaceId }, 'owner');
    const viewer = await personIn(h, { workspaceId: ws.workspaceId }, 'viewer');
    const made = valueOf(await requestTopUp(billing, { kind: 'person', workspaceId: ws.workspaceId, userId: owner.id }, 1_500));
    expect(made.requested_by).toEqual({ kind: 'person', id: owner.id, name: owner.name });
    await expect(requestTopUp(billing, { kind: 'person', workspaceId: ws.workspaceId, userId: viewer.id }, 1_500)).rejects.toMatchObject({ code: 'forbidden' });
  });
});
