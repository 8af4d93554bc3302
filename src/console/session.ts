import type { FastifyReply, FastifyRequest } from 'fastify';
import { notFound } from '../domain/errors.js';
import type { SessionStore } from '../domain/sessions/session-store.js';
import { SESSION_ABSOLUTE_MS } from '../domain/sessions/session-store.js';
import { getUser } from '../domain/users/user-service.js';
import { membershipsOf } from '../domain/users/memberships.js';
import { type ConsoleDeps, pathId, toTarget } from './context.js';
import { CSRF_COOKIE, SESSION_COOKIE } from './cookies.js';


/** Cookie attributes of the session: HttpOnly, SameSite=Lax, Secure when the public URL is https. */
export function sessionCookieOptions(secure: boolean) {
  return { path: '/app', httpOnly: true, sameSite: 'lax' as const, secure, maxAge: SESSION_ABSOLUTE_MS / 1000 };
}

export function isSecure(deps: ConsoleDeps): boolean {
  return deps.config.PUBLIC_BASE_URL?.startsWith('https:') ?? false;
}

/**
 * A new CSRF secret with each session, and none after it: a token taken from one person's pages
 * must not be good in the next session of the same browser (a shared computer). The next page
 * makes a new secret.
 */
function dropCsrfSecret(reply: FastifyReply) {
  reply.clearCookie(CSRF_COOKIE, { path: '/app' });
}

/** Signs the user in: a new session id every time (never one the browser brought), in a cookie. */
export async function startSession(deps: ConsoleDeps, sessions: SessionStore, request: FastifyRequest, reply: FastifyReply, userId: number) {
  const old = request.cookies[SESSION_COOKIE];
  if (old) await sessions.end(old);
  const { id } = await sessions.start(userId);
  // Sessions that can no longer be used go here, a batch at a time: sign-ins are rare enough.
  await sessions.purge();
  reply.setCookie(SESSION_COOKIE, id, sessionCookieOptions(isSecure(deps)));
  dropCsrfSecret(reply);
}

export async function endSession(deps: ConsoleDeps, sessions: SessionStore, request: FastifyRequest, reply: FastifyReply) {
  const id = request.cookies[SESSION_COOKIE];
  if (id) await sessions.end(id);
  reply.clearCookie(SESSION_COOKIE, sessionCookieOptions(isSecure(deps)));
  dropCsrfSecret(reply);
}

/** The page an unconfirmed person sees instead of the console (EMAIL_VERIFICATION=required). */
export const CHECK_EMAIL = '/app/check-email';

/** Whether the signed-in person sees only "Check your email": an unconfirmed address, and EMAIL_VERIFICATION=required. */
export function mustConfirmFirst(deps: ConsoleDeps, request: FastifyRequest): boolean {
  return request.consoleUser !== null && !request.consoleUser.emailVerified && deps.config.EMAIL_VERIFICATION === 'required';
}

/** Who is signed in, from the cookie; null without a live session. */
export async function loadSignedIn(deps: ConsoleDeps, sessions: SessionStore, request: FastifyRequest): Promise<boolean> {
  const id = request.cookies[SESSION_COOKIE];
  if (!id) return false;
  const session = await sessions.find(id);
  if (!session) return false;
  const [user, memberships] = await Promise.all([getUser(deps.pool, session.userId), membershipsOf(deps.pool, session.userId)]);
  request.consoleUser = { id: user.id, name: user.name, email: user.email, emailVerified: user.emailVerifiedAt !== null, staff: user.isStaff };
  request.consoleTargets = memberships.map(toTarget);
  return true;
}

/**
 * The one gate in front of every signed-in route: no live session → to the sign-in page (303,
 * with the page asked for to return to); an address not confirmed while EMAIL_VERIFICATION is
 * required → to "Check your email" (303), whatever was asked, a form's post included; a page of
 * a workspace or publisher account the person is not a member of → 404, as for one that does not
 * exist.
 */
export function signedInGate(deps: ConsoleDeps, sessions: SessionStore) {
  return async function gate(request: FastifyRequest, reply: FastifyReply) {
    if (!(await loadSignedIn(deps, sessions, request))) {
      const next = request.method === 'GET' ? `?next=${encodeURIComponent(request.url)}` : '';
      return reply.redirect(`/app/sign-in${next}`, 303);
    }
    if (mustConfirmFirst(deps, request)) return reply.redirect(CHECK_EMAIL, 303);
    const params = request.params as { targetId?: string } | undefined;
    const raw = params?.targetId;
    if (raw === undefined) return;
    // The kind comes from the route that matched, not from the URL as sent: the router decodes
    // the path (/app/%70/1 is /app/p/1), the raw URL does not.
    const kind = request.routeOptions.url?.startsWith('/app/p/') ? 'publisher' : 'workspace';
    const id = pathId(raw, 'Page');
    const target = request.consoleTargets.find((t) => t.kind === kind && t.id === id);
    if (!target) throw notFound('Page');
    request.consoleTarget = target;
  };
}
