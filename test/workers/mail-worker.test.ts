import { afterAll, describe, expect, it } from 'vitest';
import { signUp } from '../../src/domain/accounts/sign-up.js';
import { composeMail } from '../../src/domain/mail/compose.js';
import { sendDueMail } from '../../src/domain/mail/deliver.js';
import { enqueueMail, type MailKind } from '../../src/domain/mail/outbox.js';
import type { MailTransport } from '../../src/outbound/smtp.js';
import { setupApp } from '../helpers/app.js';
import { ManualClock } from '../helpers/clock.js';
import { outboxRows } from '../helpers/mail.js';
import { linkIn, startSmtp } from '../helpers/smtp.js';

// The mail outbox and its worker (docs/mail.md) against a real SMTP server in the test process:
// one mail per kind, subject and address whatever the number of processes draining it; retried
// with backoff while the server is away and sent once it is back; given up after
// MAIL_GIVE_UP_HOURS, at once on a permanent refusal; a claim that lapses when its process dies;
// without SMTP_URL, one log line per mail. Retries are driven with the test clock.

const smtp = await startSmtp({ reject: ['no-such-mailbox@example.com'] });
afterAll(() => smtp.stop());
const clock = new ManualClock(Date.parse('2027-01-05T09:00:00Z'));
const mailConfig = { SMTP_URL: smtp.url, MAIL_TIMEOUT_MS: 2_000, MAIL_RETRY_BASE_MS: 30_000, MAIL_GIVE_UP_HOURS: 24 };
const a = await setupApp(mailConfig, { clock });
const b = await setupApp(mailConfig, { clock, database: a.database });
const site = { baseUrl: 'https://market.example' };

let subject = 0;
/** Queues a mail with a link, as the domain does, outside any transaction. */
async function queue(to: string, kind: MailKind = 'invitation', subjectId = ++subject) {
  const mail = composeMail({ subject: `Mail ${subjectId}`, greeting: 'Hello,', paragraphs: ['A test.'], action: { label: 'Open', url: `${site.baseUrl}/app/invitation?token=tok${subjectId}secret` } });
  return enqueueMail(a.database.pool, site, { kind, subjectId, userId: null, to, ...mail }, clock.now());
}

const rowOf = async (to: string) => (await outboxRows(a.database.pool, to))[0]!;

describe('Mail outbox: once per mail, across processes — happy', () => {
  it('the same mail queued twice is one row; two app instances draining at once send each mail once', async () => {
    expect(await queue('twice@example.com', 'invitation', 900)).toBe(true);
    expect(await queue('TWICE@example.com', 'invitation', 900)).toBe(false);
    expect(await outboxRows(a.database.pool, 'twice@example.com')).toHaveLength(1);
    for (let i = 0; i < 39; i++) await queue(`many${i}@example.com`);
    const before = smtp.received.length;
    await Promise.all([a.app.mailWorker.drain(), b.app.mailWorker.drain(), a.app.mailWorker.drain(), b.app.mailWorker.drain()]);
    const got = smtp.received.slice(before);
    expect(got).toHaveLength(40);
    const ids = got.map((m) => m.parsed.messageId);
    expect(new Set(ids).size).toBe(40);
    // Each mail has a text and an HTML part, and the Message-ID the outbox gave it.
    for (const m of got) {
      expect(m.parsed.text).toContain('Hello,');
      expect(m.parsed.html).toContain('<!doctype html>');
      expect(m.parsed.messageId).toMatch(/^<[0-9a-f-]{36}@market\.example>$/);
    }
    const stored = await a.database.pool.query(`SELECT message_id FROM mail_outbox WHERE status = 'sent'`);
    expect(new Set(stored.rows.map((r) => r.message_id))).toEqual(new Set(ids));
    // Sent: its parts, which may hold a token, are gone from the database.
    expect((await rowOf('twice@example.com')).body_text).toBeNull();
  });

  it('two instances with their workers running (a short interval): each mail arrives once, within moments', async () => {
    const live = new ManualClock(clock.now());
    const x = await setupApp({ ...mailConfig, MAIL_POLL_INTERVAL_MS: 20 }, { clock: live });
    const y = await setupApp({ ...mailConfig, MAIL_POLL_INTERVAL_MS: 20 }, { clock: live, database: x.database });
    const before = smtp.received.length;
    for (let i = 0; i < 20; i++) {
      const mail = composeMail({ subject: `Live ${i}`, greeting: 'Hello,', paragraphs: ['Live.'] });
      await enqueueMail(x.database.pool, site, { kind: 'invitation', subjectId: 5000 + i, userId: null, to: `live${i}@example.com`, ...mail }, live.now());
    }
    await smtp.waitFor(before + 20);
    await new Promise((r) => setTimeout(r, 300)); // a second sending would have come by now
    const got = smtp.received.slice(before);
    expect(got).toHaveLength(20);
    expect(new Set(got.map((m) => m.parsed.messageId)).size).toBe(20);
  });
});

