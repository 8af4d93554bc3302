import { describe, expect, it } from 'vitest';
import { setupApp } from '../helpers/app.js';
import { articleFor, DAY, orderKit } from '../helpers/orders.js';
import { bearer } from '../helpers/fixtures.js';
import { expectLedgerInvariants } from '../helpers/ledger-invariants.js';

const h = await setupApp();
const { place, buyer, pub, sweep, balances, setup } = orderKit(h);

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
    expect(first).toEqual({ expired: 3, auto_approved: 0, drafts_auto_approved: 0, returned: 0, link_refunded: 0 });
    h.clock.advance(4 * DAY); // draft_review (7 d from its start) passed
    expect(await sweep()).toEqual({ expired: 0, auto_approved: 0, drafts_auto_approved: 1, returned: 0, link_refunded: 0 });
    h.clock.advance(7 * DAY); // awaiting_content (14 d), and the auto-approved draft's 3-day publishing
    expect(await sweep()).toEqual({ expired: 2, auto_approved: 0, drafts_auto_approved: 0, returned: 0, link_refunded: 0 });
    const statuses = await Promise.all(orders.map(async (o: { id: number }) => (await h.app.inject({ method: 'GET', url: `/api/v1/orders/${o.id}`, headers: bearer(ws.readKey) })).json().data.status));
    expect(statuses).toEqual(['expired', 'expired', 'expired', 'expired', 'expired']);
    expect(needsContent.status).toBe('awaiting_content');
    expect(unanswered.status).toBe('awaiting_acceptance');
    // draftIgnored went to publishing at day 7 (3-day deadline) and then expired at day 14.
    expect(await balances(ws.workspaceId)).toEqual({ available: 1_000_000, held: 0 });
    expect(await sweep()).toEqual({ expired: 0, auto_approved: 0, drafts_auto_approved: 0, returned: 0, link_refunded: 0 });
    await expectLedgerInvariants(h.database);
  });
});
