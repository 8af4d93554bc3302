import { describe, expect, it } from 'vitest';
import { setApprovalRules } from '../../src/domain/workspaces/workspace-service.js';
import { buyerOrder, publisherOrder } from '../../src/schemas/orders.js';
import { setupApp } from '../helpers/app.js';
import { articleFor, DAY, FAILING_LIVE_CHECKS, iso, orderKit } from '../helpers/orders.js';
import { bearer } from '../helpers/fixtures.js';
import { expectLedgerInvariants } from '../helpers/ledger-invariants.js';

// Grouped by the endpoint each test is about; most have no errors or security block: those routes' refusals are in orders-errors.test.ts, their 401/403/404s in security.test.ts.

const h = await setupApp();
const { place, buyer, pub, sweep, balances, pending, payable, verifyLiveLink, recordLiveCheck, fees, setup } = orderKit(h);

describe('POST /api/v1/orders, then every buyer and publisher action to completion — happy', () => {
  it('walks every step with balances and invariants after each', async () => {
    const { ws, p } = await setup([{ content_by: 'publisher', publisher_price_cents: 10_000 }]);
    const placed = await place(ws.spendKey, { offer_ids: [p.offers[0]!.id], target_url: 'https://buyer.example/product', anchor_text: 'our product', brief: 'Write about us' });
    expect(placed.statusCode).toBe(201);
    const order = buyerOrder.parse(placed.json().data[0]);
    expect(placed.json().data).toHaveLength(1);
    expect(order).toMatchObject({ status: 'awaiting_acceptance', turn: 'publisher', your_turn: false, price: 12_000, price_formatted: '$120.00', content: null, live_url: null });
    expect(order.deadlines.respond_by).toBe(iso(h.clock.now() + 72 * 3_600_000));
    expect(order.deadlines.deliver_by).toBeNull();
    expect(await balances(ws.workspaceId)).toEqual({ available: 988_000, held: 12_000 });
    await expectLedgerInvariants(h.database);

    const accepted = await pub(p.publisherKey, `${order.id}/accept`);
    expect(accepted.statusCode).toBe(200);
    const pv = publisherOrder.parse(accepted.json().data);
    expect(pv).toMatchObject({ status: 'writing', turn: 'publisher', your_turn: true, payout_cents: 10_000, payout_formatted: '$100.00' });
    expect(accepted.json().data).not.toHaveProperty('price');
    expect(accepted.json().data).not.toHaveProperty('project_id');
    expect(pv.deadlines.deliver_by).not.toBeNull();

    const draft = await pub(p.publisherKey, `${order.id}/draft`, { title: 'Our product, reviewed', body: articleFor('https://buyer.example/product') });
    expect(draft.json().data).toMatchObject({ status: 'draft_review', turn: 'buyer', content: { version: 1, submitted_by: 'publisher' } });
    const checks = Object.fromEntries(draft.json().data.content.checks.map((c: { name: string; status: string }) => [c.name, c.status]));
    expect(checks).toEqual({ target_link: 'pass', anchor_text: 'pass', word_count: 'pass', link_count: 'pass', title_length: 'pass', markdown_safe: 'pass' });

    await buyer(ws.readKey, `${order.id}/messages`, { body: 'Please mention the price.' });
    const revised = await pub(p.publisherKey, `${order.id}/draft`, { title: 'Our product, reviewed again', body: `${articleFor('https://buyer.example/product')} <script>x</script>` });
    expect(revised.json().data).toMatchObject({ status: 'draft_review', content: { version: 2 } });
    expect(revised.json().data.content.checks.find((c: { name: string }) => c.name === 'markdown_safe').status).toBe('fail');

    // A bad live URL is a 422 even in a state that cannot publish (422 before 409).
    const earlyBadUrl = await pub(p.publisherKey, `${order.id}/publish`, { live_url: 'https://elsewhere.example/post' });
    expect(earlyBadUrl.statusCode).toBe(422);
    expect((await pub(p.publisherKey, `${order.id}/publish`, { live_url: `https://${p.domain}/post` })).statusCode).toBe(409);

    const approvedDraft = await buyer(ws.readKey, `${order.id}/approve-draft`);
    expect(approvedDraft.json().data).toMatchObject({ status: 'publishing', turn: 'publisher' });
    expect(approvedDraft.json().data.deadlines.deliver_by).toBe(iso(h.clock.now() + 3 * DAY));

    const wrongDomain = await pub(p.publisherKey, `${order.id}/publish`, { live_url: 'https://elsewhere.example/post' });
    expect(wrongDomain.statusCode).toBe(422);
    expect(Object.keys(wrongDomain.json().errors)).toEqual(['live_url']);
    const disguised = await pub(p.publisherKey, `${order.id}/publish`, { live_url: `https://evil.example@${p.domain}/post` });
    expect(disguised.statusCode).toBe(422);
    const published = await pub(p.publisherKey, `${order.id}/publish`, { live_url: `https://blog.${p.domain}/our-product` });
    expect(published.json().data).toMatchObject({ status: 'live_review', live_url: `https://blog.${p.domain}/our-product` });

    const readOnlyApprove = await buyer(ws.readKey, `${order.id}/approve`);
    expect(readOnlyApprove.statusCode).toBe(403);
    const pendingBefore = await pending(p.publisherId);
    const payableBefore = await payable(p.publisherId);
    const feesBefore = await fees();
    const done = await buyer(ws.spendKey, `${order.id}/approve`);
    expect(done.statusCode).toBe(200);
    expect(done.json().data).toMatchObject({ status: 'completed', turn: null, your_turn: false });
    expect(await balances(ws.workspaceId)).toEqual({ available: 988_000, held: 0 });
    // Paid on approval into pending: payable waits for the end of the link guarantee.
    expect((await pending(p.publisherId)) - pendingBefore).toBe(10_000);
    expect(await payable(p.publisherId)).toBe(payableBefore);
    expect(done.json().data.guarantee_ends_at).toBe(iso(h.clock.now() + h.config.LINK_GUARANTEE_DAYS * DAY));
    expect((await fees()) - feesBefore).toBe(2_000);
    await expectLedgerInvariants(h.database);

    const again = await buyer(ws.spendKey, `${order.id}/approve`);
    expect(again.statusCode).toBe(409);
    expect(again.json()).toMatchObject({ code: 'conflict', status: 'completed' });

    const detail = await h.app.inject({ method: 'GET', url: `/api/v1/orders/${order.id}`, headers: bearer(ws.readKey) });
    expect(detail.json().data.messages).toEqual([{ id: expect.any(Number), body: 'Please mention the price.', author: 'buyer', created_at: expect.any(String) }]);
  });

  it('awaiting_content → content → accept → publishing (turnaround) → live → auto-approved by the sweep', async () => {
    const { ws, p } = await setup([{ content_by: 'buyer', turnaround_days: 5 }]);
    const order = (await place(ws.spendKey, { offer_ids: [p.offers[0]!.id], target_url: 'https://buyer.example/' })).json().data[0];
    expect(order).toMatchObject({ status: 'awaiting_content', turn: 'buyer', your_turn: true });
    expect(order.deadlines.review_by).toBe(iso(h.clock.now() + 14 * DAY));
    const tooEarly = await pub(p.publisherKey, `${order.id}/accept`);
    expect(tooEarly.statusCode).toBe(409);
    expect(tooEarly.json().status).toBe('awaiting_content');
    const content = await buyer(ws.readKey, `${order.id}/content`, { title: 'My own article', body: articleFor('https://buyer.example/') });
    expect(content.json().data).toMatchObject({ status: 'awaiting_acceptance', content: { version: 1, submitted_by: 'buyer' } });
    const accepted = await pub(p.publisherKey, `${order.id}/accept`);
    expect(accepted.json().data.status).toBe('publishing');
    expect(accepted.json().data.deadlines.deliver_by).toBe(iso(h.clock.now() + 5 * DAY));
    await pub(p.publisherKey, `${order.id}/publish`, { live_url: `https://${p.domain}/x` });
    await verifyLiveLink(order.id);
    const pendingBefore = await pending(p.publisherId);
    const payableBefore = await payable(p.publisherId);
    h.clock.advance(7 * DAY - 1000);
    expect((await sweep()).auto_approved).toBe(0);
    h.clock.advance(1000);
    const r = await sweep();
    expect(r.auto_approved).toBe(1);
    expect((await pending(p.publisherId)) - pendingBefore).toBe(10_000);
    expect(await payable(p.publisherId)).toBe(payableBefore);
    expect(await balances(ws.workspaceId)).toEqual({ available: 1_000_000 - 12_000, held: 0 });
    await expectLedgerInvariants(h.database);
  });
});

