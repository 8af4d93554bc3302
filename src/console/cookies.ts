import { createHmac, randomBytes } from 'node:crypto';
import type { FastifyRequest } from 'fastify';

export const SESSION_COOKIE = 'mk_session';
/** The cookie holding the secret the forms' CSRF tokens are made from. */
export const CSRF_COOKIE = '_csrf';

/**
 * What a CSRF token is bound to: the session cookie as the browser sent it, or none signed out,
 * hashed with the key from app_secrets (`request.consoleCsrfKey`, read before any console route
 * runs). The token carries only a hash of that. A stale cookie binds too: the sign-in page and its
 * post see the same one. Without the key (an error page while the database is away), the binding
 * is random: a token made then is good for nothing.
 */
export function csrfUserInfo(request: FastifyRequest): string {
  const id = request.cookies?.[SESSION_COOKIE];
  const key = request.consoleCsrfKey;
  if (!key) return `unbound:${randomBytes(16).toString('base64url')}`;
  return createHmac('sha256', key)
    .update(id ? `session:${id}` : 'signed-out')
    .digest('base64url');
}
