import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DomainError, type FieldErrors, notFound } from '../../domain/errors.js';
import type { SessionStore } from '../../domain/sessions/session-store.js';
import { acceptInvitation, checkInvitationProof, claimByInvitation, describeInvitation, invitationExpired, invitationUsed, joinByMailedLink, mailInvitationProof } from '../../domain/users/invitations.js';
import { INVITATION_PROOF_MINUTES } from '../../domain/users/user-mails.js';
import { findUserByEmail, recordSignIn, verifyCredentials } from '../../domain/users/user-service.js';
import { consoleBaseUrl } from '../../config.js';
import { type ConsoleDeps, page, targetHref } from '../context.js';
import type { Views } from '../view-models.js';
import { loadSignedIn, startSession } from '../session.js';
import { type AuthLimits, slowedMessage, takeSignInAttempt, takeSignUp, WRONG_CREDENTIALS } from './auth.js';
import { type Form, formText } from '../form.js';

// The invite link, /app/invitation?token=…: who is invited where, then one button. Signed in as
// the invited address: "Join", or, for an account that never confirmed its address, "Set a
// password to join" (a new name and password: docs/mail.md). Not signed in: one form, the same
// whether the address has an account or not (else the page tells anyone who can invite which
// addresses have one): its password signs in to a confirmed account; for any other address the
// answer is "Check your email", and a link is mailed to the address (…&mail_token=…) whose page
// sets a name and password and joins: it makes the account, or claims one never confirmed. The
// invite link alone proves nothing about the address: the owner who invites sees it too. The
// tokens travel in the query string (redacted from logs) and in form fields, never in a redirect.
const tokenOf = (source: unknown) => {
  const t = (source as { token?: unknown } | undefined)?.token;
  return typeof t === 'string' && t.length > 0 && t.length <= 200 ? t : '';
};

const proofOf = (source: unknown) => {
  const t = (source as { mail_token?: unknown } | undefined)?.mail_token;
  return typeof t === 'string' && t.length > 0 && t.length <= 200 ? t : '';
};

