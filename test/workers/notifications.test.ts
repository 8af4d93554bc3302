import { afterAll, describe, expect, it } from 'vitest';
import { sequenceEvents } from '../../src/domain/events/sequencer.js';
import { recordEvents } from '../../src/domain/events/record.js';
import { createKey } from '../../src/domain/keys/key-service.js';
import { setupApp } from '../helpers/app.js';
import { ManualClock } from '../helpers/clock.js';
import { outboxRows } from '../helpers/mail.js';
import { deliverAll, personIn, sweepAndSend } from '../helpers/notify.js';
import { articleFor, DAY, FAILING_LIVE_CHECKS, orderKit } from '../helpers/orders.js';
import { startSmtp } from '../helpers/smtp.js';

// "Needs your action" mails (docs/mail.md) against a real SMTP server: built from the event feed
// by the notifier's cursor (driven explicitly, after the sequencer, as the webhook tests drive
// deliveries), one mail per event and person whatever the number of processes; the reminders the
// deadline sweep derives from the clock (a deadline 24 h away, a key expiring within 7 days),
// once each; who is told (the side whose turn it is, the roles that may act, confirmed addresses
// only, viewers not by default).

const smtp = await startSmtp();
afterAll(() => smtp.stop());
const BASE = 'http://127.0.0.1:3000';
const config = { SMTP_URL: smtp.url, PUBLIC_BASE_URL: BASE, RATE_LIMIT_PER_MINUTE: 1_000_000 };
const clock = new ManualClock(Date.parse('2027-03-01T09:00:00Z'));
const h = await setupApp(config, { clock });
// A second server process on the same database.
const h2 = await setupApp(config, { clock, database: h.database });
const kit = orderKit(h);
const TARGET = 'https://buyer.example/app';

/** A workspace and a publisher, each with an owner; the publisher with a member too. */
async function parties(offers: Parameters<typeof kit.setup>[0] = [{}]) {
  const { ws, p } = await kit.setup(offers);
  const buyerOwner = await personIn(h, { workspaceId: ws.workspaceId }, 'owner');
  const pubOwner = await personIn(h, { publisherId: p.publisherId }, 'owner');
  const pubMember = await personIn(h, { publisherId: p.publisherId }, 'member');
  return { ws, p, buyerOwner, pubOwner, pubMember };
}
type Parties = Awaited<ReturnType<typeof parties>>;

/** An order with the buyer's article, so it waits for the publisher to accept it. */
async function placeWithContent(s: Parties) {
  const res = await kit.place(s.ws.spendKey, { offer_ids: [s.p.offers[0]!.id], target_url: TARGET, anchor_text: 'our product', content_title: 'Our product', content: articleFor(TARGET) });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().data[0].id as number;
}

const to = (mails: Awaited<ReturnType<typeof deliverAll>>, address: string) => mails.filter((m) => m.rcptTo.some((r) => r.toLowerCase() === address.toLowerCase()));

