import { describe, expect, it } from 'vitest';
import { adjustBalance } from '../../src/domain/billing/adjustments.js';
import { createBilling } from '../../src/domain/billing/billing-deps.js';
import { webhookSecretBox } from '../../src/domain/webhooks/secret-box.js';
import { confirmTopUp } from '../../src/domain/billing/confirm.js';
import { markPayoutFailed, markPayoutSent } from '../../src/domain/billing/payout-decide.js';
import { setDestination } from '../../src/domain/billing/payout-details.js';
import { payoutBalances, requestPayout } from '../../src/domain/billing/payouts.js';
import { valueOf } from '../../src/domain/idempotency/record-once.js';
import { topUp } from '../../src/domain/ledger/ledger-service.js';
import { setStaff } from '../../src/domain/users/user-service.js';
import { statement as statementSchema } from '../../src/schemas/statements.js';
import { setupApp } from '../helpers/app.js';
import { ManualClock } from '../helpers/clock.js';
import { bearer, workspaceWithKeys } from '../helpers/fixtures.js';
import { expectLedgerInvariants } from '../helpers/ledger-invariants.js';
import { personIn } from '../helpers/notify.js';
import { articleFor, orderKit, PASSING_LIVE_CHECKS } from '../helpers/orders.js';

// Monthly statements (docs/billing.md, "Papers") against a year of activity on the test clock:
// top-ups (by hand and through a request staff confirm), orders placed, declined (refunded) and
// approved (released to the publisher), payouts made payable when their guarantee window ends,
// staff adjustments both ways. For every month, of the workspace and of the publisher: opening +
// movements = closing, closing = the ledger's balance as it stood at the month's end (read from
// the balance rows then, not from the entries), and each month's opening = the previous closing.
//
// The ledger's entries are timed by the database's clock (docs/billing.md), which the test cannot
// move; so after each step the test puts the entries just written at the test clock's time, as if
// the database ran on it. Nothing else touches their times.

const START = Date.UTC(2025, 0, 2, 9);
const clock = new ManualClock(START);
const h = await setupApp({ RATE_LIMIT_PER_MINUTE: 1_000_000, TOPUP_MAX_CENTS: 100_000_000 }, { clock });
const pool = h.database.pool;
const billing = createBilling(pool, h.clock, h.config, webhookSecretBox(pool, h.config.SECRETS_KEY));
const kit = orderKit(h);
const { ws, p } = await kit.setup([{ content_by: 'buyer', publisher_price_cents: 10_000 }, { content_by: 'buyer', publisher_price_cents: 23_456 }], 100_000);
const staffPerson = await personIn(h, { workspaceId: ws.workspaceId }, 'viewer', { name: 'Sam Staff' });
await setStaff(pool, staffPerson.id, true);
const staff = { userId: staffPerson.id, name: 'Sam Staff' };
// The publisher's owner, paid by PayPal: payable money goes out in payouts during the year.
const pubOwner = await personIn(h, { publisherId: p.publisherId }, 'owner', { name: 'Pia Publisher' });
const payoutActor = { publisherId: p.publisherId, userId: pubOwner.id };
await setDestination(billing, payoutActor, { method: 'paypal', email: 'pia@example.com' });

let stamped = { entry: 0, transaction: 0 };
/** Puts the ledger rows written since the last call at the test clock's time. */
async function stamp() {
  const at = new Date(clock.now());
  const e = await pool.query('UPDATE ledger_entries SET created_at = $1 WHERE id > $2 RETURNING id', [at, stamped.entry]);
  const t = await pool.query('UPDATE ledger_transactions SET created_at = $1 WHERE id > $2 RETURNING id', [at, stamped.transaction]);
  stamped = {
    entry: Math.max(stamped.entry, ...e.rows.map((r) => Number(r.id))),
    transaction: Math.max(stamped.transaction, ...t.rows.map((r) => Number(r.id))),
  };
}
const at = async (month: number, day: number, hour = 10) => {
  clock.set(Date.UTC(2025, month, day, hour));
};
const month = (m: number) => `2025-${String(m + 1).padStart(2, '0')}`;