describe('POST /api/v1/publisher/orders/{id}/publish, then the live review deadline without a passing link check — happy', () => {
  it('returns the placement to publishing once, then expires it with a refund; the publisher is never paid', async () => {
    const { ws, p } = await setup([{ content_by: 'buyer' }]);
    const order = (await place(ws.spendKey, { offer_ids: [p.offers[0]!.id], target_url: 'https://buyer.example/', content: articleFor('https://buyer.example/'), content_title: 'A fine title' })).json().data[0];
    await pub(p.publisherKey, `${order.id}/accept`);
    const live = await pub(p.publisherKey, `${order.id}/publish`, { live_url: `https://${p.domain}/x` });
    expect(live.json().data).toMatchObject({ status: 'live_review', live_checks: [], live_checked_at: null, guarantee_ends_at: null });
    const before = { pending: await pending(p.publisherId), payable: await payable(p.publisherId) };

    // The check is still to come: the deadline waits for it.
    h.clock.advance(7 * DAY);
    expect(await sweep()).toEqual({ expired: 0, auto_approved: 0, drafts_auto_approved: 0, returned: 0, link_refunded: 0 });
    expect((await h.app.inject({ method: 'GET', url: `/api/v1/orders/${order.id}`, headers: bearer(ws.readKey) })).json().data.status).toBe('live_review');
    // It fails: the deadline cannot approve it.
    await recordLiveCheck(order.id, FAILING_LIVE_CHECKS);
    expect(await sweep()).toEqual({ expired: 0, auto_approved: 0, drafts_auto_approved: 0, returned: 1, link_refunded: 0 });
    const returned = (await h.app.inject({ method: 'GET', url: `/api/v1/orders/${order.id}`, headers: bearer(ws.readKey) })).json().data;
    expect(returned).toMatchObject({ status: 'publishing', turn: 'publisher' });
    expect(returned.deadlines.deliver_by).not.toBeNull();
    const events = await h.database.pool.query(`SELECT type FROM events WHERE order_id = $1 ORDER BY id`, [order.id]);
    expect(events.rows.map((r) => r.type)).toContain('order.live_check_failed');

    await pub(p.publisherKey, `${order.id}/publish`, { live_url: `https://${p.domain}/x-again` });
    await recordLiveCheck(order.id, FAILING_LIVE_CHECKS);
    h.clock.advance(7 * DAY);
    expect(await sweep()).toEqual({ expired: 1, auto_approved: 0, drafts_auto_approved: 0, returned: 0, link_refunded: 0 });
    const expired = (await h.app.inject({ method: 'GET', url: `/api/v1/orders/${order.id}`, headers: bearer(ws.readKey) })).json().data;
    expect(expired.status).toBe('expired');
    expect(await balances(ws.workspaceId)).toEqual({ available: 1_000_000, held: 0 });
    expect({ pending: await pending(p.publisherId), payable: await payable(p.publisherId) }).toEqual(before);
    await expectLedgerInvariants(h.database);
  });
});

