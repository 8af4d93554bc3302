import type { FastifyRequest } from 'fastify';

export const SESSION_COOKIE = 'mk_session';
/** The cookie holding the secret the forms' CSRF tokens are made from. */
export const CSRF_COOKIE = '_csrf';

/**
 * What a CSRF token is bound to: the session cookie as the browser sent it, or none signed out.
 * The token carries only a keyed hash of it. A stale cookie binds too: the sign-in page and its
 * post see the same one.
 */
export function csrfUserInfo(request: FastifyRequest): string {
  const id = request.cookies[SESSION_COOKIE];
  return id ? `session:${id}` : 'signed-out';
}
