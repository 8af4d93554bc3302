import { afterAll, describe, expect, it } from 'vitest';
import { notificationSettings } from '../../src/domain/notifications/preferences.js';
import { setupApp } from '../helpers/app.js';
import { ManualClock } from '../helpers/clock.js';
import { deliverAll, headerLine, PASSWORD, personIn, sweepAndSend } from '../helpers/notify.js';
import { articleFor, DAY, orderKit } from '../helpers/orders.js';
import { startSmtp } from '../helpers/smtp.js';
import { consoleClient } from './helpers.js';

// Settings → Notifications and the one-click unsubscribe of every notification mail (docs/mail.md)
// through app.inject, with a real SMTP server: the page's defaults by role, refusals named; the
// List-Unsubscribe headers (RFC 8058); a POST to the link without any session stops that kind and
// no other; opening the link (a mail scanner) changes nothing; the daily digest.

const smtp = await startSmtp();
afterAll(() => smtp.stop());
const BASE = 'http://127.0.0.1:3000';
const clock = new ManualClock(Date.parse('2027-03-01T09:00:00Z'));
const h = await setupApp({ SMTP_URL: smtp.url, PUBLIC_BASE_URL: BASE, RATE_LIMIT_PER_MINUTE: 1_000_000, SIGNIN_FAILURES_PER_ADDRESS: 1000 }, { clock });
const kit = orderKit(h);
const TARGET = 'https://buyer.example/app';
let ip = 0;

async function signedIn(email: string) {
  const c = consoleClient(h, `10.77.0.${++ip}`);
  expect((await c.post('/app/sign-in', { email, password: PASSWORD })).statusCode).toBe(303);
  return c;
}

/** A publisher (two offers: it writes; the buyer writes) with an owner and a member, and a buyer. */
async function setup() {
  const { ws, p } = await kit.setup([{}, { content_by: 'buyer', title: 'Buyer writes' }]);
  const owner = await personIn(h, { publisherId: p.publisherId }, 'owner');
  const member = await personIn(h, { publisherId: p.publisherId }, 'member');
  return { ws, p, owner, member, page: `/app/p/${p.publisherId}/settings/notifications` };
}
type Setup = Awaited<ReturnType<typeof setup>>;

async function placeWithContent(s: Setup) {
  const res = await kit.place(s.ws.spendKey, { offer_ids: [s.p.offers[0]!.id], target_url: TARGET, anchor_text: 'our product', content_title: 'Ours', content: articleFor(TARGET) });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().data[0].id as number;
}

const mailsTo = (mails: Awaited<ReturnType<typeof deliverAll>>, address: string) => mails.filter((m) => m.rcptTo.includes(address));
/** The modes a kind's radio buttons have checked on a page (one, if the page is right). */
const checked = (body: string, kind: string) => [...body.matchAll(new RegExp(`name="${kind}" value="([a-z]+)" checked`, 'g'))].map((m) => m[1]);

describe('Settings → Notifications — happy', () => {
  it('lists the kinds the person receives here, with the role\'s default; saved, they hold', async () => {
    const s = await setup();
    const c = await signedIn(s.member.email);
    const page = await c.get(s.page);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('<h1>Notifications</h1>');
    expect(page.body).toContain('aria-current="page">Notifications</a>');
    for (const label of ['A new order to accept', 'Content in', 'A link lost', 'A deadline in 24 hours', 'A key expiring within 7 days']) expect(page.body).toContain(`<legend>${label}</legend>`);
    // An owner's matters and the buyer's side are not offered to a publisher's member.
    for (const label of ['A webhook endpoint disabled', 'A draft to review', 'An approval request waiting']) expect(page.body).not.toContain(`<legend>${label}</legend>`);
    expect(checked(page.body, 'order_to_accept')).toEqual(['now']);
    expect(page.body).toContain('>Save notifications</button>');
    expect(page.body).toContain('07:00 UTC');

    const saved = await c.post(s.page, { order_to_accept: 'digest', link_lost: 'off', content_in: 'now' });
    expect(saved.statusCode).toBe(200);
    expect(saved.body).toContain('Notifications saved.');
    expect(checked(saved.body, 'order_to_accept')).toEqual(['digest']);
    expect(checked(saved.body, 'link_lost')).toEqual(['off']);
    const stored = await h.database.pool.query('SELECT notifications FROM memberships WHERE user_id = $1', [s.member.id]);
    // Only what differs from the role's default is kept: the rest follows the role.
    expect(stored.rows[0].notifications).toEqual({ order_to_accept: 'digest', link_lost: 'off' });
  });

  it('a viewer: every kind Off until they choose; an owner of a workspace sees approval requests', async () => {
    const { ws } = await kit.setup();
    const viewer = await personIn(h, { workspaceId: ws.workspaceId }, 'viewer');
    const owner = await personIn(h, { workspaceId: ws.workspaceId }, 'owner');
    const viewerPage = (await (await signedIn(viewer.email)).get(`/app/w/${ws.workspaceId}/settings/notifications`)).body;
    expect(checked(viewerPage, 'draft_ready')).toEqual(['off']);
    expect(viewerPage).not.toContain('An approval request waiting');
    const ownerPage = (await (await signedIn(owner.email)).get(`/app/w/${ws.workspaceId}/settings/notifications`)).body;
    expect(checked(ownerPage, 'approval_request')).toEqual(['now']);
    expect(ownerPage).toContain("<legend>A key&#39;s budget used up</legend>");
  });
});