describe('POST /api/v1/orders — happy', () => {
  it('content given at placement skips awaiting_content and runs the checks', async () => {
    const { ws, p } = await setup([{ content_by: 'buyer', max_links: 0 }]);
    const res = await place(ws.spendKey, { offer_ids: [p.offers[0]!.id], target_url: 'https://buyer.example/', anchor_text: 'other', content: articleFor('https://buyer.example/', 'our product'), content_title: 'A fine title' });
    expect(res.statusCode, res.body).toBe(201);
    const order = res.json().data[0];
    expect(order).toMatchObject({ status: 'awaiting_acceptance', content: { version: 1, submitted_by: 'buyer', title: 'A fine title' } });
    const checks = Object.fromEntries(order.content.checks.map((c: { name: string; status: string }) => [c.name, c.status]));
    expect(checks).toMatchObject({ target_link: 'pass', anchor_text: 'warn', link_count: 'fail' });
    // The placement answer (built from what was written) is what a read returns.
    const listed = await h.app.inject({ method: 'GET', url: '/api/v1/orders?per_page=1', headers: bearer(ws.readKey) });
    expect(listed.json().data[0]).toEqual(order);
    const accepted = await pub(p.publisherKey, `${order.id}/accept`);
    expect(accepted.statusCode, accepted.body).toBe(200);
    expect(accepted.json().data.status).toBe('publishing');
  });

  it('writes one order per offer in the order asked, each with its own status, deadline, frozen price and escrow entry', async () => {
    const { ws, p } = await setup([
      { content_by: 'publisher', publisher_price_cents: 10_000 },
      { content_by: 'buyer', publisher_price_cents: 20_000, title: 'Buyer writes' },
    ]);
    const [byPublisher, byBuyer] = p.offers as [(typeof p.offers)[0], (typeof p.offers)[0]];
    const res = await place(ws.spendKey, { offer_ids: [byBuyer.id, byPublisher.id], target_url: 'https://buyer.example/' });
    expect(res.statusCode).toBe(201);
    const [first, second] = res.json().data;
    expect(first).toMatchObject({ offer: { id: byBuyer.id }, status: 'awaiting_content', price: byBuyer.price });
    expect(first.deadlines).toEqual({ respond_by: null, deliver_by: null, review_by: iso(h.clock.now() + 14 * DAY), restore_by: null });
    expect(second).toMatchObject({ offer: { id: byPublisher.id }, status: 'awaiting_acceptance', price: byPublisher.price });
    expect(second.deadlines).toEqual({ respond_by: iso(h.clock.now() + 72 * 3_600_000), deliver_by: null, review_by: null, restore_by: null });

    // What was written is what the response says, and each order has its own escrow movement.
    const { rows } = await h.database.pool.query(
      `SELECT o.id, o.offer_id, o.status, o.price, o.publisher_price_cents, o.deadline_at, o.placed_by_key_id IS NOT NULL AS keyed,
              (SELECT array_agg(e.amount ORDER BY e.amount) FROM ledger_transactions t JOIN ledger_entries e ON e.transaction_id = t.id
                WHERE t.order_id = o.id AND t.kind = 'order_placed') AS amounts
         FROM orders o WHERE o.workspace_id = $1 ORDER BY o.id`,
      [ws.workspaceId],
    );
    expect(rows.map((r) => [Number(r.id), r.offer_id, r.status, Number(r.price), Number(r.publisher_price_cents), iso(r.deadline_at.getTime())])).toEqual([
      [first.id, byBuyer.id, 'awaiting_content', byBuyer.price, 20_000, first.deadlines.review_by],
      [second.id, byPublisher.id, 'awaiting_acceptance', byPublisher.price, 10_000, second.deadlines.respond_by],
    ]);
    expect(rows.map((r) => r.amounts.map(Number))).toEqual([
      [-byBuyer.price, byBuyer.price],
      [-byPublisher.price, byPublisher.price],
    ]);
    expect(await balances(ws.workspaceId)).toEqual({ available: 1_000_000 - byBuyer.price - byPublisher.price, held: byBuyer.price + byPublisher.price });
    await expectLedgerInvariants(h.database);
  });
});

