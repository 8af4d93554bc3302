import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { consoleBaseUrl } from '../../config.js';
import { DomainError, type FieldErrors, notFound } from '../../domain/errors.js';
import type { SessionStore } from '../../domain/sessions/session-store.js';
import {
  confirmAddress,
  describeLink,
  linkExpired,
  linkUsed,
  requestPasswordReset,
  resendAddressConfirmation,
  resetPassword,
} from '../../domain/users/address-links.js';
import { ADDRESS_LINK_HOURS, RESET_LINK_MINUTES } from '../../domain/users/user-mails.js';
import { recordSignIn, verifyCredentials } from '../../domain/users/user-service.js';
import { type ConsoleDeps, page } from '../context.js';
import type { ViewName, Views } from '../view-models.js';
import { type Form, formText } from '../form.js';
import { CHECK_EMAIL, loadSignedIn, startSession } from '../session.js';
import { type AuthLimits, takeSignInAttempt, tooMany, WRONG_CREDENTIALS } from './auth.js';

// The pages of the links mailed to a person (docs/mail.md): "Check your email" (what an
// unconfirmed person sees instead of the console), the address confirmation, "Forgot password?"
// and the new password. Opening a link (GET) changes nothing: mail scanners open every link they
// see; a button (POST) acts. The token travels in the query string of its page (redacted from the
// request log) and in form fields, never in a redirect.

const tokenOf = (source: unknown) => {
  const t = (source as { token?: unknown } | undefined)?.token;
  return typeof t === 'string' && t.length > 0 && t.length <= 200 ? t : '';
};

