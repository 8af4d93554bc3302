import type { Db } from '../../db/handle.js';
import type { MailSite } from '../mail/outbox.js';
import { sendDigests } from './digest.js';
import { remindDeadlines, remindExpiringKeys } from './reminders.js';

export interface NotificationSweep {
  deadline_reminders: number;
  key_reminders: number;
  digests: number;
}

/**
 * The notifications that come from the clock rather than an event, for the deadline sweep to run:
 * deadlines 24 hours away, keys expiring within 7 days, and the daily digests once their hour has
 * come. Every process may run it (docs/mail.md says why each is queued once).
 */
export async function sweepNotifications(pool: Db, site: MailSite, now: number, digestHourUtc: number): Promise<NotificationSweep> {
  return {
    deadline_reminders: await remindDeadlines(pool, site, now),
    key_reminders: await remindExpiringKeys(pool, site, now),
    digests: await sendDigests(pool, site, now, digestHourUtc),
  };
}