export async function invitationPages(app: FastifyInstance, { deps, sessions, limits }: { deps: ConsoleDeps; sessions: SessionStore; limits: AuthLimits }) {
  /** The pending invitation a token names; an error page for any other. */
  const pending = async (token: string) => {
    const invitation = token ? await describeInvitation(deps.pool, token, deps.clock) : null;
    if (!invitation) throw notFound('Invitation');
    if (invitation.state === 'accepted') throw invitationUsed();
    if (invitation.state === 'expired') throw invitationExpired();
    return invitation;
  };

  const invitationPage = async (request: FastifyRequest, reply: FastifyReply, token: string, data: Partial<Views['invitation']> = {}, proof = '') => {
    const invitation = await pending(token);
    const signedIn = request.consoleUser ?? ((await loadSignedIn(deps, sessions, request)) ? request.consoleUser : null);
    // Signed out, nothing about the address's account is looked up: the page is the same for all.
    // With the mailed link's proof: the form that finishes joining.
    const proofState = !signedIn && proof ? await checkInvitationProof(deps.pool, token, proof, deps.clock) : 'none';
    const mode = signedIn
      ? signedIn.email.toLowerCase() === invitation.email.toLowerCase()
        ? signedIn.emailVerified
          ? 'join'
          : 'claim'
        : 'other'
      : proofState === 'valid'
        ? 'finish'
        : 'accept';
    if (proofState === 'expired' && !data.problem) data = { ...data, problem: `The link mailed to you has expired (it works for ${INVITATION_PROOF_MINUTES} minutes). Send the form below again for a new one.` };
    reply.header('cache-control', 'no-store');
    return page(request, reply, 'invitation', {
      title: 'Invitation',
      noAddressBanner: true,
      invitation: { ...invitation, kindLabel: invitation.kind === 'workspace' ? 'workspace' : 'publisher account' },
      token,
      mode,
      ...(mode === 'finish' ? { proof } : {}),
      ...(mode === 'claim' && signedIn ? { form: { name: signedIn.name } } : {}),
      ...data,
    });
  };

  app.get('/invitation', async (request, reply) => invitationPage(request, reply, tokenOf(request.query), {}, proofOf(request.query)));

  // Signed in as the invited address: join.
  app.post('/invitation', async (request, reply) => {
    const token = tokenOf(request.body);
    if (!(await loadSignedIn(deps, sessions, request))) return invitationPage(request, reply, token);
    const joined = await acceptInvitation(deps.pool, token, request.consoleUser!.id, deps.clock);
    return reply.redirect(targetHref(joined.kind, joined.id), 303);
  });

  const tooMany = (reply: FastifyReply, retryAfterSeconds: number) => reply.code(429).header('retry-after', String(retryAfterSeconds));

  // Signed out: the one form. Whether an account exists is known only once it is sent, and every
  // answer is limited: as a sign-in while there is a confirmed account; otherwise as a sign-up,
  // answered "Check your email" whatever the fields say, with the mailed link queued (no account
  // is made or claimed here: the invite link proves nothing about the address).
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
    const existing = await findUserByEmail(deps.pool, invitation.email);
    if (existing?.emailVerifiedAt) {
      const user = await verifyCredentials(deps.pool, invitation.email, password);
      if (!user) {
        reply.code(401);
        return invitationPage(request, reply, token, { ...again, problem: WRONG_CREDENTIALS });
      }
      await attempt.forgive();
      const joined = await acceptInvitation(deps.pool, token, user.id, deps.clock);
      await startSession(deps, sessions, request, reply, user.id);
      await recordSignIn(deps.pool, user.id, deps.clock);
      return reply.redirect(targetHref(joined.kind, joined.id), 303);
    }
    // No confirmed account (none, or one never confirmed): the same answer either way, and a mail
    // to the address, counted on the sign-up limit.
    await attempt.forgive();
    const signUp = await takeSignUp(limits, address);
    if (signUp.blocked) {
      tooMany(reply, signUp.blocked.retryAfterSeconds);
      return invitationPage(request, reply, token, { ...again, problem: 'Too many sign-ups from this address. Try again later.' });
    }
    await mailInvitationProof(deps.pool, token, { baseUrl: consoleBaseUrl(deps.config) }, deps.clock);
    reply.header('cache-control', 'no-store');
    return page(request, reply, 'invitation-mailed', { title: 'Check your email', noAddressBanner: true, email: invitation.email, minutes: INVITATION_PROOF_MINUTES });
  });

  // The mailed link's form: its proof shows the address is the sender's, so a name and password
  // make the account, or claim one never confirmed (every session of it ends), and it joins.
  app.post('/invitation/finish', async (request, reply) => {
    const form = (request.body ?? {}) as Form;
    const token = tokenOf(form);
    const proof = proofOf(form);
    await pending(token);
    const attempt = await takeSignUp(limits, `ip:${request.ip}`);
    if (attempt.blocked) {
      tooMany(reply, attempt.blocked.retryAfterSeconds);
      return invitationPage(request, reply, token, { problem: 'Too many attempts from this address. Try again later.' }, proof);
    }
    const name = formText(form, 'name');
    let made: Awaited<ReturnType<typeof joinByMailedLink>>;
    try {
      made = await joinByMailedLink(deps.pool, token, proof, { name, password: formText(form, 'password') }, deps.clock);
    } catch (err) {
      await attempt.forgive();
      if (!(err instanceof DomainError && err.code === 'invalid_input')) throw err;
      reply.code(422);
      return invitationPage(request, reply, token, { form: { name }, errors: (err.details.errors ?? {}) as FieldErrors, problem: 'Check the fields below.' }, proof);
    }
    await startSession(deps, sessions, request, reply, made.user.id);
    await recordSignIn(deps.pool, made.user.id, deps.clock);
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
      claimed = await claimByInvitation(deps.pool, token, { name, password: formText(form, 'password') }, deps.clock);
    } catch (err) {
      await attempt.forgive();
      if (!(err instanceof DomainError && err.code === 'invalid_input')) throw err;
      reply.code(422);
      return invitationPage(request, reply, token, { form: { name }, errors: (err.details.errors ?? {}) as FieldErrors, problem: 'Check the fields below.' });
    }
    await startSession(deps, sessions, request, reply, claimed.user.id);
    await recordSignIn(deps.pool, claimed.user.id, deps.clock);
    return reply.redirect(targetHref(claimed.joined.kind, claimed.joined.id), 303);
  });
}
