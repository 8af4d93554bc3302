import type pg from 'pg';
import { linkIn, pathOf } from './smtp.js';

/**
 * The path of the newest link of `kind` queued for `address` in the outbox, read from the mail's
 * text as the worker would send it: tests that run no mail worker follow links this way.
 */
export async function outboxLink(pool: pg.Pool, address: string, kind: 'verify_email' | 'reset_password' | 'invitation' | 'invitation_proof'): Promise<string> {
  const { rows } = await pool.query<{ body_text: string }>(
    `SELECT body_text FROM mail_outbox WHERE lower(to_address) = lower($1) AND kind = $2 AND body_text IS NOT NULL ORDER BY id DESC LIMIT 1`,
    [address, kind],
  );
  if (!rows[0]) throw new Error(`no ${kind} mail waiting for ${address}`);
  const path = { verify_email: 'verify-email', reset_password: 'reset-password', invitation: 'invitation', invitation_proof: 'invitation' }[kind];
  return pathOf(linkIn(rows[0].body_text, path));
}

/** Outbox rows for an address (any case), oldest first. */
export async function outboxRows(pool: pg.Pool, address: string) {
  const { rows } = await pool.query<{ id: number; kind: string; status: string; attempts: number; last_error: string | null; body_text: string | null; body_html: string | null }>(
    `SELECT id, kind, status, attempts, last_error, body_text, body_html FROM mail_outbox WHERE lower(to_address) = lower($1) ORDER BY id`,
    [address],
  );
  return rows;
}