describe('POST /api/v1/orders and POST /api/v1/orders/{id}/content (content titles) — errors', () => {
  it('a short title is a failed title_length check in both places, never a 422; a blank or over-long one is refused in both', async () => {
    const { ws, p } = await setup([{ content_by: 'buyer' }, { content_by: 'buyer' }]);
    const body = articleFor('https://buyer.example/', 'our product');
    const placed = await place(ws.spendKey, { offer_ids: [p.offers[0]!.id], target_url: 'https://buyer.example/', content: body, content_title: 'Short' });
    expect(placed.statusCode, placed.body).toBe(201);
    const titleCheck = (content: { checks: { name: string; status: string }[] }) => content.checks.find((c) => c.name === 'title_length')!.status;
    expect(titleCheck(placed.json().data[0].content)).toBe('fail');

    const bare = await place(ws.spendKey, { offer_ids: [p.offers[1]!.id], target_url: 'https://buyer.example/' });
    expect(bare.statusCode, bare.body).toBe(201);
    const submitted = await buyer(ws.readKey, `${bare.json().data[0].id}/content`, { title: 'Short', body });
    expect(submitted.statusCode, submitted.body).toBe(200);
    expect(titleCheck(submitted.json().data.content)).toBe('fail');

    for (const title of ['   ', 'x'.repeat(301)]) {
      const refused = await place(ws.spendKey, { offer_ids: [p.offers[1]!.id], target_url: 'https://buyer.example/', content: body, content_title: title });
      expect(refused.statusCode).toBe(422);
      expect(Object.keys(refused.json().errors)).toEqual(['content_title']);
      const refusedToo = await buyer(ws.readKey, `${bare.json().data[0].id}/content`, { title, body });
      expect(refusedToo.statusCode).toBe(422);
      expect(Object.keys(refusedToo.json().errors)).toEqual(['title']);
    }
  });
});

