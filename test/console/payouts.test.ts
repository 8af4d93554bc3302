import { describe, expect, it } from 'vitest';
import { createBilling } from '../../src/domain/billing/billing-deps.js';
import { makePayoutBatch, markBatchSent, markPayoutFailed, markPayoutSent } from '../../src/domain/billing/payout-decide.js';
import { setDestination } from '../../src/domain/billing/payout-details.js';
import { requestPayout } from '../../src/domain/billing/payouts.js';
import { DomainError } from '../../src/domain/errors.js';
import { valueOf } from '../../src/domain/idempotency/record-once.js';
import { createPublisher } from '../../src/domain/publishers/publisher-service.js';
import { requireReceivable } from '../../src/domain/events/event-types.js';
import { sequenceEvents } from '../../src/domain/events/sequencer.js';
import { setStaff } from '../../src/domain/users/user-service.js';
import { webhookSecretBox } from '../../src/domain/webhooks/secret-box.js';
import { setupApp } from '../helpers/app.js';
import { bearer, workspaceWithKeys } from '../helpers/fixtures.js';
import { expectLedgerInvariants } from '../helpers/ledger-invariants.js';
import { PASSWORD, personIn } from '../helpers/notify.js';
import { makePayable } from '../helpers/payouts.js';
import { consoleClient } from './helpers.js';

// Payouts (docs/billing.md): a publisher's owner says where to be paid (sealed at rest, shown
// masked) and asks for the payable balance; 50 requests at once make one payout; members and
// viewers are refused (403), another publisher's payout is 404; staff mark it sent (in_payout →
// external) or failed (the money back in payable), one at a time or as a batch with the bank's CSV.
// The same flow in Chromium is browser-payouts.test.ts.

const h = await setupApp({ SIGNIN_FAILURES_PER_ADDRESS: 1000, RATE_LIMIT_PER_MINUTE: 1_000_000, PAYOUT_MIN_CENTS: 5_000 });
const pool = h.database.pool;
const billing = createBilling(pool, h.clock, h.config, webhookSecretBox(pool, h.config.SECRETS_KEY));
let ip = 0;
const IBAN = 'DE89370400440532013000';

async function signedIn(user: { email: string }) {
  const c = consoleClient(h, `10.59.0.${++ip}`);
  expect((await c.post('/app/sign-in', { email: user.email, password: PASSWORD })).statusCode).toBe(303);
  return c;
}

async function setup(payableCents = 12_345) {
  const pub = await createPublisher(pool, `Payee ${ip + 1}`);
  const people = {
    owner: await personIn(h, { publisherId: pub.id }, 'owner', { name: 'Paula Owner' }),
    member: await personIn(h, { publisherId: pub.id }, 'member'),
    viewer: await personIn(h, { publisherId: pub.id }, 'viewer'),
  };
  if (payableCents) await makePayable(pool, pub.id, payableCents);
  return { pub, people, p: `/app/p/${pub.id}`, owner: await signedIn(people.owner), member: await signedIn(people.member), viewer: await signedIn(people.viewer) };
}

async function staffMember(name: string) {
  const other = await workspaceWithKeys(pool);
  const person = await personIn(h, { workspaceId: other.workspaceId }, 'viewer', { name });
  await pool.query('DELETE FROM memberships WHERE user_id = $1', [person.id]);
  await setStaff(pool, person.id, true);
  return { c: await signedIn(person), id: person.id, name };
}

const hidden = (page: string, name: string) => new RegExp(`name="${name}" value="([^"]+)"`).exec(page)?.[1];
const balance = async (publisherId: number, kind: string) =>
  Number((await pool.query(`SELECT COALESCE((SELECT balance FROM ledger_accounts WHERE publisher_id = $1 AND kind = $2), 0) AS b`, [publisherId, kind])).rows[0].b);

async function saveIban(s: Awaited<ReturnType<typeof setup>>) {
  const res = await s.owner.post(`${s.p}/payouts/destination`, { method: 'bank', holder: 'Paula Owner', iban: 'de89 3704 0044 0532 0130 00' }, { from: `${s.p}/payouts` });
  expect(res.statusCode, res.body).toBe(303);
}

