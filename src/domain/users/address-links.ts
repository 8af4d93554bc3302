import { z } from 'zod';
import type { UserTokenPurpose } from '../../common/enums.js';
import { type Db, withTransaction } from '../../db/handle.js';
import { type Clock, systemClock } from '../clock.js';
import { DomainError, forbidden, notFound } from '../errors.js';
import { enqueueMail, type MailSite } from '../mail/outbox.js';
import { hashPassword } from './passwords.js';
import { hashToken, newToken, tokenShaped } from './tokens.js';
import { emailField, parseUserInput, passwordField } from './user-input.js';
import { ADDRESS_LINK_HOURS, addressConfirmationMail, consoleLink, passwordResetMail, RESET_LINK_MINUTES } from './user-mails.js';
import { findUserByEmail } from './user-service.js';

// The links mailed to a person's address (docs/mail.md): one confirms the address, the other sets
// a new password. Each is single-use, expires, is stored as its SHA-256 only (user_tokens), and
// proves only the address it was mailed to: a link whose account has another address since is no
// link. Its mail is queued in the transaction that writes the token.

const LIFETIME_MS: Record<UserTokenPurpose, number> = {
  verify_email: ADDRESS_LINK_HOURS * 3_600_000,
  reset_password: RESET_LINK_MINUTES * 60_000,
};
const PATH: Record<UserTokenPurpose, string> = { verify_email: 'verify-email', reset_password: 'reset-password' };

/** A new link of `purpose` for the user, and its mail, in the caller's transaction. */
async function mailLink(tx: Db, purpose: UserTokenPurpose, user: { id: number; email: string }, site: MailSite, now: number): Promise<void> {
  const token = newToken();
  const { rows } = await tx.query<{ id: number }>({
    name: 'user_tokens_insert',
    text: `INSERT INTO user_tokens (user_id, purpose, token_hash, email, created_at, expires_at)
           VALUES ($1, $2::user_token_purpose, $3, $4, $5, $6) RETURNING id`,
    values: [user.id, purpose, hashToken(token), user.email, new Date(now), new Date(now + LIFETIME_MS[purpose])],
  });
  const link = consoleLink(site, PATH[purpose], token);
  const mail = purpose === 'verify_email' ? addressConfirmationMail(user.email, link) : passwordResetMail(user.email, link);
  await enqueueMail(tx, site, { kind: purpose, subjectId: rows[0]!.id, userId: user.id, to: user.email, ...mail }, now);
}

/** Sign-up's confirmation mail, in the transaction that makes the user. */
export async function mailAddressConfirmation(tx: Db, user: { id: number; email: string }, site: MailSite, clock: Clock = systemClock): Promise<void> {
  await mailLink(tx, 'verify_email', user, site, clock.now());
}

/** "Send again": a new confirmation link (the earlier ones keep working until they expire), unless the address is confirmed. */
export async function resendAddressConfirmation(db: Db, userId: number, site: MailSite, clock: Clock = systemClock): Promise<'sent' | 'confirmed'> {
  return withTransaction(db, async (tx) => {
    const { rows } = await tx.query<{ id: number; email: string; email_verified_at: Date | null }>(
      'SELECT id, email, email_verified_at FROM users WHERE id = $1 FOR UPDATE',
      [userId],
    );
    const user = rows[0];
    if (!user) throw notFound('User');
    if (user.email_verified_at) return 'confirmed';
    await mailLink(tx, 'verify_email', user, site, clock.now());
    return 'sent';
  });
}

export interface AddressLink {
  userId: number;
  email: string;
  state: 'pending' | 'used' | 'expired';
}

interface LinkRow {
  id: number;
  user_id: number;
  email: string;
  expires_at: Date;
  used_at: Date | null;
  user_email: string;
}

const LINK_ROW = `SELECT t.id, t.user_id, t.email, t.expires_at, t.used_at, u.email AS user_email
                    FROM user_tokens t JOIN users u ON u.id = t.user_id
                   WHERE t.token_hash = $1 AND t.purpose = $2::user_token_purpose`;

/** What a mailed link is, for its page (nothing is done on opening it); null for a token no link of `purpose` has. */
export async function describeLink(db: Db, purpose: UserTokenPurpose, token: unknown, clock: Clock = systemClock): Promise<AddressLink | null> {
  if (!tokenShaped(token)) return null;
  const { rows } = await db.query<LinkRow>(LINK_ROW, [hashToken(token), purpose]);
  const row = rows[0];
  if (!row || row.email.toLowerCase() !== row.user_email.toLowerCase()) return null;
  return { userId: row.user_id, email: row.email, state: row.used_at ? 'used' : row.expires_at.getTime() <= clock.now() ? 'expired' : 'pending' };
}

