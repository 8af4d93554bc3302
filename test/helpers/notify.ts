import type { MemberRole } from '../../src/common/enums.js';
import { consoleBaseUrl } from '../../src/config.js';
import { sequenceEvents } from '../../src/domain/events/sequencer.js';
import { sweepNotifications } from '../../src/domain/notifications/sweep.js';
import { addMember } from '../../src/domain/users/memberships.js';
import { createUser } from '../../src/domain/users/user-service.js';
import type { Harness } from './app.js';
import type { ReceivedMail, TestSmtp } from './smtp.js';

// Notifications (docs/mail.md) driven step by step, as the event tests drive the sequencer: the
// change commits, the sequencer positions its events, the notifier turns them into mails, the
// mail worker sends them to the test SMTP server.

export const PASSWORD = 'correct horse battery';
let people = 0;

/** A person with a confirmed address (made as the CLI makes them) and a role in a workspace or publisher account. */
export async function personIn(h: Harness, target: { workspaceId: number } | { publisherId: number }, role: MemberRole, opts: { confirmed?: boolean; name?: string } = {}) {
  const email = `person${++people}-${role}@example.com`;
  const user = await createUser(h.database.pool, { email, name: opts.name ?? `Pat ${role} ${people}`, password: PASSWORD });
  if (opts.confirmed === false) await h.database.pool.query('UPDATE users SET email_verified_at = NULL WHERE id = $1', [user.id]);
  await addMember(h.database.pool, target, user.id, role);
  return { ...user, email };
}

/** The events written so far positioned, turned into notifications, and the due mails sent; answers the mails each address received meanwhile. */
export async function deliverAll(h: Harness, smtp: TestSmtp) {
  const before = smtp.received.length;
  await sequenceEvents(h.database.pool, h.clock.now());
  await h.app.notifier.drain();
  await h.app.mailWorker.drain();
  return smtp.received.slice(before);
}

/** The deadline sweep's part for notifications (reminders, key expiry, digests), at the harness's time, then the mails sent. */
export async function sweepAndSend(h: Harness, smtp: TestSmtp) {
  const before = smtp.received.length;
  const counts = await sweepNotifications(h.database.pool, { baseUrl: consoleBaseUrl(h.config) }, h.clock.now(), h.config.NOTIFICATION_DIGEST_HOUR);
  await h.app.mailWorker.drain();
  return { counts, mails: smtp.received.slice(before) };
}

/** A raw header line of a received mail (mailparser folds List-* headers into one object; the line is what was sent). */
export function headerLine(mail: ReceivedMail, name: string): string | undefined {
  const line = mail.parsed.headerLines.find((l) => l.key === name.toLowerCase())?.line;
  return line?.replace(/\r?\n[ \t]+/g, ' ').slice(name.length + 1).trim();
}