async function requestFromConsole(s: Awaited<ReturnType<typeof setup>>) {
  const form = await s.owner.get(`${s.p}/payouts`);
  const res = await s.owner.post(`${s.p}/payouts`, { idempotency_key: hidden(form.body, 'idempotency_key')! }, { from: `${s.p}/payouts` });
  expect(res.statusCode, res.body).toBe(303);
  return Number(/\/payouts\/(\d+)\?done=requested$/.exec(res.headers.location!)![1]);
}

describe('Payouts — happy', () => {
  it('an owner gives a bank account (sealed at rest, shown masked) and requests a payout: payable → in payout at once', async () => {
    const s = await setup();
    await saveIban(s);
    const stored = (await pool.query('SELECT details_sealed, masked FROM payout_destinations WHERE publisher_id = $1', [s.pub.id])).rows[0];
    expect(stored.details_sealed).toMatch(/^sealed1\./);
    expect(stored.details_sealed).not.toContain('3000');
    expect(stored.masked).toBe('Bank account of Paula Owner, IBAN DE•• ending 3000');
    const page = await s.owner.get(`${s.p}/payouts`);
    expect(page.body).toContain('IBAN DE•• ending 3000');
    expect(page.body).not.toContain(IBAN);
    expect(page.body).toContain('$123.45');
    const id = await requestFromConsole(s);
    expect(await balance(s.pub.id, 'payable')).toBe(0);
    expect(await balance(s.pub.id, 'in_payout')).toBe(12_345);
    const shown = await s.owner.get(`${s.p}/payouts/${id}`);
    expect(shown.body).toContain('Requested: waiting to be sent');
    const row = (await pool.query('SELECT destination_sealed FROM payouts WHERE id = $1', [id])).rows[0];
    expect(row.destination_sealed).toMatch(/^sealed1\./);
    await expectLedgerInvariants(h.database);
  });

  it('staff mark it sent with the bank reference: in payout → external, the publisher sees it sent; the event names who', async () => {
    const s = await setup();
    await saveIban(s);
    const id = await requestFromConsole(s);
    const staff = await staffMember('Sam Staff');
    const queue = await staff.c.get('/app/ops');
    expect(queue.body).toContain('Payouts to send');
    const sent = await staff.c.post(`/app/ops/payouts/${id}/sent`, { bank_reference: 'BANK-778' }, { from: `/app/ops/payouts/${id}` });
    expect(sent.statusCode, sent.body).toBe(303);
    expect(await balance(s.pub.id, 'in_payout')).toBe(0);
    const row = (await pool.query('SELECT status, decided_by_user_id, sent_reference, decided_ledger_transaction_id FROM payouts WHERE id = $1', [id])).rows[0];
    expect(row).toMatchObject({ status: 'sent', decided_by_user_id: staff.id, sent_reference: 'BANK-778' });
    expect(row.decided_ledger_transaction_id).not.toBeNull();
    expect((await s.owner.get(`${s.p}/payouts/${id}`)).body).toContain('BANK-778');
    const events = (await pool.query(`SELECT type, data FROM events WHERE publisher_id = $1 AND type LIKE 'payout.%' ORDER BY id`, [s.pub.id])).rows;
    expect(events.map((e) => e.type)).toEqual(['payout.requested', 'payout.sent']);
    expect(events[1].data.by_user_id).toBe(staff.id);
    // "What staff did" names the author, the publisher and the payout; the publisher's ops page its balances.
    const reference = (await pool.query('SELECT reference FROM payouts WHERE id = $1', [id])).rows[0].reference;
    expect((await staff.c.get('/app/ops')).body).toMatch(new RegExp(`<td>Sam Staff</td><td>Sent a payout</td><td><a href="/app/ops/publishers/${s.pub.id}">[^<]+</a></td><td>\\$123\\.45</td><td><a href="/app/ops/payouts/${id}">${reference}</a>`));
    expect((await staff.c.get(`/app/ops/publishers/${s.pub.id}`)).body).toContain('In payout');
    // Sent twice: the second press meets the new status.
    const again = await staff.c.post(`/app/ops/payouts/${id}/sent`, { bank_reference: 'BANK-779' }, { from: `/app/ops/payouts/${id}` });
    expect(again.statusCode).toBe(409);
    await expectLedgerInvariants(h.database);
  });

  it('a failed payout returns the money to payable, with the reason the publisher reads', async () => {
    const s = await setup();
    await saveIban(s);
    const id = await requestFromConsole(s);
    const staff = await staffMember('Sue Staff');
    const res = await staff.c.post(`/app/ops/payouts/${id}/failed`, { reason: 'The account is closed.' }, { from: `/app/ops/payouts/${id}` });
    expect(res.statusCode, res.body).toBe(303);
    expect(await balance(s.pub.id, 'payable')).toBe(12_345);
    expect(await balance(s.pub.id, 'in_payout')).toBe(0);
    const page = await s.owner.get(`${s.p}/payouts/${id}`);
    expect(page.body).toContain('The account is closed.');
    expect(page.body).toContain('Failed: the money is back in payable');
    await expectLedgerInvariants(h.database);
  });

  it('a batch: made from the pending payouts, its CSV holds the opened details, marked sent at once', async () => {
    const a = await setup(10_000);
    const b = await setup(20_000);
    await saveIban(a);
    expect((await b.owner.post(`${b.p}/payouts/destination`, { method: 'paypal', paypal_email: 'paid@example.com' }, { from: `${b.p}/payouts` })).statusCode).toBe(303);
    await requestFromConsole(a);
    await requestFromConsole(b);
    const staff = await staffMember('Bo Staff');
    const made = await staff.c.post('/app/ops/payout-batches', {}, { from: '/app/ops' });
    expect(made.statusCode, made.body).toBe(303);
    const batchPath = made.headers.location!;
    const file = await staff.c.get(`${batchPath}/file`);
    expect(file.statusCode).toBe(200);
    expect(file.headers['content-type']).toContain('text/csv');
    expect(file.body.split('\r\n')[0]).toBe('reference,amount,currency,method,holder,iban,account_number,routing_number,paypal_email,publisher_id,publisher');
    expect(file.body).toContain(`100.00,USD,bank,Paula Owner,${IBAN}`);
    expect(file.body).toContain('200.00,USD,paypal,,,,,paid@example.com');
    const sent = await staff.c.post(`${batchPath}/sent`, { bank_reference: 'BATCH-1' }, { from: batchPath });
    expect(sent.statusCode, sent.body).toBe(303);
    expect(await balance(a.pub.id, 'in_payout')).toBe(0);
    expect(await balance(b.pub.id, 'in_payout')).toBe(0);
    await expectLedgerInvariants(h.database);
  });

  it('the publisher API lists its payouts', async () => {
    const s = await setup();
    await saveIban(s);
    const id = await requestFromConsole(s);
    const res = await h.app.inject({ method: 'GET', url: '/api/v1/publisher/payouts', headers: bearer(s.pub.key) });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data[0]).toMatchObject({ id, status: 'pending', amount_cents: 12_345, destination: 'Bank account of Paula Owner, IBAN DE•• ending 3000' });
  });
});