async function ownBalances(): Promise<Record<string, number>> {
  const { rows } = await pool.query(
    `SELECT CASE WHEN workspace_id IS NOT NULL THEN 'w.' ELSE 'p.' END || kind AS k, balance FROM ledger_accounts WHERE workspace_id = $1 OR publisher_id = $2`,
    [ws.workspaceId, p.publisherId],
  );
  return Object.fromEntries(rows.map((r) => [r.k, Number(r.balance)]));
}

async function placeAndAccept(offer: number, n: number) {
  const target = `https://buyer.example/${n}`;
  const res = await kit.place(ws.spendKey, { offer_ids: [p.offers[offer]!.id], target_url: target, anchor_text: 'our product', content_title: 'Our product, reviewed', content: articleFor(target) });
  if (res.statusCode !== 201) throw new Error(res.body);
  return res.json().data[0].id as number;
}

// The year.
await stamp(); // the workspace's opening top-up, on 2 January
const atMonthEnd: Record<string, Record<string, number>> = {};
const approved: { id: number; at: number }[] = [];
const counts: Record<string, number> = {};
let n = 0;
let payouts = 0;
for (let m = 0; m < 12; m++) {
  await at(m, 3);
  await topUp(pool, ws.workspaceId, 40_000 + m * 1_234);
  await stamp();

  if (m % 3 === 1) {
    // A top-up request, confirmed by staff for a little less than asked.
    await at(m, 4);
    const req = await h.app.inject({ method: 'POST', url: '/api/v1/top-ups', headers: bearer(ws.spendKey), payload: { amount_usd: 300 } });
    expect(req.statusCode, req.body).toBe(201);
    await at(m, 6);
    await confirmTopUp(billing, staff, req.json().data.id, 29_950);
    await stamp();
  }

  // Three orders placed; one declined (refunded), one accepted and approved this month, one
  // accepted now and approved next month (its escrow spans the month's end).
  await at(m, 5);
  const ids = [await placeAndAccept(0, ++n), await placeAndAccept(1, ++n), await placeAndAccept(m % 2, ++n)];
  await stamp();
  await at(m, 7);
  expect((await kit.pub(p.publisherKey, `${ids[0]}/decline`, { reason: 'Not our topic' })).statusCode).toBe(200);
  for (const id of ids.slice(1)) expect((await kit.pub(p.publisherKey, `${id}/accept`)).statusCode).toBe(200);
  await stamp();
  await at(m, 9);
  for (const id of ids.slice(1)) {
    expect((await kit.pub(p.publisherKey, `${id}/publish`, { live_url: `https://${p.domain}/post-${id}` })).statusCode).toBe(200);
    await kit.verifyLiveLink(id);
  }
  await at(m, 12);
  expect((await kit.buyer(ws.spendKey, `${ids[1]}/approve`)).statusCode).toBe(200);
  approved.push({ id: ids[1]!, at: clock.now() });
  await stamp();
  if (m > 0) {
    await at(m, 2);
    const carried = approved.find((a) => a.at === -1);
    if (carried) {
      expect((await kit.buyer(ws.spendKey, `${carried.id}/approve`)).statusCode).toBe(200);
      carried.at = clock.now();
      await stamp();
    }
  }
  approved.push({ id: ids[2]!, at: -1 });

  // Payouts: placements whose guarantee window (60 days) has ended alive become payable.
  await at(m, 20);
  for (const a of approved.filter((x) => x.at > 0 && clock.now() >= x.at + 61 * 86_400_000 && !('paid' in x))) {
    expect(await kit.recordLiveCheck(a.id, PASSING_LIVE_CHECKS)).toBe('paid_out');
    Object.assign(a, { paid: true });
  }
  await stamp();

  // A payout of what is payable (payable → in payout), sent by staff (→ external) or, every
  // other time, failed (back to payable).
  if ((await payoutBalances(pool, p.publisherId, h.config.PAYOUT_MIN_CENTS)).payable >= h.config.PAYOUT_MIN_CENTS) {
    await at(m, 22);
    const payout = valueOf(await requestPayout(billing, payoutActor));
    await stamp();
    await at(m, 24);
    if (++payouts % 2 === 1) await markPayoutSent(billing, staff, payout.id, `BANK-${m}`);
    else await markPayoutFailed(billing, staff, payout.id, 'The bank returned it.');
    await stamp();
  }

  // Staff adjust: a goodwill credit, or a debit of a transfer credited twice.
  await at(m, 25);
  await adjustBalance(billing, staff, ws.workspaceId, m % 2 === 0 ? 1_500 + m : -(700 + m), m % 2 === 0 ? 'Goodwill credit' : '=Transfer credited twice');
  await stamp();

  // The month ends: the balances as they stand, read from the balance rows.
  await at(m, 28, 23);
  atMonthEnd[month(m)] = await ownBalances();
}
clock.set(Date.UTC(2026, 0, 15));
for (const { kind } of (await pool.query('SELECT kind::text FROM ledger_transactions')).rows) counts[kind] = (counts[kind] ?? 0) + 1;