describe('POST /api/v1/publisher/orders/{id}/draft — happy', () => {
  it("content terms are the offer's as bought, for every version, whatever the offer asks later", async () => {
    const { ws, p } = await setup([{ content_by: 'publisher', max_links: 2 }]);
    const offer = p.offers[0]!;
    const [terms] = (await h.database.pool.query('SELECT min_words, max_words, max_links FROM offers WHERE id = $1', [offer.id])).rows;
    const order = (await place(ws.spendKey, { offer_ids: [offer.id], target_url: 'https://buyer.example/' })).json().data[0];
    // The publisher re-imports the offer with stricter terms.
    await h.database.pool.query('UPDATE offers SET min_words = 5000, max_words = 6000, max_links = 0 WHERE id = $1', [offer.id]);
    await pub(p.publisherKey, `${order.id}/accept`);
    const draft = await pub(p.publisherKey, `${order.id}/draft`, { title: 'Written to the terms bought', body: articleFor('https://buyer.example/') });
    const checks = draft.json().data.content.checks as { name: string; status: string; detail: string }[];
    const byName = Object.fromEntries(checks.map((c) => [c.name, c]));
    expect(byName.word_count).toMatchObject({ status: 'pass', detail: expect.stringContaining(`(${terms.min_words}–${terms.max_words})`) });
    expect(byName.link_count!.status).toBe('pass');
  });

  it('auto_approve_drafts sends a draft straight to publishing', async () => {
    const { ws, p } = await setup();
    await setApprovalRules(h.database.pool, ws.workspaceId, { autoApproveDrafts: true });
    const order = (await place(ws.spendKey, { offer_ids: [p.offers[0]!.id], target_url: 'https://buyer.example/' })).json().data[0];
    await pub(p.publisherKey, `${order.id}/accept`);
    const draft = await pub(p.publisherKey, `${order.id}/draft`, { title: 'Auto approved draft', body: articleFor('https://buyer.example/') });
    expect(draft.json().data.status).toBe('publishing');
  });

  it('a revised draft keeps review_by; with auto_approve_drafts switched on during the review it goes to publishing', async () => {
    const { ws, p } = await setup();
    const order = (await place(ws.spendKey, { offer_ids: [p.offers[0]!.id], target_url: 'https://buyer.example/' })).json().data[0];
    await pub(p.publisherKey, `${order.id}/accept`);
    const first = (await pub(p.publisherKey, `${order.id}/draft`, { title: 'The first draft', body: articleFor('https://buyer.example/') })).json().data;
    expect(first.status).toBe('draft_review');
    h.clock.advance(DAY);
    const revised = (await pub(p.publisherKey, `${order.id}/draft`, { title: 'The revised draft', body: articleFor('https://buyer.example/') })).json().data;
    expect(revised).toMatchObject({ status: 'draft_review', content: { version: 2 }, deadlines: { review_by: first.deadlines.review_by } });
    await setApprovalRules(h.database.pool, ws.workspaceId, { autoApproveDrafts: true });
    const third = await pub(p.publisherKey, `${order.id}/draft`, { title: 'The third draft', body: articleFor('https://buyer.example/') });
    expect(third.statusCode, third.body).toBe(200);
    expect(third.json().data).toMatchObject({ status: 'publishing', content: { version: 3 } });
    expect(third.json().data.deadlines.deliver_by).toBeTruthy();
  });
});

describe('POST /api/v1/publisher/orders/{id}/decline — happy', () => {
  it('decline refunds the buyer', async () => {
    const { ws, p } = await setup();
    const order = (await place(ws.spendKey, { offer_ids: [p.offers[0]!.id], target_url: 'https://buyer.example/' })).json().data[0];
    const missingReason = await pub(p.publisherKey, `${order.id}/decline`, {});
    expect(missingReason.statusCode).toBe(422);
    const declined = await pub(p.publisherKey, `${order.id}/decline`, { reason: 'Not our topic' });
    expect(declined.json().data).toMatchObject({ status: 'declined', decline_reason: 'Not our topic', turn: null });
    expect(await balances(ws.workspaceId)).toEqual({ available: 1_000_000, held: 0 });
    await expectLedgerInvariants(h.database);
  });
});

describe('POST /api/v1/orders/{id}/cancel — happy', () => {
  it('cancel before acceptance refunds; after acceptance it is 409', async () => {
    const { ws, p } = await setup([{}, { title: 'Second' }]);
    const [a, b] = (await place(ws.spendKey, { offer_ids: p.offers.map((o) => o.id), target_url: 'https://buyer.example/' })).json().data;
    expect((await buyer(ws.readKey, `${a.id}/cancel`)).json().data.status).toBe('cancelled');
    await pub(p.publisherKey, `${b.id}/accept`);
    const late = await buyer(ws.readKey, `${b.id}/cancel`);
    expect(late.statusCode).toBe(409);
    expect(late.json()).toMatchObject({ code: 'conflict', status: 'writing' });
    expect(await balances(ws.workspaceId)).toEqual({ available: 1_000_000 - 12_000, held: 12_000 });
    await expectLedgerInvariants(h.database);
  });
});