describe('Payouts — mails', () => {
  it("each step mails the publisher's owners (not its member), linking to the payout; no account number in any mail", async () => {
    const s = await setup();
    await saveIban(s);
    const id = await requestFromConsole(s);
    const staff = await staffMember('Mo Staff');
    await markPayoutSent(billing, { userId: staff.id }, id, 'BANK-42');
    await makePayable(pool, s.pub.id, 7_000);
    const failed = await requestFromConsole(s);
    await markPayoutFailed(billing, { userId: staff.id }, failed, 'The bank returned it.');
    await sequenceEvents(pool, h.clock.now());
    await h.app.notifier.drain();
    const { rows } = await pool.query(`SELECT kind, to_address, subject, body_text FROM mail_outbox WHERE kind LIKE 'payout_%' AND to_address = ANY($1) ORDER BY id`, [
      [s.people.owner.email, s.people.member.email, s.people.viewer.email],
    ]);
    expect(rows.map((m) => [m.kind, m.to_address])).toEqual([
      ['payout_requested', s.people.owner.email],
      ['payout_sent', s.people.owner.email],
      ['payout_requested', s.people.owner.email],
      ['payout_failed', s.people.owner.email],
    ]);
    expect(rows[1].subject).toMatch(/^Payout sent: \$123\.45 \(PO-/);
    expect(rows[1].body_text).toContain("with the bank's reference BANK-42");
    expect(rows[1].body_text).toContain(`/app/p/${s.pub.id}/payouts/${id}`);
    expect(rows[3].body_text).toContain('The bank returned it.');
    expect(rows[3].body_text).toContain('The money is back in the payable balance (now $70.00)');
    for (const m of rows) expect(m.body_text).not.toContain('0532013000');
  });
});

describe('Payouts — a provider that sends by itself', () => {
  it('a payout its provider answers sent is recorded sent at once (in_payout → external), by the provider, not a person', async () => {
    const s = await setup(6_500);
    const connect = { ...billing, provider: { ...billing.provider, sendPayout: async () => ({ state: 'sent' as const, providerReference: 'tr_1Abc' }) } };
    await setDestination(connect, { publisherId: s.pub.id, userId: s.people.owner.id }, { method: 'paypal', email: 'connect@example.com' });
    const p = valueOf(await requestPayout(connect, { publisherId: s.pub.id, userId: s.people.owner.id }));
    expect(p).toMatchObject({ status: 'sent', sent_reference: 'tr_1Abc', amount_cents: 6_500 });
    expect(await balance(s.pub.id, 'in_payout')).toBe(0);
    const events = (await pool.query(`SELECT type, data FROM events WHERE publisher_id = $1 AND type LIKE 'payout.%' ORDER BY id`, [s.pub.id])).rows;
    expect(events.map((e) => [e.type, e.data.by_user_id])).toEqual([['payout.requested', s.people.owner.id], ['payout.sent', null]]);
    await expectLedgerInvariants(h.database);
  });
});

describe('Payouts — races', () => {
  it('50 requests at once: one payout takes the money, the others are refused, the ledger sums to zero', async () => {
    const s = await setup(50_000);
    await setDestination(billing, { publisherId: s.pub.id, userId: s.people.owner.id }, { method: 'paypal', email: 'race@example.com' });
    const results = await Promise.allSettled(Array.from({ length: 50 }, () => requestPayout(billing, { publisherId: s.pub.id, userId: s.people.owner.id })));
    const ok = results.filter((r) => r.status === 'fulfilled');
    const refused = results.filter((r) => r.status === 'rejected').map((r) => (r as PromiseRejectedResult).reason);
    expect(ok).toHaveLength(1);
    expect(refused).toHaveLength(49);
    for (const e of refused) expect(e).toMatchObject({ code: 'conflict', details: { reason: 'below_minimum' } });
    expect(Number((await pool.query('SELECT count(*) FROM payouts WHERE publisher_id = $1', [s.pub.id])).rows[0].count)).toBe(1);
    expect(await balance(s.pub.id, 'in_payout')).toBe(50_000);
    expect(await balance(s.pub.id, 'payable')).toBe(0);
    await expectLedgerInvariants(h.database);
  });

  it('two staff marking one payout at once (sent against failed): one wins, the other 409', async () => {
    const s = await setup(9_000);
    await setDestination(billing, { publisherId: s.pub.id, userId: s.people.owner.id }, { method: 'paypal', email: 'race2@example.com' });
    const p = valueOf(await requestPayout(billing, { publisherId: s.pub.id, userId: s.people.owner.id }));
    const a = await staffMember('A Staff');
    const b = await staffMember('B Staff');
    const results = await Promise.allSettled([markPayoutSent(billing, { userId: a.id }, p.id, 'X-1'), markPayoutFailed(billing, { userId: b.id }, p.id, 'Bounced')]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    expect((results.find((r) => r.status === 'rejected') as PromiseRejectedResult).reason).toMatchObject({ code: 'conflict' });
    expect(await balance(s.pub.id, 'in_payout')).toBe(0);
    await expectLedgerInvariants(h.database);
  });
});

describe('Payouts — batch races', () => {
  it('a batch marked sent by two staff at once, while a third marks one of its payouts failed: each payout decided once', async () => {
    const pubs = [await setup(6_000), await setup(7_000), await setup(8_000)];
    const ids: number[] = [];
    for (const s of pubs) {
      await setDestination(billing, { publisherId: s.pub.id, userId: s.people.owner.id }, { method: 'paypal', email: `b${s.pub.id}@example.com` });
      ids.push(valueOf(await requestPayout(billing, { publisherId: s.pub.id, userId: s.people.owner.id })).id);
    }
    const [a, b, c] = [await staffMember('Ann Staff'), await staffMember('Ben Staff'), await staffMember('Cat Staff')];
    const batch = (await makePayoutBatch(billing, { userId: a.id }))!;
    expect(batch).toMatch(/^PB-/);
    const results = await Promise.allSettled([
      markBatchSent(billing, { userId: a.id }, batch, 'BATCH-A'),
      markBatchSent(billing, { userId: b.id }, batch, 'BATCH-B'),
      markPayoutFailed(billing, { userId: c.id }, ids[1]!, 'Bounced'),
    ]);
    const sentByBatches = results.slice(0, 2).filter((r) => r.status === 'fulfilled').map((r) => (r as PromiseFulfilledResult<{ sent: number }>).value.sent);
    expect(sentByBatches).toHaveLength(1);
    for (const r of results.filter((x) => x.status === 'rejected')) expect((r as PromiseRejectedResult).reason).toMatchObject({ code: 'conflict' });
    // The batch may hold other tests' pending payouts too: these three are judged.
    const { rows } = await pool.query('SELECT id, status, sent_reference FROM payouts WHERE id = ANY($1) ORDER BY id', [ids]);
    expect(rows.every((r) => r.status === 'sent' || r.status === 'failed')).toBe(true);
    expect(rows.filter((r) => r.status === 'failed').length).toBeLessThanOrEqual(1);
    expect(rows.filter((r) => r.status === 'failed').every((r) => r.id === ids[1])).toBe(true);
    expect(new Set(rows.filter((r) => r.status === 'sent').map((r) => r.sent_reference)).size).toBe(1);
    for (const [i, s] of pubs.entries()) {
      const status = rows.find((r) => r.id === ids[i])!.status;
      expect(await balance(s.pub.id, 'in_payout')).toBe(0);
      expect(await balance(s.pub.id, 'payable')).toBe(status === 'failed' ? [6_000, 7_000, 8_000][i] : 0);
    }
    await expectLedgerInvariants(h.database);
  });
});

describe('Payouts — unhappy', () => {
  it('a member or a viewer cannot request a payout or change where the publisher is paid (403)', async () => {
    const s = await setup();
    await saveIban(s);
    for (const c of [s.member, s.viewer]) {
      const page = await c.get(`${s.p}/payouts`);
      expect(page.statusCode).toBe(200);
      expect(page.body).toContain("Only the publisher's owners request payouts.");
      expect(page.body).not.toContain('Save where we pay you');
      const form = await s.owner.get(`${s.p}/payouts`);
      expect((await c.post(`${s.p}/payouts`, { idempotency_key: hidden(form.body, 'idempotency_key')! }, { from: `${s.p}/payouts` })).statusCode).toBe(403);
      expect((await c.post(`${s.p}/payouts/destination`, { method: 'paypal', paypal_email: 'thief@example.com' }, { from: `${s.p}/payouts` })).statusCode).toBe(403);
    }
    // The domain says the same, whatever the console shows.
    for (const who of [s.people.member, s.people.viewer]) {
      await expect(requestPayout(billing, { publisherId: s.pub.id, userId: who.id })).rejects.toMatchObject({ code: 'forbidden' });
      await expect(setDestination(billing, { publisherId: s.pub.id, userId: who.id }, { method: 'paypal', email: 'x@example.com' })).rejects.toMatchObject({ code: 'forbidden' });
    }
    expect(await balance(s.pub.id, 'payable')).toBe(12_345);
    expect((await pool.query('SELECT masked FROM payout_destinations WHERE publisher_id = $1', [s.pub.id])).rows[0].masked).toContain('IBAN');
  });

  it("another publisher's payout is 404, in the console and the API", async () => {
    const s = await setup();
    await saveIban(s);
    const id = await requestFromConsole(s);
    const other = await setup(0);
    expect((await other.owner.get(`${other.p}/payouts/${id}`)).statusCode).toBe(404);
    expect((await h.app.inject({ method: 'GET', url: `/api/v1/publisher/payouts/${id}`, headers: bearer(other.pub.key) })).statusCode).toBe(404);
    // And a workspace's person has no Payouts page.
    expect((await s.owner.get(`${s.p}/payouts/999999999`)).statusCode).toBe(404);
  });

  it('no details, or below the minimum: 409 naming why; a bad IBAN: 422 naming the field; nothing moves', async () => {
    const s = await setup(4_999);
    const bare = await s.owner.get(`${s.p}/payouts`);
    expect(bare.body).toContain('Give where we pay you first.');
    await expect(requestPayout(billing, { publisherId: s.pub.id, userId: s.people.owner.id })).rejects.toMatchObject({ code: 'conflict', details: { reason: 'no_payout_details' } });
    const bad = await s.owner.post(`${s.p}/payouts/destination`, { method: 'bank', holder: 'Paula', iban: 'DE89370400440532013001' }, { from: `${s.p}/payouts` });
    expect(bad.statusCode).toBe(422);
    expect(bad.body).toContain('IBAN is not a valid IBAN');
    expect(bad.body).not.toContain('DE89370400440532013001');
    const noHolder = await s.owner.post(`${s.p}/payouts/destination`, { method: 'bank', iban: IBAN }, { from: `${s.p}/payouts` });
    expect(noHolder.statusCode).toBe(422);
    expect(noHolder.body).toContain('Account holder is required');
    await saveIban(s);
    const low = await requestPayout(billing, { publisherId: s.pub.id, userId: s.people.owner.id }).catch((e: DomainError) => e);
    expect(low).toMatchObject({ code: 'conflict', details: { reason: 'below_minimum' } });
    expect((low as DomainError).message).toBe('The payable balance ($49.99) is below the smallest payout, $50.00.');
    expect(await balance(s.pub.id, 'payable')).toBe(4_999);
  });

  it("payout events are the publisher's only: a workspace's endpoint or filter naming one is 422 naming the field; the publisher's feed filters them", async () => {
    const ws = await workspaceWithKeys(pool);
    expect(() => requireReceivable({ party: 'buyer', workspaceId: ws.workspaceId }, ['payout.sent'], 'events')).toThrow(DomainError);
    const filtered = await h.app.inject({ method: 'GET', url: '/api/v1/events?type=payout.sent', headers: bearer(ws.readKey) });
    expect(filtered.statusCode).toBe(422);
    expect(filtered.json().errors.type[0]).toContain('only a publisher does');
    const s = await setup();
    await saveIban(s);
    await requestFromConsole(s);
    await sequenceEvents(pool, h.clock.now());
    const feed = await h.app.inject({ method: 'GET', url: '/api/v1/publisher/events?type=payout.requested', headers: bearer(s.pub.key) });
    expect(feed.statusCode, feed.body).toBe(200);
    expect(feed.json().data.map((e: { type: string }) => e.type)).toEqual(['payout.requested']);
  });

  it('bank details never reach the log: not when saved, refused, requested or exported', async () => {
    const s = await setup();
    await s.owner.post(`${s.p}/payouts/destination`, { method: 'bank', holder: 'Paula', iban: 'DE89370400440532013001' }, { from: `${s.p}/payouts` });
    await saveIban(s);
    await requestFromConsole(s);
    const staff = await staffMember('Lo Staff');
    const made = await staff.c.post('/app/ops/payout-batches', {}, { from: '/app/ops' });
    expect((await staff.c.get(`${made.headers.location!}/file`)).body).toContain(IBAN);
    const log = h.logs.join('');
    expect(log).toContain('/payouts/destination');
    for (const secret of ['0532013000', '0532013001', '0532 0130']) expect(log).not.toContain(secret);
  });

  it('the operations console is 404 to the publisher owner; a staff decision without a reason is 422', async () => {
    const s = await setup();
    await saveIban(s);
    const id = await requestFromConsole(s);
    expect((await s.owner.get(`/app/ops/payouts/${id}`)).statusCode).toBe(404);
    const staff = await staffMember('Cy Staff');
    const res = await staff.c.post(`/app/ops/payouts/${id}/failed`, { reason: ' ' }, { from: `/app/ops/payouts/${id}` });
    expect(res.statusCode).toBe(422);
    expect(await balance(s.pub.id, 'in_payout')).toBe(12_345);
  });
});