describe('Notifications from the event feed — happy', () => {
  it('a new order: each of the publisher\'s people gets one mail, linking to the order; the buyer\'s side none', async () => {
    const s = await parties();
    const id = await placeWithContent(s);
    const mails = await deliverAll(h, smtp);
    for (const person of [s.pubOwner, s.pubMember]) {
      const got = to(mails, person.email);
      expect(got, person.email).toHaveLength(1);
      const m = got[0]!.parsed;
      expect(m.subject).toMatch(new RegExp(`^New order #${id} to accept: Outlet \\d+$`));
      expect(m.text).toContain(`Hello ${person.name},`);
      expect(m.text).toContain(`${BASE}/app/p/${s.p.publisherId}/orders/${id}`);
      expect(m.html).toContain(`href="${BASE}/app/p/${s.p.publisherId}/orders/${id}"`);
      expect(m.text).toContain('Accept or decline it by 2027-03-04 09:00 UTC');
      expect(m.text).toContain(`${BASE}/app/p/${s.p.publisherId}/settings/notifications`);
    }
    expect(to(mails, s.buyerOwner.email)).toEqual([]);
    // Nothing more on the next runs: the cursor moved past the event.
    expect(await deliverAll(h, smtp)).toEqual([]);
  });

  it('two server processes on one database, running at once: one event, one mail per person', async () => {
    const s = await parties();
    await placeWithContent(s);
    await sequenceEvents(h.database.pool, clock.now());
    const runs = await Promise.all([h.app.notifier.drain(), h2.app.notifier.drain(), h.app.notifier.drain(), h2.app.notifier.drain()]);
    // One run read the event; the others found the cursor held or already past it.
    expect(runs.reduce((n, r) => n + r.mails, 0)).toBe(2);
    const before = smtp.received.length;
    await Promise.all([h.app.mailWorker.drain(), h2.app.mailWorker.drain()]);
    expect(to(smtp.received.slice(before), s.pubMember.email)).toHaveLength(1);
    expect(await outboxRows(h.database.pool, s.pubMember.email)).toHaveLength(1);
  });

  it('no event is skipped or told twice: orders placed while both processes position and notify, each told once', async () => {
    const s = await parties();
    let placing = true;
    const churn = async (x: typeof h) => {
      while (placing) {
        await sequenceEvents(x.database.pool, clock.now());
        await x.app.notifier.drain();
      }
    };
    const loops = [churn(h), churn(h2)];
    const ids = await Promise.all(Array.from({ length: 30 }, () => placeWithContent(s)));
    placing = false;
    await Promise.all(loops);
    await sequenceEvents(h.database.pool, clock.now());
    await h2.app.notifier.drain();
    const { rows } = await h.database.pool.query<{ subject: string }>(
      `SELECT subject FROM mail_outbox WHERE kind = 'order_to_accept' AND lower(to_address) = lower($1)`,
      [s.pubMember.email],
    );
    const told = rows.map((r) => Number(/#(\d+)/.exec(r.subject)![1])).sort((a, b) => a - b);
    expect(told).toEqual([...ids].sort((a, b) => a - b));
  });

  it('a draft to review: the workspace\'s owner and member are told, a viewer is not (off by default)', async () => {
    const s = await parties();
    const member = await personIn(h, { workspaceId: s.ws.workspaceId }, 'member');
    const viewer = await personIn(h, { workspaceId: s.ws.workspaceId }, 'viewer');
    const res = await kit.place(s.ws.spendKey, { offer_ids: [s.p.offers[0]!.id], target_url: TARGET, anchor_text: 'our product' });
    const id = res.json().data[0].id as number;
    expect((await kit.pub(s.p.publisherKey, `${id}/accept`)).statusCode).toBe(200);
    expect((await kit.pub(s.p.publisherKey, `${id}/draft`, { title: 'A draft', body: articleFor(TARGET) })).statusCode).toBe(200);
    const mails = await deliverAll(h, smtp);
    for (const person of [s.buyerOwner, member]) {
      const [m] = to(mails, person.email);
      expect(m?.parsed.subject, person.email).toMatch(new RegExp(`^A draft to review for order #${id}: `));
      expect(m!.parsed.text).toContain(`${BASE}/app/w/${s.ws.workspaceId}/orders/${id}`);
    }
    expect(to(mails, viewer.email)).toEqual([]);
    // The publisher caused it: nothing for its side.
    expect(to(mails, s.pubMember.email).map((m) => m.parsed.subject)).toEqual([]);
  });

  it('an approval request: the workspace\'s owner gets a mail linking to the request; a member and a viewer none', async () => {
    const s = await parties();
    const member = await personIn(h, { workspaceId: s.ws.workspaceId }, 'member');
    const viewer = await personIn(h, { workspaceId: s.ws.workspaceId }, 'viewer');
    const agent = await createKey(h.database.pool, { workspaceId: s.ws.workspaceId, canPlaceOrders: true, name: 'Research agent', needsApproval: true });
    const asked = await kit.place(agent.key, { offer_ids: [s.p.offers[0]!.id], target_url: TARGET, anchor_text: 'our app' });
    expect(asked.statusCode, asked.body).toBe(202);
    const request = asked.json().data as { id: number; approve_url: string; total_formatted: string };
    const mails = await deliverAll(h, smtp);
    const [m] = to(mails, s.buyerOwner.email);
    expect(m?.parsed.subject).toBe(`Approval needed: Research agent asks to spend ${request.total_formatted}`);
    expect(m!.parsed.text).toContain(request.approve_url);
    expect(request.approve_url).toBe(`${BASE}/app/w/${s.ws.workspaceId}/approvals/${request.id}`);
    expect(to(mails, member.email)).toEqual([]);
    expect(to(mails, viewer.email)).toEqual([]);
  });

  it('only a confirmed address is mailed', async () => {
    const s = await parties();
    const unconfirmed = await personIn(h, { publisherId: s.p.publisherId }, 'owner', { confirmed: false });
    await placeWithContent(s);
    const mails = await deliverAll(h, smtp);
    expect(to(mails, s.pubOwner.email)).toHaveLength(1);
    expect(to(mails, unconfirmed.email)).toEqual([]);
    expect(await outboxRows(h.database.pool, unconfirmed.email)).toEqual([]);
  });

  it('a step taken before the notifier read the event needs nobody: no mail about it', async () => {
    const s = await parties();
    const id = await placeWithContent(s);
    expect((await kit.pub(s.p.publisherKey, `${id}/accept`)).statusCode).toBe(200);
    expect(to(await deliverAll(h, smtp), s.pubMember.email)).toEqual([]);
  });

  it('content in, a placement live, a link lost: each to the side whose turn it is', async () => {
    const s = await parties([{ content_by: 'buyer' }]);
    const placed = await kit.place(s.ws.spendKey, { offer_ids: [s.p.offers[0]!.id], target_url: TARGET, anchor_text: 'our product' });
    const id = placed.json().data[0].id as number;
    expect(placed.json().data[0].status).toBe('awaiting_content');
    // Waiting for the buyer's article: nothing for the publisher yet.
    expect(to(await deliverAll(h, smtp), s.pubMember.email)).toEqual([]);
    expect((await kit.buyer(s.ws.spendKey, `${id}/content`, { title: 'Our product', body: articleFor(TARGET) })).statusCode).toBe(200);
    let mails = await deliverAll(h, smtp);
    expect(to(mails, s.pubMember.email).map((m) => m.parsed.subject)).toEqual([expect.stringMatching(new RegExp(`^Content in for order #${id}: `))]);
    expect((await kit.pub(s.p.publisherKey, `${id}/accept`)).statusCode).toBe(200);
    const live = `https://${s.p.domain}/our-product`;
    expect((await kit.pub(s.p.publisherKey, `${id}/publish`, { live_url: live })).statusCode).toBe(200);
    mails = await deliverAll(h, smtp);
    const [liveMail] = to(mails, s.buyerOwner.email);
    expect(liveMail?.parsed.subject).toMatch(new RegExp(`^Placement live to review for order #${id}: `));
    expect(liveMail!.parsed.text).toContain(live);
    // Approved and paid; later a check no longer finds the link: the publisher must restore it.
    await kit.verifyLiveLink(id);
    expect((await kit.buyer(s.ws.spendKey, `${id}/approve`)).json().data.status).toBe('completed');
    expect(await kit.recordLiveCheck(id, FAILING_LIVE_CHECKS)).not.toBe('checked');
    mails = await deliverAll(h, smtp);
    const [lost] = to(mails, s.pubMember.email);
    expect(lost?.parsed.subject).toMatch(new RegExp(`^Link lost on order #${id}: `));
    expect(lost!.parsed.text).toContain('Put it back by ');
    expect(to(mails, s.buyerOwner.email)).toEqual([]);
  });

  it("a key's budget used up (owners), a webhook endpoint disabled (owners): linked to the key and to the delivery log", async () => {
    const s = await parties();
    const member = await personIn(h, { workspaceId: s.ws.workspaceId }, 'member');
    const price = s.p.offers[0]!.price;
    const budgeted = await createKey(h.database.pool, { workspaceId: s.ws.workspaceId, canPlaceOrders: true, name: 'Budgeted agent', limits: { dailyLimitCents: price } }, clock);
    const res = await kit.place(budgeted.key, { offer_ids: [s.p.offers[0]!.id], target_url: TARGET, anchor_text: 'our product' });
    expect(res.statusCode, res.body).toBe(201);
    await recordEvents(h.database.pool, [{ type: 'webhook_endpoint.disabled', owner: { party: 'publisher', publisherId: s.p.publisherId }, actor: 'system', data: { id: 77, url: 'https://hooks.example/in', events: null, disabled_at: null, created_at: null } }], clock.now());
    const mails = await deliverAll(h, smtp);
    const [budget] = to(mails, s.buyerOwner.email).filter((m) => m.parsed.subject?.startsWith('Budget'));
    expect(budget?.parsed.subject).toBe('Budget used up: Budgeted agent');
    expect(budget!.parsed.text).toContain(`${BASE}/app/w/${s.ws.workspaceId}/settings/api-keys/${budgeted.id}`);
    expect(to(mails, member.email)).toEqual([]);
    const [hook] = to(mails, s.pubOwner.email).filter((m) => m.parsed.subject?.startsWith('Webhook'));
    expect(hook?.parsed.subject).toBe('Webhook endpoint disabled: https://hooks.example/in');
    expect(hook!.parsed.text).toContain(`${BASE}/app/p/${s.p.publisherId}/settings/webhooks/77/deliveries`);
    // A member cannot change webhooks: not told.
    expect(to(mails, s.pubMember.email).filter((m) => m.parsed.subject?.startsWith('Webhook'))).toEqual([]);
  });
});

describe('Reminders the deadline sweep derives — happy', () => {
  it('24 hours before a deadline that is theirs: the publisher\'s people are reminded once, whatever the number of sweeps and processes', async () => {
    const s = await parties();
    const id = await placeWithContent(s);
    await deliverAll(h, smtp);
    // Responding is due 72 h after placing: 25 h before it, nothing yet.
    clock.advance(47 * 3_600_000);
    let swept = await sweepAndSend(h, smtp);
    expect(to(swept.mails, s.pubMember.email)).toEqual([]);
    clock.advance(2 * 3_600_000);
    const both = await Promise.all([
      sweepAndSend(h, smtp),
      sweepAndSend(h2, smtp),
    ]);
    const reminders = both.flatMap((b) => to(b.mails, s.pubMember.email));
    expect(new Set(reminders.map((m) => m.parsed.messageId)).size).toBe(1);
    const [m] = reminders;
    expect(m!.parsed.subject).toMatch(new RegExp(`^Deadline in 24 hours: order #${id}, Outlet \\d+$`));
    expect(m!.parsed.text).toContain('accept or decline the order by 2027-03-0');
    expect(m!.parsed.text).toContain(`${BASE}/app/p/${s.p.publisherId}/orders/${id}`);
    expect(both.flatMap((b) => to(b.mails, s.buyerOwner.email))).toEqual([]);
    swept = await sweepAndSend(h, smtp);
    expect(to(swept.mails, s.pubMember.email)).toEqual([]);
    const rows = (await outboxRows(h.database.pool, s.pubMember.email)).filter((r) => r.kind === 'deadline_reminder');
    expect(rows).toHaveLength(1);
  });

  it('a state that lasts a day or less (a one-day turnaround) has no reminder: its deadline was that near from the start', async () => {
    const s = await parties([{ turnaround_days: 1 }]);
    const res = await kit.place(s.ws.spendKey, { offer_ids: [s.p.offers[0]!.id], target_url: TARGET, anchor_text: 'our product' });
    const id = res.json().data[0].id as number;
    expect((await kit.pub(s.p.publisherKey, `${id}/accept`)).json().data.status).toBe('writing');
    await deliverAll(h, smtp);
    clock.advance(3_600_000);
    const swept = await sweepAndSend(h, smtp);
    expect(to(swept.mails, s.pubMember.email)).toEqual([]);
  });

  it('a key expiring within 7 days: its workspace\'s owners and members are told once; a key made to last a few days is not', async () => {
    const { ws } = await kit.setup();
    const owner = await personIn(h, { workspaceId: ws.workspaceId }, 'owner');
    const member = await personIn(h, { workspaceId: ws.workspaceId }, 'member');
    const long = await createKey(h.database.pool, { workspaceId: ws.workspaceId, name: 'Reporting', expiresAt: new Date(clock.now() + 30 * DAY) }, clock);
    const spending = await createKey(h.database.pool, { workspaceId: ws.workspaceId, name: 'Spender', canPlaceOrders: true, expiresAt: new Date(clock.now() + 30 * DAY) }, clock);
    await createKey(h.database.pool, { workspaceId: ws.workspaceId, name: 'Short-lived', expiresAt: new Date(clock.now() + 3 * DAY) }, clock);
    // Made now on the test clock (the column's default is the database's own time).
    await h.database.pool.query('UPDATE api_keys SET created_at = $2 WHERE workspace_id = $1', [ws.workspaceId, new Date(clock.now())]);
    let swept = await sweepAndSend(h, smtp);
    expect(to(swept.mails, owner.email)).toEqual([]);
    clock.advance(24 * DAY);
    swept = await sweepAndSend(h, smtp);
    const subjects = (address: string) => to(swept.mails, address).map((m) => m.parsed.subject).sort();
    expect(subjects(owner.email)).toEqual([expect.stringMatching(/: Reporting$/), expect.stringMatching(/: Spender$/)]);
    // Rolling a spending key is an owner's: the member hears of the read-only key only.
    expect(subjects(member.email)).toEqual([expect.stringMatching(/^Key expiring on 2027-\d\d-\d\d: Reporting$/)]);
    expect(to(swept.mails, owner.email).find((m) => m.parsed.subject?.endsWith('Reporting'))!.parsed.text).toContain(`${BASE}/app/w/${ws.workspaceId}/settings/api-keys/${long.id}`);
    expect(spending.id).toBeGreaterThan(0);
    swept = await sweepAndSend(h, smtp);
    expect(to(swept.mails, owner.email)).toEqual([]);
  });
});

describe('Notifications with the loops running — happy', () => {
  it('a new order reaches the publisher\'s member within seconds, with the sequencer, notifier and mail worker on their own timers', async () => {
    const live = await setupApp({ ...config, EVENTS_POLL_INTERVAL_MS: 50, MAIL_POLL_INTERVAL_MS: 50 });
    const liveKit = orderKit(live);
    const { ws, p } = await liveKit.setup();
    const member = await personIn(live, { publisherId: p.publisherId }, 'member');
    const started = Date.now();
    const res = await liveKit.place(ws.spendKey, { offer_ids: [p.offers[0]!.id], target_url: TARGET, anchor_text: 'our product', content_title: 'Ours', content: articleFor(TARGET) });
    expect(res.statusCode).toBe(201);
    for (let i = 0; i < 250 && smtp.to(member.email).length === 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect(smtp.to(member.email)).toHaveLength(1);
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});

describe('Notifications with SMTP on — security', () => {
  it('no unsubscribe token or link reaches the log', async () => {
    const all = [...h.logs, ...h2.logs].join('');
    const links = smtp.received.flatMap((m) => [...(m.parsed.text ?? '').matchAll(/\/app\/unsubscribe\?token=([^\s]+)/g)].map((x) => x[1]!));
    expect(links.length).toBeGreaterThan(5);
    for (const token of links) expect(all).not.toContain(token);
    expect(all).not.toContain(`${BASE}/app/`);
    expect(all).not.toContain(smtp.password);
  });
});
