import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { migrateOnly } from '../../src/db/migrate.js';
import { migrationsFolder } from '../../src/paths.js';
import { createTestDatabase } from '../helpers/db.js';

// Migration 0033 adds users.email_verified_at: everyone who had an account before it counts as
// confirmed, so nobody already using the service meets "Check your email" (docs/mail.md).

const database = await createTestDatabase();
afterAll(() => database.drop());
const q = (text: string, values: unknown[] = []) => database.pool.query(text, values);

describe('Migration 0033 (mail) — happy', () => {
  it('marks the users that existed before it as having confirmed their address', async () => {
    // The database as it was before 0033, with a user in it: the migrations after it undone first
    // (0038 payouts, 0037 funds, 0036 notifications, 0035 the key's creator; 0034 changes only OAuth rows and may run twice).
    // 0038 (payouts): its tables, and the publishers' in_payout accounts (0037 makes the account kinds'
    // type anew without the value, which 0038 adds again). The transaction kinds it adds stay, added IF NOT EXISTS.
    await q(`DROP TABLE payouts, payout_destinations`);
    await q(`DROP TYPE payout_status`);
    await q(`DELETE FROM ledger_accounts WHERE kind = 'in_payout'`);
    // 0037 (funds): its tables and the staff column. The enum values it adds stay (a value cannot be
    // dropped): 0037 adds them again IF NOT EXISTS and makes the account kinds' type anew.
    await q(`DROP TABLE ledger_adjustments, top_up_requests`);
    await q(`DROP TYPE top_up_status`);
    await q(`ALTER TABLE users DROP COLUMN is_staff`);
    await q(`DROP TABLE event_cursors, notification_reminders, notification_digest_items`);
    await q(`ALTER TABLE memberships DROP COLUMN notifications`);
    await q(`DROP INDEX api_keys_expires_idx`);
    await q(`ALTER TABLE api_keys DROP COLUMN created_by_user_id`);
    await q(`DROP TABLE user_tokens, mail_outbox`);
    await q(`DROP TYPE user_token_purpose, mail_status`);
    await q(`ALTER TABLE users DROP COLUMN email_verified_at`);
    const since0033 = (JSON.parse(readFileSync(join(migrationsFolder, 'meta', '_journal.json'), 'utf8')) as { entries: { idx: number }[] }).entries.filter((e) => e.idx >= 33).length;
    await q(`DELETE FROM drizzle.__drizzle_migrations WHERE id IN (SELECT id FROM drizzle.__drizzle_migrations ORDER BY created_at DESC LIMIT ${since0033})`);
    await q(`INSERT INTO users (email, name, password_hash) VALUES ('before@example.com', 'Bea Before', 'x')`);
    await migrateOnly(database.pool);
    const { rows } = await q(`SELECT email_verified_at FROM users WHERE email = 'before@example.com'`);
    expect(rows[0].email_verified_at).toBeInstanceOf(Date);
    // A user written after it starts unconfirmed unless told otherwise.
    await q(`INSERT INTO users (email, name, password_hash) VALUES ('after@example.com', 'Al After', 'x')`);
    expect((await q(`SELECT email_verified_at FROM users WHERE email = 'after@example.com'`)).rows[0].email_verified_at).toBeNull();
  });
});
