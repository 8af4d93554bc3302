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
// the invited address: "Join". Not signed in: one form, the same whether the address has an
// account or not (else the page tells anyone who can invite which addresses have one): its
// password signs in to the account, or, with none, makes it (whatever SIGNUP says, an invitation
// may add a person). The token travels in the query string (redacted from logs) and in form
// fields, never in a redirect's `next`.

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
    reply.header('cache-control', 'no-store');
    return page(request, reply, 'invitation', {
      title: 'Invitation',
      invitation: { ...invitation, kindLabel: invitation.kind === 'workspace' ? 'workspace' : 'publisher account' },
      token,
      mode: signedIn ? (signedIn.email.toLowerCase() === invitation.email.toLowerCase() ? 'join' : 'other') : 'accept',
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

  const tooMany = (reply: FastifyReply, retryAfterSeconds: number) => reply.code(429).header('retry-after', String(retryAfterSeconds));

  // Signed out: the one form. Whether an account exists is known only once it is sent, and every
  // answer is limited: as a sign-in while there is an account, as a sign-up while there is none.
  app.post('/invitation/accept', async (request, reply) => {
    const form = (request.body ?? {}) as Form;
    const token = tokenOf(form);
    const invitation = await pending(token);
    const name = formText(form, 'name');
    const password = formText(form, 'password');
    const again = { form: { name } };
    const account = `account:${invitation.email.toLowerCase()}`;
    const address = `ip:${request.ip}`;
    const attempt = await takeSignInAttempt(limits, account, address);
    if (attempt.blocked) {
      tooMany(reply, attempt.blocked.retryAfterSeconds);
      return invitationPage(request, reply, token, { ...again, problem: attempt.blocked.slowed ? slowedMessage(attempt.blocked.retryAfterSeconds) : 'Too many attempts. Try again later.' });
    }
    if (await findUserByEmail(deps.db, invitation.email)) {
      const user = await verifyCredentials(deps.db, invitation.email, password);
      if (!user) {
        reply.code(401);
        return invitationPage(request, reply, token, { ...again, problem: WRONG_CREDENTIALS });
      }
      await attempt.forgive();
      const joined = await acceptInvitation(deps.db, token, user.id, deps.clock);
      await startSession(deps, sessions, request, reply, user.id);
      await recordSignIn(deps.db, user.id, deps.clock);
      return reply.redirect(targetHref(joined.kind, joined.id), 303);
    }
    // No account: a sign-up with the invitation's email, whatever SIGNUP says.
    await attempt.forgive();
    const signUp = await takeSignUp(limits, address);
    if (signUp.blocked) {
      tooMany(reply, signUp.blocked.retryAfterSeconds);
      return invitationPage(request, reply, token, { ...again, problem: 'Too many sign-ups from this address. Try again later.' });
    }
    let created: Awaited<ReturnType<typeof signUpByInvitation>>;
    try {
      created = await signUpByInvitation(deps.db, token, { name, password }, deps.clock);
    } catch (err) {
      // A form refused for its fields still counts (unlike on the sign-up page): its answer tells
      // that the address has no account.
      if (!(err instanceof DomainError && err.code === 'invalid_input')) {
        await signUp.forgive();
        throw err;
      }
      reply.code(422);
      return invitationPage(request, reply, token, { ...again, errors: (err.details.errors ?? {}) as FieldErrors, problem: 'No account has this address yet: check the fields below to make it.' });
    }
    await startSession(deps, sessions, request, reply, created.user.id);
    await recordSignIn(deps.db, created.user.id, deps.clock);
    return reply.redirect(targetHref(created.joined.kind, created.joined.id), 303);
  });
}
