import { createHmac, hash, randomBytes, timingSafeEqual } from 'node:crypto';
import type pg from 'pg';
import { type Tx, withTransaction } from '../db/tx.js';
import type { Clock } from '../domain/clock.js';
import { DomainError, invalidInput } from '../domain/errors.js';
import { canonicalJson } from '../shared/canonical-json.js';

/**
 * Two-step spending (docs/mcp.md). A quote carries a confirmation token: an HMAC-SHA256,
 * under a secret every process shares, over a random id, the key id, the tool, the hash of the
 * canonical arguments, the quoted total and an expiry. Confirming records the token id in
 * `mcp_confirmations` in the same transaction as the spending, so a token spends at most once and
 * a repeat gets the stored result back.
 */

export const QUOTE_TTL_MS = 10 * 60_000;
const VERSION = 'mcq1';

interface Claims {
  /** Random token id, the primary key of mcp_confirmations. */
  id: string;
  keyId: number;
  tool: string;
  argsHash: string;
  totalCents: number;
  expiresAt: number;
}

/** SHA-256 of the arguments with sorted keys, the token itself left out. */
export function argumentsHash(args: Record<string, unknown>): string {
  const { confirmation_token: _token, ...rest } = args;
  return hash('sha256', canonicalJson(rest), 'base64url');
}

const refuse = (why: string) =>
  invalidInput(
    { confirmation_token: [why] },
    `The confirmation_token was refused: ${why}. Nothing was spent. Call the tool again without confirmation_token for a new quote, show it to the user and get their explicit confirmation.`,
  );

export interface Confirmations {
  mint(keyId: number, tool: string, args: Record<string, unknown>, totalCents: number): { token: string; expiresAt: number };
  /** Checks signature, key, tool and arguments; expiry is left to the caller (a used token still replays). */
  verify(token: string, keyId: number, tool: string, args: Record<string, unknown>): Claims;
}

export function createConfirmations(secret: string, clock: Clock): Confirmations {
  const sign = (payload: string) => createHmac('sha256', secret).update(`${VERSION}.${payload}`).digest();
  return {
    mint(keyId, tool, args, totalCents) {
      const claims: Claims = {
        id: randomBytes(16).toString('base64url'),
        keyId,
        tool,
        argsHash: argumentsHash(args),
        totalCents,
        expiresAt: clock.now() + QUOTE_TTL_MS,
      };
      const payload = Buffer.from(JSON.stringify(claims)).toString('base64url');
      return { token: `${VERSION}.${payload}.${sign(payload).toString('base64url')}`, expiresAt: claims.expiresAt };
    },
    verify(token, keyId, tool, args) {
      const [version, payload, signature, ...rest] = token.split('.');
      if (version !== VERSION || !payload || !signature || rest.length) throw refuse('it is not a token this server issued');
      // Compared as text, not as decoded bytes: base64url decoding ignores padding and the unused
      // low bits of the last character, so several spellings would pass for the one issued.
      const given = Buffer.from(signature);
      const expected = Buffer.from(sign(payload).toString('base64url'));
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
        throw refuse('it was not issued by this server or has been altered');
      }
      const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Claims;
      if (claims.keyId !== keyId) throw refuse('it was issued to another API key');
      if (claims.tool !== tool) throw refuse(`it was issued for ${claims.tool}, not ${tool}`);
      if (claims.argsHash !== argumentsHash(args)) {
        throw refuse('it was issued for other arguments; repeat exactly the arguments of the quote');
      }
      return claims;
    },
  };
}

const statements = {
  claim: `INSERT INTO mcp_confirmations (token_id, api_key_id, tool, arguments_hash, result, created_at)
          VALUES ($1, $2, $3, $4, '{}'::json, $5) ON CONFLICT (token_id) DO NOTHING RETURNING token_id`,
  stored: `SELECT result FROM mcp_confirmations WHERE token_id = $1 AND api_key_id = $2 AND tool = $3 AND arguments_hash = $4`,
  save: 'UPDATE mcp_confirmations SET result = $2::json WHERE token_id = $1',
};

async function storedResult(q: pg.Pool | Tx, c: Claims): Promise<Record<string, unknown> | undefined> {
  const { rows } = await q.query<{ result: Record<string, unknown> }>({
    name: 'mcp_confirmation_stored',
    text: statements.stored,
    values: [c.id, c.keyId, c.tool, c.argsHash],
  });
  return rows[0]?.result;
}

export interface SpendDeps {
  pool: pg.Pool;
  clock: Clock;
  confirmations: Confirmations;
  principal: { keyId: number };
}

/**
 * Confirms a quote: verifies the token, then in one transaction claims its id and runs `act`
 * (which spends, and throws — rolling everything back — when the total differs from the quoted
 * one). A token already used answers its stored result with `replayed: true`, even once expired.
 * The claim is an INSERT on the token id, so a concurrent second use waits for the first and then
 * replays it instead of spending again.
 */
export async function spendOnce<R extends Record<string, unknown>>(
  deps: SpendDeps,
  tool: string,
  args: Record<string, unknown>,
  token: string,
  act: (tx: Tx, quotedTotalCents: number) => Promise<R>,
): Promise<R & { replayed: boolean }> {
  const claims = deps.confirmations.verify(token, deps.principal.keyId, tool, args);
  const now = deps.clock.now();
  if (claims.expiresAt <= now) {
    const stored = await storedResult(deps.pool, claims);
    if (stored) return { ...(stored as R), replayed: true };
    throw refuse(`it expired at ${new Date(claims.expiresAt).toISOString().replace(/\.\d{3}Z$/, 'Z')} (quotes are valid for 10 minutes)`);
  }
  return withTransaction(deps.pool, async (tx) => {
    const claimed = await tx.query({
      name: 'mcp_confirmation_claim',
      text: statements.claim,
      values: [claims.id, claims.keyId, claims.tool, claims.argsHash, new Date(now)],
    });
    if (claimed.rowCount === 0) {
      const stored = await storedResult(tx, claims);
      if (!stored) throw refuse('it does not match the call it was used for');
      return { ...(stored as R), replayed: true };
    }
    const done = { ...(await act(tx, claims.totalCents)), replayed: false };
    await tx.query({ name: 'mcp_confirmation_save', text: statements.save, values: [claims.id, JSON.stringify(done)] });
    return done;
  });
}

/** The total moved since the quote: nothing is spent (the transaction rolls back). */
export function quoteChanged(quotedCents: number, totalCents: number, fmt: (cents: number) => string): DomainError {
  return new DomainError(
    'quote_changed',
    `The total changed since the quote (quoted ${fmt(quotedCents)}, now ${fmt(totalCents)}). Nothing was spent. Get a new quote and confirm it with the user again.`,
    { quoted_total_cents: quotedCents, total_cents: totalCents },
  );
}
