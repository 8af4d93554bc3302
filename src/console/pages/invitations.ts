import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DomainError, type FieldErrors, notFound } from '../../domain/errors.js';
import type { SessionStore } from '../../domain/sessions/session-store.js';
import { acceptInvitation, claimByInvitation, describeInvitation, invitationExpired, invitationUsed, signUpByInvitation } from '../../domain/users/invitations.js';
import { findUserByEmail, recordSignIn, verifyCredentials } from '../../domain/users/user-service.js';
import { type ConsoleDeps, page, targetHref } from '../context.js';
import { loadSignedIn, startSession } from '../session.js';
import { type AuthLimits, slowedMessage, takeSignInAttempt, takeSignUp, WRONG_CREDENTIALS } from './auth.js';
import { type Form, formText } from '../form.js';

// The invite link, /app/invitation?token=…: who is invited where, then one button. Signed in as
// the invited address: "Join", or, for an account that never confirmed its address, "Set a
// password to join" (a new name and password: docs/mail.md). Not signed in: one form, the same
// whether the address has an account or not (else the page tells anyone who can invite which
// addresses have one): its password signs in to a confirmed account; with no account it makes
// one, and an account never confirmed is claimed with the name and password sent, answered as
// if it were made (whatever SIGNUP says, an invitation may add a person). The token travels in
// the query string (redacted from logs) and in form fields, never in a redirect's `next`.

const tokenOf = (source: unknown) => {
  const t = (source as { token?: unknown } | undefined)?.token;
  return typeof t === 'string' && t.length > 0 && t.length <= 200 ? t : '';
};

/** The 422 of the one form when the fields cannot make (or claim) an account: the same words either way. */
const CHECK_NEW_ACCOUNT = 'Check the fields below: they make your account as you join.';

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
    // Signed out, nothing about the address's account is looked up: the page is the same for all.
    const mode = signedIn
      ? signedIn.email.toLowerCase() === invitation.email.toLowerCase()
        ? signedIn.emailVerified
          ? 'join'
          : 'claim'
        : 'other'
      : 'accept';
    reply.header('cache-control', 'no-store');
    return page(request, reply, 'invitation', {
      title: 'Invitation',
      noAddressBanner: true,
      invitation: { ...invitation, kindLabel: invitation.kind === 'workspace' ? 'workspace' : 'publisher account' },
      token,
      mode,
      ...(mode === 'claim' && signedIn ? { form: { name: signedIn.name } } : {}),
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
  // answer is limited: as a sign-in while there is a confirmed account, as a sign-up while there
  // is none or one never confirmed (claimed: a new name and password, the address confirmed,
  // every session of the account ended). A claim answers as a sign-up does.
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
    const existing = await findUserByEmail(deps.db, invitation.email);
    if (existing?.emailVerifiedAt) {
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
    // No confirmed account: a sign-up with the invitation's email, whatever SIGNUP says, or the
    // unconfirmed account claimed; the link proves the address either way.
    await attempt.forgive();
    const signUp = await takeSignUp(limits, address);
    if (signUp.blocked) {
      tooMany(reply, signUp.blocked.retryAfterSeconds);
      return invitationPage(request, reply, token, { ...again, problem: 'Too many sign-ups from this address. Try again later.' });
    }
    let made: { user: { id: number }; joined: Awaited<ReturnType<typeof acceptInvitation>> };
    try {
      made = existing
        ? await claimByInvitation(deps.db, token, { name, password }, deps.clock)
        : await signUpByInvitation(deps.db, token, { name, password }, deps.clock);
    } catch (err) {
      // A form refused for its fields still counts (unlike on the sign-up page): its answer tells
      // that the address has no confirmed account.
      if (!(err instanceof DomainError && err.code === 'invalid_input')) {
        await signUp.forgive();
        throw err;
      }
      reply.code(422);
      return invitationPage(request, reply, token, { ...again, errors: (err.details.errors ?? {}) as FieldErrors, problem: CHECK_NEW_ACCOUNT });
    }
    await startSession(deps, sessions, request, reply, made.user.id);
    await recordSignIn(deps.db, made.user.id, deps.clock);
    return reply.redirect(targetHref(made.joined.kind, made.joined.id), 303);
  });

  // Signed in as the invited address, never confirmed: the link proves it, so its holder sets a
  // new name and password; every session of the account ends (this one is started again).
  // Limited like a sign-up. Signed out, or as anyone else, the page is shown again as it is.
  app.post('/invitation/claim', async (request, reply) => {
    const form = (request.body ?? {}) as Form;
    const token = tokenOf(form);
    const invitation = await pending(token);
    const me = (await loadSignedIn(deps, sessions, request)) ? request.consoleUser! : null;
    if (!me || me.emailVerified || me.email.toLowerCase() !== invitation.email.toLowerCase()) return invitationPage(request, reply, token);
    const attempt = await takeSignUp(limits, `ip:${request.ip}`);
    if (attempt.blocked) {
      tooMany(reply, attempt.blocked.retryAfterSeconds);
      return invitationPage(request, reply, token, { problem: 'Too many attempts from this address. Try again later.' });
    }
    const name = formText(form, 'name');
    let claimed: Awaited<ReturnType<typeof claimByInvitation>>;
    try {
      claimed = await claimByInvitation(deps.db, token, { name, password: formText(form, 'password') }, deps.clock);
    } catch (err) {
      await attempt.forgive();
      if (!(err instanceof DomainError && err.code === 'invalid_input')) throw err;
      reply.code(422);
      return invitationPage(request, reply, token, { form: { name }, errors: (err.details.errors ?? {}) as FieldErrors, problem: 'Check the fields below.' });
    }
    await startSession(deps, sessions, request, reply, claimed.user.id);
    await recordSignIn(deps.db, claimed.user.id, deps.clock);
    return reply.redirect(targetHref(claimed.joined.kind, claimed.joined.id), 303);
  });
}