export async function accountLinkPages(app: FastifyInstance, { deps, sessions, limits }: { deps: ConsoleDeps; sessions: SessionStore; limits: AuthLimits }) {
  const site = { baseUrl: consoleBaseUrl(deps.config) };
  const required = deps.config.EMAIL_VERIFICATION === 'required';

  /** A page a link leads to is a secret's page: no cache keeps it. */
  const linkPage = <V extends ViewName>(request: FastifyRequest, reply: FastifyReply, view: V, data: Views[V]) => {
    reply.header('cache-control', 'no-store');
    return page(request, reply, view, data);
  };

  // --- Check your email -------------------------------------------------------------------------

  const checkEmailPage = (request: FastifyRequest, reply: FastifyReply, data: Partial<Views['check-email']> = {}) => {
    // Nothing else while the console waits for the address: no switcher of workspaces either.
    if (required) request.consoleTargets = [];
    return page(request, reply, 'check-email', { title: 'Check your email', required, hours: ADDRESS_LINK_HOURS, noAddressBanner: true, ...data });
  };

  app.get('/check-email', async (request, reply) => {
    if (!(await loadSignedIn(deps, sessions, request))) return reply.redirect('/app/sign-in', 303);
    if (request.consoleUser!.emailVerified) return reply.redirect('/app', 303);
    const sent = (request.query as { sent?: unknown }).sent === '1';
    return checkEmailPage(request, reply, sent ? { notice: `Sent again to ${request.consoleUser!.email}.` } : {});
  });

  // "Send again": a new link, a few an hour per person (each is a mail to that address).
  app.post('/check-email', async (request, reply) => {
    if (!(await loadSignedIn(deps, sessions, request))) return reply.redirect('/app/sign-in', 303);
    const user = request.consoleUser!;
    if (user.emailVerified) return reply.redirect('/app', 303);
    const key = `user:${user.id}`;
    const state = await limits.resends.fail(key);
    if (state.blocked) {
      await limits.resends.forgive(key);
      return checkEmailPage(request, reply, { problem: tooMany(reply, state) });
    }
    await resendAddressConfirmation(deps.pool, user.id, site, deps.clock);
    return reply.redirect(`${CHECK_EMAIL}?sent=1`, 303);
  });

  // --- The address confirmation -----------------------------------------------------------------

  /**
   * The link's page: who is signed in decides what it offers. The account's own session: one
   * button. No session: that account's password first (counted like a sign-in), so a person who
   * gets a confirmation for an account someone else made with their address cannot confirm it.
   */
  const verifyPage = async (request: FastifyRequest, reply: FastifyReply, token: string, data: Partial<Views['verify-email']> = {}) => {
    const link = await describeLink(deps.pool, 'verify_email', token, deps.clock);
    if (!link) throw notFound('Link');
    const signedIn = request.consoleUser ?? ((await loadSignedIn(deps, sessions, request)) ? request.consoleUser : null);
    // A link used already, opened again by its confirmed owner: nothing left to do.
    if (link.state === 'used' && signedIn?.id === link.userId && signedIn.emailVerified) return reply.redirect('/app', 303);
    if (link.state === 'used') throw linkUsed();
    if (link.state === 'expired') throw linkExpired('verify_email');
    if (required && signedIn) request.consoleTargets = [];
    return linkPage(request, reply, 'verify-email', {
      title: 'Confirm your email address',
      noAddressBanner: true,
      token,
      email: link.email,
      mode: signedIn ? (signedIn.id === link.userId ? 'confirm' : 'other') : 'sign-in',
      ...data,
    });
  };

  app.get('/verify-email', async (request, reply) => verifyPage(request, reply, tokenOf(request.query)));

  app.post('/verify-email', async (request, reply) => {
    const token = tokenOf(request.body);
    if (!(await loadSignedIn(deps, sessions, request))) return verifyPage(request, reply, token);
    await confirmAddress(deps.pool, token, request.consoleUser!.id, deps.clock);
    return reply.redirect('/app', 303);
  });

  app.post('/verify-email/sign-in', async (request, reply) => {
    const form = (request.body ?? {}) as Form;
    const token = tokenOf(form);
    const link = await describeLink(deps.pool, 'verify_email', token, deps.clock);
    if (!link) throw notFound('Link');
    const attempt = await takeSignInAttempt(limits, `account:${link.email.toLowerCase()}`, `ip:${request.ip}`);
    if (attempt.blocked) return verifyPage(request, reply, token, { problem: tooMany(reply, attempt.blocked) });
    const user = await verifyCredentials(deps.pool, link.email, formText(form, 'password'));
    if (!user || user.id !== link.userId) {
      reply.code(401);
      return verifyPage(request, reply, token, { problem: WRONG_CREDENTIALS });
    }
    await attempt.forgive();
    await confirmAddress(deps.pool, token, user.id, deps.clock);
    await startSession(deps, sessions, request, reply, user.id);
    await recordSignIn(deps.pool, user.id, deps.clock);
    return reply.redirect('/app', 303);
  });

  // --- Forgot password ----------------------------------------------------------------------------

  const forgotPage = (request: FastifyRequest, reply: FastifyReply, data: Partial<Views['forgot-password']> = {}) =>
    page(request, reply, 'forgot-password', { title: 'Forgot password', minutes: RESET_LINK_MINUTES, ...data });

  app.get('/forgot-password', async (request, reply) => forgotPage(request, reply));

  /**
   * The same answer whether the address has an account or not (only a known one gets a mail).
   * Each request counts on the sign-in limiter, per address asked for and per client, and is
   * never given back: it is what bounds the mails one client can make us send to one inbox, and
   * how many addresses it can ask about.
   */
  app.post('/forgot-password', async (request, reply) => {
    const email = formText((request.body ?? {}) as Form, 'email');
    const attempt = await takeSignInAttempt(limits, `account:${email.trim().toLowerCase()}`, `ip:${request.ip}`);
    if (attempt.blocked) return forgotPage(request, reply, { form: { email }, problem: tooMany(reply, attempt.blocked) });
    try {
      await requestPasswordReset(deps.pool, email, site, deps.clock);
    } catch (err) {
      if (!(err instanceof DomainError && err.code === 'invalid_input')) throw err;
      reply.code(422);
      return forgotPage(request, reply, { form: { email }, errors: (err.details.errors ?? {}) as FieldErrors, problem: 'Check the field below.' });
    }
    return forgotPage(request, reply, { sent: email.trim() });
  });

  // --- A new password -----------------------------------------------------------------------------

  const resetPage = async (request: FastifyRequest, reply: FastifyReply, token: string, data: Partial<Views['reset-password']> = {}) => {
    const link = await describeLink(deps.pool, 'reset_password', token, deps.clock);
    if (!link) throw notFound('Link');
    if (link.state === 'used') throw linkUsed();
    if (link.state === 'expired') throw linkExpired('reset_password');
    return linkPage(request, reply, 'reset-password', { title: 'Set a new password', token, email: link.email, ...data });
  };

  app.get('/reset-password', async (request, reply) => resetPage(request, reply, tokenOf(request.query)));

  // Every session of the person ends with the old password; this browser starts a new one.
  app.post('/reset-password', async (request, reply) => {
    const form = (request.body ?? {}) as Form;
    const token = tokenOf(form);
    let done: Awaited<ReturnType<typeof resetPassword>>;
    try {
      done = await resetPassword(deps.pool, token, formText(form, 'password'), deps.clock);
    } catch (err) {
      if (!(err instanceof DomainError && err.code === 'invalid_input')) throw err;
      reply.code(422);
      return resetPage(request, reply, token, { errors: (err.details.errors ?? {}) as FieldErrors, problem: 'Check the field below.' });
    }
    await startSession(deps, sessions, request, reply, done.userId);
    await recordSignIn(deps.pool, done.userId, deps.clock);
    return reply.redirect('/app', 303);
  });
}
