import { createHash, randomBytes } from 'node:crypto';
import type { Db } from '../../db/handle.js';
import type { Clock } from '../clock.js';

/**
 * Console sessions, kept in PostgreSQL so any number of server processes share them. The cookie
 * carries a random id; only its SHA-256 is stored (a leaked table or log opens no session).
 * A session ends after `IDLE_MS` without a request, `ABSOLUTE_MS` after sign-in whatever happens,
 * at sign-out, and when the user's password changes (users' setPassword deletes their rows).
 */
export const SESSION_IDLE_MS = 12 * 3_600_000;
export const SESSION_ABSOLUTE_MS = 30 * 86_400_000;
// A page view moves last_seen_at at most once a minute: reads stay reads.
const TOUCH_EVERY_MS = 60_000;

export interface SessionRecord {
  userId: number;
  data: Record<string, unknown>;
  /** When the session ends if nothing else happens: the sooner of the idle and absolute ends. */
  endsAt: number;
}

const hashOf = (id: string) => createHash('sha256').update(id).digest('hex');
const WELL_FORMED = /^[A-Za-z0-9_-]{43}$/;

export function createSessionStore(pool: Db, clock: Clock) {
  return {
    /** Starts a session for the user; the raw id is returned here only, for the cookie. */
    async start(userId: number, data: Record<string, unknown> = {}): Promise<{ id: string; endsAt: number }> {
      const id = randomBytes(32).toString('base64url');
      const now = clock.now();
      await pool.query({
        name: 'session_start',
        text: `INSERT INTO sessions (id_hash, user_id, data, created_at, last_seen_at, expires_at) VALUES ($1, $2, $3, $4, $4, $5)`,
        values: [hashOf(id), userId, JSON.stringify(data), new Date(now), new Date(now + SESSION_ABSOLUTE_MS)],
      });
      return { id, endsAt: now + SESSION_IDLE_MS };
    },

    /** The live session behind a cookie's id, touched; undefined when unknown, idle too long or over. */
    async find(id: string): Promise<SessionRecord | undefined> {
      if (!WELL_FORMED.test(id)) return undefined;
      const now = clock.now();
      const { rows } = await pool.query<{ user_id: number; data: Record<string, unknown>; last_seen_at: Date; expires_at: Date }>({
        name: 'session_find',
        text: `SELECT user_id, data, last_seen_at, expires_at FROM sessions WHERE id_hash = $1 AND expires_at > $2 AND last_seen_at > $3`,
        values: [hashOf(id), new Date(now), new Date(now - SESSION_IDLE_MS)],
      });
      const row = rows[0];
      if (!row) return undefined;
      if (now - row.last_seen_at.getTime() >= TOUCH_EVERY_MS) {
        await pool.query({ name: 'session_touch', text: `UPDATE sessions SET last_seen_at = $2 WHERE id_hash = $1`, values: [hashOf(id), new Date(now)] });
      }
      return { userId: row.user_id, data: row.data, endsAt: Math.min(row.expires_at.getTime(), now + SESSION_IDLE_MS) };
    },

    /** Ends one session (sign-out). */
    async end(id: string): Promise<void> {
      if (!WELL_FORMED.test(id)) return;
      await pool.query({ name: 'session_end', text: `DELETE FROM sessions WHERE id_hash = $1`, values: [hashOf(id)] });
    },

    /** Deletes sessions that can no longer be used (idle or over), a batch at a time. */
    async purge(): Promise<number> {
      const now = clock.now();
      const { rowCount } = await pool.query({
        name: 'session_purge',
        text: `DELETE FROM sessions WHERE id_hash IN (SELECT id_hash FROM sessions WHERE expires_at <= $1 OR last_seen_at <= $2 LIMIT 1000)`,
        values: [new Date(now), new Date(now - SESSION_IDLE_MS)],
      });
      return rowCount ?? 0;
    },
  };
}

export type SessionStore = ReturnType<typeof createSessionStore>;
