import { createHmac, hash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Clock } from '../domain/clock.js';
import { canonicalJson } from '../common/canonical-json.js';
import { type OnceKey, refusedConfirmation } from '../domain/idempotency/record-once.js';

/**
 * Two-step spending (docs/mcp.md). A quote carries a confirmation token: an HMAC-SHA256,
 * under a secret every process shares, over a random id, the key id, the tool, the hash of the
 * canonical arguments, the quoted total and an expiry. Confirming keeps the token id in
 * `mcp_confirmations` in the same transaction as the spending (`recordOnce`), so a token spends
 * at most once and a repeat gets the stored result back.
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
  /**
   * What else the quote showed that confirming must find unchanged: for an approval, the page
   * the placement is live on (a placement sent back and published again elsewhere is not the one
   * the user checked). Absent from tokens that bind nothing more than the total.
   */
  subject?: string | null;
  expiresAt: number;
}

/** SHA-256 of the arguments with sorted keys, the token itself left out. */
export function argumentsHash(args: Record<string, unknown>): string {
  const { confirmation_token: _token, ...rest } = args;
  return hash('sha256', canonicalJson(rest), 'base64url');
}

const refuse = refusedConfirmation;

export interface Confirmations {
  mint(keyId: number, tool: string, args: Record<string, unknown>, totalCents: number, subject?: string | null): { token: string; expiresAt: number };
  /** Checks signature, key, tool and arguments; expiry is left to the caller (a used token still replays). */
  verify(token: string, keyId: number, tool: string, args: Record<string, unknown>): Claims;
}

export function createConfirmations(secret: string, clock: Clock): Confirmations {
  const sign = (payload: string) => createHmac('sha256', secret).update(`${VERSION}.${payload}`).digest();
  return {
    mint(keyId, tool, args, totalCents, subject) {
      const claims: Claims = {
        id: randomBytes(16).toString('base64url'),
        keyId,
        tool,
        argsHash: argumentsHash(args),
        totalCents,
        ...(subject !== undefined ? { subject } : {}),
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

/**
 * Checks a confirmation token (signature, key, tool, arguments) and says where its spending is
 * kept once: the token's id in `mcp_confirmations`, written in the same transaction as the
 * spending (`recordOnce`). Expiry is the record's to judge: a used token still replays.
 */
export function confirmationOf(
  confirmations: Confirmations,
  principal: { keyId: number },
  tool: string,
  args: Record<string, unknown>,
  token: string,
): { once: OnceKey; quotedTotalCents: number; quotedSubject: string | null | undefined } {
  const claims = confirmations.verify(token, principal.keyId, tool, args);
  return {
    once: { book: 'confirmation', apiKeyId: claims.keyId, tokenId: claims.id, tool: claims.tool, argumentsHash: claims.argsHash, expiresAt: claims.expiresAt },
    quotedTotalCents: claims.totalCents,
    quotedSubject: claims.subject,
  };
}