const statementOf = async (key: string, path: string) => {
  const res = await h.app.inject({ method: 'GET', url: path, headers: bearer(key) });
  expect(res.statusCode, res.body).toBe(200);
  return statementSchema.parse(res.json().data);
};

describe('statements over a year of activity', () => {
  it('made every kind of movement', () => {
    for (const kind of ['top_up', 'order_placed', 'order_refunded', 'order_released', 'payout_released', 'payout_requested', 'payout_sent', 'payout_failed', 'adjustment']) expect(counts[kind], kind).toBeGreaterThan(0);
  });

  for (const [who, key, path, prefix] of [
    ['the workspace', () => ws.readKey, '/api/v1/statements', 'w.'],
    ['the publisher', () => p.publisherKey, '/api/v1/publisher/statements', 'p.'],
  ] as const) {
    it(`${who}: every month, opening + movements = closing = the ledger's balance at the month's end, and opening = the previous closing`, async () => {
      let previous: Record<string, number> | null = null;
      let movements = 0;
      for (let m = 0; m < 12; m++) {
        const s = await statementOf(key(), `${path}?month=${month(m)}`);
        expect(s.complete).toBe(true);
        expect(s.from).toBe(`${month(m)}-01T00:00:00Z`);
        const ledgerAtEnd = Object.fromEntries(Object.entries(atMonthEnd[month(m)]!).filter(([k]) => k.startsWith(prefix)).map(([k, v]) => [k.slice(2), v]));
        expect(s.accounts.map((a) => a.account).sort()).toEqual(Object.keys(ledgerAtEnd).sort());
        for (const a of s.accounts) {
          const sum = a.movements.reduce((t, x) => t + x.amount, 0);
          expect(a.opening + sum, `${month(m)} ${a.account}: opening + movements`).toBe(a.closing);
          expect(a.credits + a.debits).toBe(sum);
          expect(a.closing, `${month(m)} ${a.account}: closing = the ledger at the month's end`).toBe(ledgerAtEnd[a.account]);
          expect(a.opening, `${month(m)} ${a.account}: opening = the previous closing`).toBe(previous ? previous[a.account] : 0);
          // Each line's running balance, and every line inside the month.
          let running = a.opening;
          for (const x of a.movements) {
            running += x.amount;
            expect(x.balance).toBe(running);
            expect(x.date >= s.from && x.date < s.to).toBe(true);
          }
          movements += a.movements.length;
        }
        expect(s.opening).toBe(s.accounts.reduce((t, a) => t + a.opening, 0));
        expect(s.closing).toBe(s.accounts.reduce((t, a) => t + a.closing, 0));
        previous = Object.fromEntries(s.accounts.map((a) => [a.account, a.closing]));
      }
      // Every entry of the owner's accounts is on exactly one statement of the year.
      const { rows } = await pool.query(
        `SELECT count(*)::int AS n FROM ledger_entries e JOIN ledger_accounts a ON a.id = e.account_id WHERE a.workspace_id = $1 OR a.publisher_id = $2`,
        [prefix === 'w.' ? ws.workspaceId : -1, prefix === 'p.' ? p.publisherId : -1],
      );
      expect(movements).toBe(rows[0].n);
    });
  }

  it('names what each movement was: kind, order, a top-up reference, an adjustment reason', async () => {
    const s = await statementOf(ws.readKey, `/api/v1/statements?month=${month(1)}`);
    const available = s.accounts.find((a) => a.account === 'available')!;
    const kinds = new Set(available.movements.map((x) => x.kind));
    for (const kind of ['top_up', 'order_placed', 'order_refunded', 'adjustment']) expect(kinds.has(kind), kind).toBe(true);
    const confirmed = available.movements.find((x) => x.reference !== null)!;
    expect(confirmed).toMatchObject({ kind: 'top_up', amount: 29_950, amount_formatted: '$299.50', order_id: null });
    expect(confirmed.reference).toMatch(/^TU-/);
    expect(available.movements.find((x) => x.kind === 'adjustment')).toMatchObject({ amount: -701, note: '=Transfer credited twice' });
    expect(available.movements.filter((x) => x.kind === 'order_placed').every((x) => x.order_id !== null && x.amount < 0)).toBe(true);
  });

  it('a month with no movement carries its balance; the current month is not complete; a month not begun is a 422', async () => {
    const jan = await statementOf(ws.readKey, '/api/v1/statements?month=2026-01');
    expect(jan.complete).toBe(false);
    // Without a month: the current one, so far.
    expect(await statementOf(ws.readKey, '/api/v1/statements')).toEqual(jan);
    const dec = await statementOf(ws.readKey, '/api/v1/statements?month=2025-12');
    expect(jan.accounts.map((a) => [a.account, a.opening, a.closing, a.movements.length])).toEqual(dec.accounts.map((a) => [a.account, a.closing, a.closing, 0]));
    const before = await statementOf(ws.readKey, '/api/v1/statements?month=2024-06');
    expect(before.accounts.every((a) => a.opening === 0 && a.closing === 0 && a.movements.length === 0)).toBe(true);
    const future = await h.app.inject({ method: 'GET', url: '/api/v1/statements?month=2026-02', headers: bearer(ws.readKey) });
    expect(future.statusCode).toBe(422);
    expect(future.json()).toMatchObject({ code: 'invalid_input', errors: { month: ['is in the future'] } });
    for (const bad of ['2025-13', '2025-1', '25-01', 'last', '2025-00']) {
      const res = await h.app.inject({ method: 'GET', url: `/api/v1/statements?month=${bad}`, headers: bearer(ws.readKey) });
      expect(res.statusCode, bad).toBe(422);
      expect(Object.keys(res.json().errors)).toEqual(['month']);
    }
  });

  it('a key reads only its own: a workspace key gets its workspace’s, a publisher key its publisher’s, the other side’s route is 403', async () => {
    const other = await workspaceWithKeys(pool, { balanceCents: 777 });
    await stamp();
    const theirs = await statementOf(other.readKey, '/api/v1/statements?month=2026-01');
    expect(theirs.owner).toMatchObject({ kind: 'workspace', id: other.workspaceId });
    expect(theirs.closing).toBe(777);
    expect((await h.app.inject({ method: 'GET', url: '/api/v1/publisher/statements?month=2026-01', headers: bearer(ws.readKey) })).statusCode).toBe(403);
    expect((await h.app.inject({ method: 'GET', url: '/api/v1/statements?month=2026-01', headers: bearer(p.publisherKey) })).statusCode).toBe(403);
    expect((await h.app.inject({ method: 'GET', url: '/api/v1/statements?month=2026-01' })).statusCode).toBe(401);
  });

  it('the ledger invariants hold', async () => {
    await expectLedgerInvariants(h.database);
  });
});