export const linkUsed = () => new DomainError('conflict', 'This link has already been used.', { reason: 'link_used' });
export const linkExpired = (purpose: UserTokenPurpose) =>
  new DomainError(
    'conflict',
    purpose === 'verify_email'
      ? `This link has expired (it works for ${ADDRESS_LINK_HOURS} hours). Sign in, then choose "Send again" for a new one.`
      : `This link has expired (it works for ${RESET_LINK_MINUTES} minutes). Ask for a new one on the "Forgot password?" page.`,
    { reason: 'link_expired' },
  );

/** The link's row, locked, if it may still be used; else the refusal its page shows. */
async function lockLink(tx: Db, purpose: UserTokenPurpose, token: unknown, now: number): Promise<LinkRow> {
  if (!tokenShaped(token)) throw notFound('Link');
  const { rows } = await tx.query<LinkRow>(`${LINK_ROW} FOR UPDATE OF t`, [hashToken(token), purpose]);
  const row = rows[0];
  if (!row || row.email.toLowerCase() !== row.user_email.toLowerCase()) throw notFound('Link');
  if (row.used_at) throw linkUsed();
  if (row.expires_at.getTime() <= now) throw linkExpired(purpose);
  return row;
}

/**
 * Confirms the address, for the person signed in as its account (`userId`) only: a link opened
 * by anyone else confirms nothing. Someone who gets a confirmation for an account they never made
 * (another signed up with their address first) cannot confirm it for them with a click, nor can a
 * mail scanner that opens every link.
 */
export async function confirmAddress(db: Db, token: unknown, userId: number, clock: Clock = systemClock): Promise<void> {
  await withTransaction(db, async (tx) => {
    const now = new Date(clock.now());
    const link = await lockLink(tx, 'verify_email', token, now.getTime());
    if (link.user_id !== userId) throw forbidden('This link confirms the address of another account. Sign out, then open it again.');
    await tx.query('UPDATE users SET email_verified_at = COALESCE(email_verified_at, $2) WHERE id = $1', [userId, now]);
    await tx.query(`UPDATE user_tokens SET used_at = $2 WHERE user_id = $1 AND purpose = 'verify_email' AND used_at IS NULL`, [userId, now]);
  });
}

/**
 * "Forgot password?": a reset link mailed to the address when it has an account, nothing at all
 * when it has none; the caller answers the same either way. A malformed address is refused (that
 * tells nothing about accounts).
 */
export async function requestPasswordReset(db: Db, email: string, site: MailSite, clock: Clock = systemClock): Promise<void> {
  const valid = parseUserInput(z.object({ email: emailField }), { email }).email;
  const user = await findUserByEmail(db, valid);
  if (!user) return;
  await withTransaction(db, (tx) => mailLink(tx, 'reset_password', user, site, clock.now()));
}

/**
 * A new password through a reset link. The link proves the address, so it is confirmed too; every
 * session of the person ends (whoever was signed in, a squatter who signed up with the address
 * included) and every other link mailed to them stops working, all in one transaction.
 */
export async function resetPassword(db: Db, token: unknown, password: string, clock: Clock = systemClock): Promise<{ userId: number; sessionsEnded: number }> {
  // A token no link has costs no hashing; the password is checked and hashed before the transaction.
  const found = await describeLink(db, 'reset_password', token, clock);
  if (!found) throw notFound('Link');
  if (found.state === 'used') throw linkUsed();
  if (found.state === 'expired') throw linkExpired('reset_password');
  const valid = parseUserInput(z.object({ password: passwordField }), { password }).password;
  const passwordHash = await hashPassword(valid);
  return withTransaction(db, async (tx) => {
    const now = new Date(clock.now());
    const link = await lockLink(tx, 'reset_password', token, now.getTime());
    await tx.query('UPDATE users SET password_hash = $2, email_verified_at = COALESCE(email_verified_at, $3) WHERE id = $1', [link.user_id, passwordHash, now]);
    await tx.query('UPDATE user_tokens SET used_at = $2 WHERE user_id = $1 AND used_at IS NULL', [link.user_id, now]);
    const ended = await tx.query('DELETE FROM sessions WHERE user_id = $1', [link.user_id]);
    return { userId: link.user_id, sessionsEnded: ended.rowCount ?? 0 };
  });
}

/** Deletes links past their end (used or not), a batch at a time: they can no longer be used. */
export async function purgeOldLinks(db: Db, now: number): Promise<number> {
  const { rowCount } = await db.query({
    name: 'user_tokens_purge',
    text: 'DELETE FROM user_tokens WHERE id IN (SELECT id FROM user_tokens WHERE expires_at < $1 LIMIT 1000)',
    values: [new Date(now)],
  });
  return rowCount ?? 0;
}