describe('Mail outbox: the SMTP server away — happy', () => {
  it('stopped: the attempt fails and is retried with backoff; back: the mail arrives, once', async () => {
    await smtp.stop();
    await queue('patient@example.com');
    expect(await a.app.mailWorker.drain()).toBe(1);
    let row = await rowOf('patient@example.com');
    expect(row).toMatchObject({ status: 'pending', attempts: 1 });
    expect(row.last_error).toMatch(/ECONNREFUSED|connect/i);
    expect(a.logs.join('')).toContain('"msg":"mail not sent; it will be tried again"');
    // Still away a little later: a second attempt, the wait doubled.
    clock.advance(37_000);
    expect(await b.app.mailWorker.drain()).toBe(1);
    row = await rowOf('patient@example.com');
    expect(row.attempts).toBe(2);

    await smtp.restart();
    const before = smtp.received.length;
    // Not due yet: nothing is tried before its time.
    expect(await a.app.mailWorker.drain()).toBe(0);
    clock.advance(73_000);
    expect(await a.app.mailWorker.drain()).toBe(1);
    expect(smtp.received.slice(before).map((m) => m.rcptTo[0])).toEqual(['patient@example.com']);
    row = await rowOf('patient@example.com');
    expect(row).toMatchObject({ status: 'sent', attempts: 3, last_error: null, body_text: null, body_html: null });
    clock.advance(3_600_000);
    expect(await a.app.mailWorker.drain()).toBe(0);
  });

  it('away for longer than MAIL_GIVE_UP_HOURS: given up (its parts emptied); a 5xx refusal of the recipient: at once', async () => {
    await smtp.stop();
    await queue('given-up@example.com');
    const first = clock.now();
    for (let i = 0; i < 60 && (await rowOf('given-up@example.com')).status === 'pending'; i++) {
      await a.app.mailWorker.drain();
      clock.advance(75 * 60_000); // past the longest wait between attempts (an hour, plus a fifth)
    }
    const row = await rowOf('given-up@example.com');
    expect(row).toMatchObject({ status: 'failed', body_text: null, body_html: null });
    expect(clock.now() - first).toBeGreaterThanOrEqual(24 * 3_600_000);
    // The waits doubled up to the hour: about 30 attempts in a day, not one a poll.
    expect(row.attempts).toBeGreaterThan(20);
    expect(row.attempts).toBeLessThan(40);
    await smtp.restart();

    await queue('no-such-mailbox@example.com');
    expect(await a.app.mailWorker.drain()).toBe(1);
    const refused = await rowOf('no-such-mailbox@example.com');
    expect(refused).toMatchObject({ status: 'failed', attempts: 1, body_text: null });
    expect(refused.last_error).toMatch(/550/);
    expect(a.logs.join('')).toContain('"msg":"mail given up"');
  });

  it('a process that dies mid-send: its claim lapses after MAIL_TIMEOUT_MS (plus a margin) and another sends the mail', async () => {
    await queue('orphan@example.com');
    const hangs: MailTransport = { send: () => new Promise(() => {}), close: () => {} };
    void sendDueMail(a.database.pool, hangs, { timeoutMs: 2_000, retryBaseMs: 30_000, giveUpMs: 86_400_000 }, () => clock.now());
    for (let i = 0; i < 100 && (await rowOf('orphan@example.com')).attempts === 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect((await rowOf('orphan@example.com')).attempts).toBe(1);
    const before = smtp.received.length;
    expect(await b.app.mailWorker.drain()).toBe(0); // claimed: not another's to send
    clock.advance(2_000 + 5_001);
    expect(await b.app.mailWorker.drain()).toBe(1);
    expect(smtp.received.slice(before).map((m) => m.rcptTo[0])).toEqual(['orphan@example.com']);
    expect(await rowOf('orphan@example.com')).toMatchObject({ status: 'sent', attempts: 2 });
  });

  it('nothing it logs holds a link, a token or the SMTP password', () => {
    const all = [...a.logs, ...b.logs].join('');
    expect(all).not.toContain(smtp.password);
    expect(all).not.toMatch(/tok\d+secret/);
    expect(all).not.toContain('https://market.example/app/');
  });
});

describe('Without SMTP_URL — happy', () => {
  it('each mail is one log line with its recipient, subject and link, and is marked logged', async () => {
    const h = await setupApp({ SIGNUP: 'open', PUBLIC_BASE_URL: 'http://127.0.0.1:3000' });
    expect(h.logs.join('')).toContain('SMTP_URL is not set: mails are written to this log instead of sent');
    await signUp(h.database.pool, { name: 'Nia New', email: 'nia@example.com', password: 'correct horse battery' }, { baseUrl: 'http://127.0.0.1:3000' }, h.clock);
    const before = h.logs.length;
    expect(await h.app.mailWorker.drain()).toBe(1);
    const lines = h.logs.slice(before).filter((l) => l.includes('nia@example.com'));
    expect(lines).toHaveLength(1);
    const msg = JSON.parse(lines[0]!).msg as string;
    expect(msg).toMatch(/^mail to nia@example\.com: "Confirm your email address" http:\/\/127\.0\.0\.1:3000\/app\/verify-email\?token=[A-Za-z0-9_-]{43} \(not sent: SMTP_URL is not set\)$/);
    const link = linkIn(msg, 'verify-email');
    expect((await h.app.inject({ url: new URL(link).pathname + new URL(link).search })).statusCode).toBe(200);
    expect(await outboxRows(h.database.pool, 'nia@example.com')).toMatchObject([{ kind: 'verify_email', status: 'logged', attempts: 1, body_text: null }]);
  });
});