describe('Settings → Notifications — validation', () => {
  it('a mode that is none of the three, a kind the role does not receive, a field sent twice: 422 naming it, nothing saved', async () => {
    const s = await setup();
    const c = await signedIn(s.member.email);
    const bad = await c.post(s.page, { order_to_accept: 'sometimes' });
    expect(bad.statusCode).toBe(422);
    expect(bad.body).toContain('Nothing was changed');
    expect(bad.body).toContain('A new order to accept must be one of now, digest, off');
    const notMine = await c.post(s.page, { webhook_disabled: 'off', order_to_accept: 'off' });
    expect(notMine.statusCode).toBe(422);
    const twice = await c.post(s.page, [['order_to_accept', 'off'], ['order_to_accept', 'now']]);
    expect(twice.statusCode).toBe(422);
    expect((await notificationSettings(h.database.pool, s.member.id, { kind: 'publisher', id: s.p.publisherId })).find((k) => k.kind === 'order_to_accept')!.mode).toBe('now');
    // Another publisher's page: not found, as everywhere.
    expect((await c.get(`/app/p/${s.p.publisherId + 1000}/settings/notifications`)).statusCode).toBe(404);
  });
});

describe('One-click unsubscribe — happy', () => {
  it('List-Unsubscribe and List-Unsubscribe-Post are sent; opening the link changes nothing; a POST without a session stops that kind, and only it', async () => {
    const s = await setup();
    await placeWithContent(s);
    const [mail] = mailsTo(await deliverAll(h, smtp), s.member.email);
    const header = headerLine(mail!, 'List-Unsubscribe')!;
    expect(header).toMatch(/^<http:\/\/127\.0\.0\.1:3000\/app\/unsubscribe\?token=[\w.-]+>$/);
    expect(headerLine(mail!, 'List-Unsubscribe-Post')).toBe('List-Unsubscribe=One-Click');
    const link = header.slice(1, -1);
    // The same link is in the mail's small print.
    expect(mail!.parsed.text).toContain(`Unsubscribe from "A new order to accept": ${link}`);
    const path = link.slice(BASE.length);

    // A mail scanner opens it: a page with a button, nothing changed.
    const opened = await h.app.inject({ method: 'GET', url: path });
    expect(opened.statusCode).toBe(200);
    expect(opened.headers['cache-control']).toBe('no-store');
    expect(opened.body).toContain('>Unsubscribe</button>');
    expect(opened.body).toContain('&quot;A new order to accept&quot;');
    expect((await notificationSettings(h.database.pool, s.member.id, { kind: 'publisher', id: s.p.publisherId })).find((k) => k.kind === 'order_to_accept')!.mode).toBe('now');

    // The mail client's one-click POST (RFC 8058): no cookie, no form token.
    const posted = await h.app.inject({ method: 'POST', url: path, headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: 'List-Unsubscribe=One-Click' });
    expect(posted.statusCode).toBe(200);
    expect(posted.body).toContain('<h1>Unsubscribed</h1>');
    // Used again: the same answer.
    expect((await h.app.inject({ method: 'POST', url: path, headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: 'List-Unsubscribe=One-Click' })).statusCode).toBe(200);

    // The next order: the member is not told, the owner is.
    await placeWithContent(s);
    let mails = await deliverAll(h, smtp);
    expect(mailsTo(mails, s.member.email)).toEqual([]);
    expect(mailsTo(mails, s.owner.email)).toHaveLength(1);
    // Another kind still reaches the member: the buyer's article came in.
    const waiting = await kit.place(s.ws.spendKey, { offer_ids: [s.p.offers[1]!.id], target_url: TARGET, anchor_text: 'our product' });
    const id = waiting.json().data[0].id as number;
    expect((await kit.buyer(s.ws.spendKey, `${id}/content`, { title: 'Ours', body: articleFor(TARGET) })).statusCode).toBe(200);
    mails = await deliverAll(h, smtp);
    expect(mailsTo(mails, s.member.email).map((m) => m.parsed.subject)).toEqual([expect.stringMatching(new RegExp(`^Content in for order #${id}: `))]);

    // The member's page shows it off.
    const c = await signedIn(s.member.email);
    expect(checked((await c.get(s.page)).body, 'order_to_accept')).toEqual(['off']);
  });

  it('the POST as multipart/form-data, as RFC 8058 prefers, works too', async () => {
    const s = await setup();
    await placeWithContent(s);
    const [mail] = mailsTo(await deliverAll(h, smtp), s.owner.email);
    const path = headerLine(mail!, 'List-Unsubscribe')!.slice(1 + BASE.length, -1);
    const boundary = 'x-boundary-1';
    const body = `--${boundary}\r\nContent-Disposition: form-data; name="List-Unsubscribe"\r\n\r\nOne-Click\r\n--${boundary}--\r\n`;
    const posted = await h.app.inject({ method: 'POST', url: path, headers: { 'content-type': `multipart/form-data; boundary=${boundary}` }, payload: body });
    expect(posted.statusCode).toBe(200);
    expect((await notificationSettings(h.database.pool, s.owner.id, { kind: 'publisher', id: s.p.publisherId })).find((k) => k.kind === 'order_to_accept')!.mode).toBe('off');
  });
});

