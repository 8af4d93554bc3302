import { z } from 'zod';
import { constraintOf, pgErrorCode } from '../../db/errors.js';
import { type Db, withTransaction } from '../../db/handle.js';
import { systemClock, type Clock } from '../clock.js';
import { DomainError, notFound } from '../errors.js';
import { hashPassword, verifyAgainstDummy, verifyPassword } from './passwords.js';
import { emailField, nameField, parseUserInput, passwordField } from './user-input.js';
import { unstorableTextPath } from '../text-input.js';

export interface User {
  id: number;
  email: string;
  name: string;
  createdAt: Date;
  lastSignInAt: Date | null;
  /** When the person proved the address is theirs (docs/mail.md); null until then. */
  emailVerifiedAt: Date | null;
  /** The operator's staff (docs/billing.md): the operations console is theirs. */
  isStaff: boolean;
}

const USER_COLUMNS = 'id, email, name, created_at AS "createdAt", last_sign_in_at AS "lastSignInAt", email_verified_at AS "emailVerifiedAt", is_staff AS "isStaff"';

const newUserInput = z.object({ email: emailField, name: nameField, password: passwordField });

/** The error for an address some user already has, in whatever case. */
export const emailTaken = () =>
  new DomainError('conflict', 'A user with this email already exists.', {
    reason: 'email_taken',
    errors: { email: ['is already taken by another user'] },
  });

/**
 * A new user; the email is kept as typed (trimmed) and unique whatever its case. Its address counts
 * as confirmed: an operator (the CLI, the demo) or an invitation's link vouches for it. Open
 * sign-up writes its unconfirmed users itself (`signUp`).
 */
export async function createUser(db: Db, input: { email: string; name: string; password: string; staff?: boolean }): Promise<User> {
  const ready = await prepareUser(db, input);
  const user = await insertUser(db, ready, new Date());
  return input.staff ? setStaff(db, user.id, true) : user;
}

/**
 * Makes a user staff, or no longer (the CLI's `user set-staff`): the operations console is theirs
 * from their next page. Being staff makes nobody a member of any workspace (docs/billing.md).
 */
export async function setStaff(db: Db, userId: number, staff: boolean): Promise<User> {
  const { rows } = await db.query<User>(`UPDATE users SET is_staff = $2 WHERE id = $1 RETURNING ${USER_COLUMNS}`, [userId, staff]);
  if (!rows[0]) throw notFound('User');
  return rows[0];
}

/** A new user's input checked and its password hashed: slow work done before any transaction. */
export async function prepareUser(db: Db, input: { email: string; name: string; password: string }) {
  const { email, name, password } = parseUserInput(newUserInput, input);
  // An early answer for the usual case; the unique index decides under a race.
  if (await findUserByEmail(db, email)) throw emailTaken();
  return { email, name, passwordHash: await hashPassword(password) };
}

/** Writes a prepared user, on the pool or in the caller's transaction; `verifiedAt` null: the address is not confirmed yet. */
export async function insertUser(q: Pick<Db, 'query'>, user: Awaited<ReturnType<typeof prepareUser>>, verifiedAt: Date | null): Promise<User> {
  try {
    const { rows } = await q.query<User>(
      `INSERT INTO users (email, name, password_hash, email_verified_at) VALUES ($1, $2, $3, $4) RETURNING ${USER_COLUMNS}`,
      [user.email, user.name, user.passwordHash, verifiedAt],
    );
    return rows[0]!;
  } catch (err) {
    if (pgErrorCode(err) === '23505' && constraintOf(err) === 'users_email_lower_key') throw emailTaken();
    throw err;
  }
}

export async function findUserByEmail(db: Db, email: string): Promise<User | null> {
  // No stored email holds what PostgreSQL cannot store (a NUL): asking would fail, not miss.
  if (unstorableTextPath(email) !== undefined) return null;
  const { rows } = await db.query<User>(`SELECT ${USER_COLUMNS} FROM users WHERE lower(email) = lower($1)`, [email.trim()]);
  return rows[0] ?? null;
}

/** The user with this email (any case), or not_found naming the user. */
export async function requireUserByEmail(db: Db, email: string): Promise<User> {
  const user = await findUserByEmail(db, email);
  if (!user) throw notFound('User');
  return user;
}

export async function getUser(db: Db, userId: number): Promise<User> {
  const { rows } = await db.query<User>(`SELECT ${USER_COLUMNS} FROM users WHERE id = $1`, [userId]);
  if (!rows[0]) throw notFound('User');
  return rows[0];
}

/**
 * The user whose email and password these are, or null. An unknown email costs the same hashing
 * as a wrong password, so timing does not tell which addresses have accounts.
 */
export async function verifyCredentials(db: Db, email: string, password: string): Promise<User | null> {
  if (typeof email !== 'string' || typeof password !== 'string' || email.length > 254 || password.length > 256 || unstorableTextPath(email) !== undefined) {
    return verifyAgainstDummy(typeof password === 'string' ? password.slice(0, 256) : '').then(() => null);
  }
  const { rows } = await db.query<User & { passwordHash: string }>(
    `SELECT ${USER_COLUMNS}, password_hash AS "passwordHash" FROM users WHERE lower(email) = lower($1)`,
    [email.trim()],
  );
  const row = rows[0];
  if (!row) return verifyAgainstDummy(password).then(() => null);
  if (!(await verifyPassword(row.passwordHash, password))) return null;
  const { passwordHash: _, ...user } = row;
  return user;
}

/**
 * A new password; every session of the user ends in the same transaction, and so does every
 * password-reset link not used yet (one mailed before must not undo this one).
 */
export async function setPassword(db: Db, userId: number, password: string): Promise<{ sessionsEnded: number }> {
  const valid = parseUserInput(z.object({ password: passwordField }), { password }).password;
  const passwordHash = await hashPassword(valid); // before the transaction: it takes tens of milliseconds
  return withTransaction(db, async (tx) => {
    const updated = await tx.query('UPDATE users SET password_hash = $2 WHERE id = $1', [userId, passwordHash]);
    if (updated.rowCount === 0) throw notFound('User');
    const ended = await tx.query('DELETE FROM sessions WHERE user_id = $1', [userId]);
    await tx.query(`UPDATE user_tokens SET used_at = now() WHERE user_id = $1 AND purpose = 'reset_password' AND used_at IS NULL`, [userId]);
    return { sessionsEnded: ended.rowCount ?? 0 };
  });
}

export async function recordSignIn(db: Db, userId: number, clock: Clock = systemClock): Promise<void> {
  await db.query('UPDATE users SET last_sign_in_at = to_timestamp($2::double precision / 1000) WHERE id = $1', [userId, clock.now()]);
}
