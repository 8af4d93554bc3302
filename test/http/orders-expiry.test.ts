import { describe, expect, it } from 'vitest';
import { sweepDeadlines } from '../../src/domain/orders/sweep.js';
import { durationsFrom } from '../../src/domain/orders/states.js';
import { setApprovalRules } from '../../src/domain/workspaces/workspace-service.js';
import { buyerOrder, publisherOrder } from '../../src/http/schemas/orders.js';
import { setupApp } from '../helpers/app.js';
import { publisherWithOutlet } from '../helpers/catalog.js';
import { bearer, workspaceWithKeys } from '../helpers/fixtures.js';
import { expectLedgerInvariants } from '../helpers/ledger-invariants.js';

const h = await setupApp();
const DAY = 86_400_000;
const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
const durations = durationsFrom(h.config);
let seq = 0;

async function balances(workspaceId: number) {
  const { rows } = await h.database.pool.query(`SELECT kind, balance FROM ledger_accounts WHERE workspace_id = $1`, [workspaceId]);
  return Object.fromEntries(rows.map((r) => [r.kind, r.balance])) as { available: number; held: number };
}
async function payable(publisherId: number) {
  const { rows } = await h.database.pool.query(`SELECT balance FROM ledger_accounts WHERE publisher_id = $1`, [publisherId]);
  return rows[0].balance as number;
}
async function fees() {
  const { rows } = await h.database.pool.query(`SELECT balance FROM ledger_accounts WHERE kind = 'fees'`);
  return rows[0].balance as number;
}

async function place(key: string, body: Record<string, unknown>, idem = `k-${++seq}`) {
  return h.app.inject({ method: 'POST', url: '/api/v1/orders', headers: { ...bearer(key), 'idempotency-key': idem }, payload: body });
}
async function buyer(key: string, path: string, payload?: unknown) {
  return h.app.inject({ method: 'POST', url: `/api/v1/orders/${path}`, headers: bearer(key), ...(payload ? { payload: payload as object } : {}) });
}
async function pub(key: string, path: string, payload?: unknown) {
  return h.app.inject({ method: 'POST', url: `/api/v1/publisher/orders/${path}`, headers: bearer(key), ...(payload ? { payload: payload as object } : {}) });
}
const sweep = () => sweepDeadlines(h.database.pool, h.clock.now(), durations);
const articleFor = (url: string, anchor = 'our product') =>
  `# A useful article\n\n${'Plenty of words here to satisfy the count. '.repeat(10)}\n\nRead about [${anchor}](${url}).`;

async function setup(offers = [{}], balance = 1_000_000) {
  const ws = await workspaceWithKeys(h.database.db, { balanceCents: balance });
  const p = await publisherWithOutlet(h.database, offers);
  return { ws, p };
}

describe('deadlines', () => {
  it('each expiry refunds or auto-approves exactly once', async () => {
    const { ws, p } = await setup([{ content_by: 'buyer', title: 'Needs content' }, { title: 'Unanswered' }, { title: 'Never written', turnaround_days: 2 }, { title: 'Never published', turnaround_days: 2 }, { title: 'Draft ignored' }]);
    const orders = (await place(ws.spendKey, { offer_ids: p.offers.map((o) => o.id), target_url: 'https://buyer.example/' })).json().data;
    const [needsContent, unanswered, neverWritten, neverPublished, draftIgnored] = orders;
    for (const o of [neverWritten, neverPublished, draftIgnored]) await pub(p.publisherKey, `${o.id}/accept`);
    await pub(p.publisherKey, `${draftIgnored.id}/draft`, { title: 'Ignored draft title', body: articleFor('https://buyer.example/') });
    await pub(p.publisherKey, `${neverPublished.id}/draft`, { title: 'Approved draft title', body: articleFor('https://buyer.example/') });
    await buyer(ws.readKey, `${neverPublished.id}/approve-draft`); // publishing: 3 days
    const held = orders.reduce((s: number, o: { price: number }) => s + o.price, 0);
    expect((await balances(ws.workspaceId)).held).toBe(held);

    h.clock.advance(3 * DAY + 1); // respond_by (72 h) and publishing (3 d) have passed; deliver_by (2 d) too
    const first = await sweep();
    expect(first).toEqual({ expired: 3, auto_approved: 0, drafts_auto_approved: 0 });
    h.clock.advance(4 * DAY); // draft_review (7 d from its start) passed
    expect(await sweep()).toEqual({ expired: 0, auto_approved: 0, drafts_auto_approved: 1 });
    h.clock.advance(7 * DAY); // awaiting_content (14 d), and the auto-approved draft's 3-day publishing
    expect(await sweep()).toEqual({ expired: 2, auto_approved: 0, drafts_auto_approved: 0 });
    const statuses = await Promise.all(orders.map(async (o: { id: number }) => (await h.app.inject({ method: 'GET', url: `/api/v1/orders/${o.id}`, headers: bearer(ws.readKey) })).json().data.status));
    expect(statuses).toEqual(['expired', 'expired', 'expired', 'expired', 'expired']);
    expect(needsContent.status).toBe('awaiting_content');
    expect(unanswered.status).toBe('awaiting_acceptance');
    // draftIgnored went to publishing at day 7 (3-day deadline) and then expired at day 14.
    expect(await balances(ws.workspaceId)).toEqual({ available: 1_000_000, held: 0 });
    expect(await sweep()).toEqual({ expired: 0, auto_approved: 0, drafts_auto_approved: 0 });
    await expectLedgerInvariants(h.database);
  });
});