describe('One-click unsubscribe — security', () => {
  it('a link this service did not sign, cut short, or for another person: 404, nothing changed', async () => {
    const s = await setup();
    await placeWithContent(s);
    const [mail] = mailsTo(await deliverAll(h, smtp), s.member.email);
    const token = new URL(headerLine(mail!, 'List-Unsubscribe')!.slice(1, -1)).searchParams.get('token')!;
    const [user, scope, kind, sig] = token.split('.');
    const forged = [
      `${s.owner.id}.${scope}.${kind}.${sig}`, // another person, the same signature
      `${user}.${scope}.link_lost.${sig}`, // another kind
      token.slice(0, -2), // cut short
      `${user}.${scope}.${kind}.${'A'.repeat(43)}`,
      'nonsense',
      '',
    ];
    for (const t of forged) {
      for (const method of ['GET', 'POST'] as const) {
        const res = await h.app.inject({ method, url: `/app/unsubscribe?token=${encodeURIComponent(t)}`, headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: method === 'POST' ? 'List-Unsubscribe=One-Click' : undefined });
        expect(res.statusCode, `${method} ${t}`).toBe(404);
        expect(res.body).toContain('This unsubscribe link is not valid');
      }
    }
    for (const person of [s.owner, s.member]) {
      const settings = await notificationSettings(h.database.pool, person.id, { kind: 'publisher', id: s.p.publisherId });
      expect(settings.every((k) => k.mode === 'now')).toBe(true);
    }
  });

  it('the request log never holds the token', () => {
    const all = h.logs.join('');
    expect(all).toContain('/app/unsubscribe?token=[REDACTED]');
    expect(all).not.toMatch(/unsubscribe\?token=(?!\[REDACTED\])/);
  });
});

describe('The daily digest — happy', () => {
  it('gathers the kinds set to it into one mail at the digest hour, leaves out what moved on, once a day; its link turns them off', async () => {
    const s = await setup();
    const c = await signedIn(s.member.email);
    expect((await c.post(s.page, { order_to_accept: 'digest' })).statusCode).toBe(200);
    const ids = [await placeWithContent(s), await placeWithContent(s), await placeWithContent(s)];
    const mails = await deliverAll(h, smtp);
    expect(mailsTo(mails, s.member.email)).toEqual([]);
    expect(mailsTo(mails, s.owner.email)).toHaveLength(3);
    // One is accepted before the digest: it needs nobody any more.
    expect((await kit.pub(s.p.publisherKey, `${ids[0]}/accept`)).statusCode).toBe(200);

    // Before the hour (07:00 UTC) nothing; after it, one digest.
    let swept = await sweepAndSend(h, smtp);
    expect(mailsTo(swept.mails, s.member.email)).toEqual([]);
    const next7 = Math.floor(clock.now() / DAY) * DAY + DAY + 7 * 3_600_000;
    clock.set(next7 - 60_000);
    swept = await sweepAndSend(h, smtp);
    expect(mailsTo(swept.mails, s.member.email)).toEqual([]);
    clock.set(next7 + 30_000);
    swept = await sweepAndSend(h, smtp);
    const [digest] = mailsTo(swept.mails, s.member.email);
    expect(digest?.parsed.subject).toBe('Your daily digest: 2 things that needed you');
    for (const id of ids.slice(1)) {
      expect(digest!.parsed.text).toContain(`Order #${id} on Outlet`);
      expect(digest!.parsed.html).toContain(`href="${BASE}/app/p/${s.p.publisherId}/orders/${id}"`);
    }
    expect(digest!.parsed.text).not.toContain(`Order #${ids[0]} on`);
    expect(headerLine(digest!, 'List-Unsubscribe-Post')).toBe('List-Unsubscribe=One-Click');
    // Once a day.
    swept = await sweepAndSend(h, smtp);
    expect(mailsTo(swept.mails, s.member.email)).toEqual([]);

    // The digest's own link turns off every kind set to it.
    const path = headerLine(digest!, 'List-Unsubscribe')!.slice(1 + BASE.length, -1);
    expect((await h.app.inject({ method: 'GET', url: path })).body).toContain('every notification you set to Daily digest is turned off');
    expect((await h.app.inject({ method: 'POST', url: path, headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: 'List-Unsubscribe=One-Click' })).statusCode).toBe(200);
    expect((await notificationSettings(h.database.pool, s.member.id, { kind: 'publisher', id: s.p.publisherId })).find((k) => k.kind === 'order_to_accept')!.mode).toBe('off');
  });
});
