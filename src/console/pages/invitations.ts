import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DomainError, type FieldErrors, notFound } from '../../domain/errors.js';
import type { SessionStore } from '../../domain/sessions/session-store.js';
import { acceptInvitation, describeInvitation, invitationExpired, invitationUsed, signUpByInvitation } from '../../domain/users/invitations.js';
import { findUserByEmail, recordSignIn, verifyCredentials } from '../../domain/users/user-service.js';
import { type ConsoleDeps, page, targetHref } from '../context.js';
import { loadSignedIn, startSession } from '../session.js';
import { type AuthLimits, slowedMessage, takeSignInAttempt, takeSignUp, WRONG_CREDENTIALS } from './auth.js';
import { type Form, formText } from '../form.js';

// The invite link, /app/invitation?token=…: who is invited where, then one button. Signed in as
// the invited address: "Join". Not signed in: sign in (an account exists) or sign up (none does;
// whatever SIGNUP says, an invitation may add a person). The token travels in the query string
// (redacted from logs) and in form fields, never in a redirect's `next`.

const tokenOf = (source: unknown) => {
  const t = (source as { token?: unknown } | undefined)?.token;
  return typeof t === 'string' && t.length > 0 && t.length <= 200 ? t : '';
};

export async function invitationPages(app: FastifyInstance, { deps, sessions, limits }: { deps: ConsoleDeps; sessions: SessionStore; limits: AuthLimits }) {
  /** The pending invitation a token names; an error page for any other. */
  const pending = async (token: string) => {
    const invitation = token ? await describeInvitation(deps.db, token, deps.clock) : null;
    if (!invitation) throw notFound('Invitation');
    if (invitation.state === 'accepted') throw invitationUsed();
    if (invitation.state === 'expired') throw invitationExpired();
    return invitation;
  };

  const invitationPage = async (request: FastifyRequest, reply: FastifyReply, token: string, data: Record<string, unknown> = {}) => {
    const invitation = await pending(token);
    const signedIn = request.consoleUser ?? ((await loadSignedIn(deps, sessions, request)) ? request.consoleUser : null);
    const hasAccount = !signedIn && Boolean(await findUserByEmail(deps.db, invitation.email));
    reply.header('cache-control', 'no-store');
    return page(request, reply, 'invitation', {
      title: 'Invitation',
      invitation: { ...invitation, kindLabel: invitation.kind === 'workspace' ? 'workspace' : 'publisher account' },
      token,
      mode: signedIn ? (signedIn.email.toLowerCase() === invitation.email.toLowerCase() ? 'join' : 'other') : hasAccount ? 'sign-in' : 'sign-up',
      ...data,
    });
  };

  app.get('/invitation', async (request, reply) => invitationPage(request, reply, tokenOf(request.query)));

  // Signed in as the invited address: join.
  app.post('/invitation', async (request, reply) => {
    const token = tokenOf(request.body);
    if (!(await loadSignedIn(deps, sessions, request))) return invitationPage(request, reply, token);
    const joined = await acceptInvitation(deps.db, token, request.consoleUser!.id, deps.clock);
    return reply.redirect(targetHref(joined.kind, joined.id), 303);
  });

  // An account exists: its password, limited like any sign-in, then join.
  app.post('/invitation/sign-in', async (request, reply) => {
    const form = (request.body ?? {}) as Form;
    const token = tokenOf(form);
    const invitation = await pending(token);
    const account = `account:${invitation.email.toLowerCase()}`;
    const address = `ip:${request.ip}`;
    const attempt = await takeSignInAttempt(limits, account, address);
    if (attempt.blocked) {
      reply.code(429).header('retry-after', String(attempt.blocked.retryAfterSeconds));
      return invitationPage(request, reply, token, { problem: attempt.blocked.slowed ? slowedMessage(attempt.blocked.retryAfterSeconds) : 'Too many attempts. Try again later.' });
    }
    const user = await verifyCredentials(deps.db, invitation.email, formText(form, 'password'));
    if (!user) {
      reply.code(401);
      return invitationPage(request, reply, token, { problem: WRONG_CREDENTIALS });
    }
    await attempt.forgive();
    const joined = await acceptInvitation(deps.db, token, user.id, deps.clock);
    await startSession(deps, sessions, request, reply, user.id);
    await recordSignIn(deps.db, user.id, deps.clock);
    return reply.redirect(targetHref(joined.kind, joined.id), 303);
  });

  // No account yet: name and password (the email is the invitation's), limited like any sign-up.
  app.post('/invitation/sign-up', async (request, reply) => {
    const form = (request.body ?? {}) as Form;
    const token = tokenOf(form);
    await pending(token);
    const address = `ip:${request.ip}`;
    const attempt = await takeSignUp(limits, address);
    if (attempt.blocked) {
      reply.code(429).header('retry-after', String(attempt.blocked.retryAfterSeconds));
      return invitationPage(request, reply, token, { problem: 'Too many sign-ups from this address. Try again later.' });
    }
    const name = formText(form, 'name');
    let created: Awaited<ReturnType<typeof signUpByInvitation>>;
    try {
      created = await signUpByInvitation(deps.db, token, { name, password: formText(form, 'password') }, deps.clock);
    } catch (err) {
      await attempt.forgive();
      if (!(err instanceof DomainError && err.code === 'invalid_input')) throw err;
      reply.code(422);
      return invitationPage(request, reply, token, { form: { name }, errors: (err.details.errors ?? {}) as FieldErrors, problem: 'Check the fields below.' });
    }
    await startSession(deps, sessions, request, reply, created.user.id);
    await recordSignIn(deps.db, created.user.id, deps.clock);
    return reply.redirect(targetHref(created.joined.kind, created.joined.id), 303);
  });
}
