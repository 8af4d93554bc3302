import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { signUp } from '../../domain/accounts/sign-up.js';
import { DomainError, type FieldErrors } from '../../domain/errors.js';
import type { FailureLimiter, LimitState } from '../../domain/limits/failure-limiter.js';
import type { SessionStore } from '../../domain/sessions/session-store.js';
import { recordSignIn, verifyCredentials } from '../../domain/users/user-service.js';
import { consoleBaseUrl } from '../../config.js';
import { type ConsoleDeps, page } from '../context.js';
import type { Views } from '../view-models.js';
import { CHECK_EMAIL, endSession, loadSignedIn, mustConfirmFirst, startSession } from '../session.js';
import { type Form, formText } from '../form.js';

export const WRONG_CREDENTIALS = 'Email or password is wrong.';

export interface AuthLimits {
  /** Wrong passwords per account (the email, lower case) from one client address: beyond, that address is refused. */
  perAccountAddress: FailureLimiter;
  /** Wrong passwords per client address, over all accounts: beyond, that address is refused. */
  perAddress: FailureLimiter;
  /** Wrong passwords per account from all addresses: beyond, the account is slowed, never locked. */
  perAccount: FailureLimiter;
  /** The slowed account's turns: one attempt per window, the window growing with its failures. */
  accountTurns: FailureLimiter;
  /** The longest wait between a slowed account's attempts. */
  maxWaitSeconds: number;
  /** Sign-ups per client address. */
  signUps: FailureLimiter;
  /** "Send again" of the address confirmation, per person. */
  resends: FailureLimiter;
}

const NEXT_BASE = 'http://console.invalid';

/**
 * Where to go after signing in: only a console path of this site. The path is resolved first as
 * the browser will resolve it (dot segments, also percent-encoded, and backslashes), so
 * `/app/../../evil` cannot pass as a console path and then land on `/evil`.
 */
function safeNext(next: string): string {
  if (!next.startsWith('/') || next.startsWith('//') || next.startsWith('/\\')) return '/app';
  let url: URL;
  try {
    url = new URL(next, NEXT_BASE);
  } catch {
    return '/app';
  }
  if (url.origin !== NEXT_BASE || !(url.pathname === '/app' || url.pathname.startsWith('/app/'))) return '/app';
  const resolved = url.pathname + url.search;
  return /^\/app(\/[A-Za-z0-9/_\-.]*)?(\?[A-Za-z0-9=&_\-%.]*)?$/.test(resolved) ? resolved : '/app';
}

function minutes(seconds: number) {
  const m = Math.ceil(seconds / 60);
  return m <= 1 ? 'a minute' : `${m} minutes`;
}

/** Why an attempt was refused: its address is over a limit, or the account is slowed and this is not its turn. */
export interface Refusal extends LimitState {
  slowed: boolean;
}

/**
 * One sign-in attempt, counted before the password is checked, so wrong passwords sent at once
 * cannot all pass a check made before any of them is counted. A refused attempt and a right
 * password are given back (`forgive`): only wrong passwords count.
 *
 * An address over its limit, for this account or over all of them, is refused until the window
 * ends (the right password too, so guessing cannot be told from knowing). The account as a whole
 * is never locked: many addresses would otherwise lock anyone out with wrong passwords (every
 * person behind a proxy shares one address without TRUST_PROXY). Over its limit it is slowed
 * instead: one attempt per wait, from whatever address, the wait doubling with each further
 * wrong password up to `maxWaitSeconds`; an attempt before its turn is refused with the wait, and
 * the right password signs in once its turn comes (docs/console.md).
 */
export async function takeSignInAttempt(limits: AuthLimits, account: string, address: string) {
  const pairKey = `${account}|${address}`;
  const [pair, fromAddress, onAccount] = await Promise.all([
    limits.perAccountAddress.fail(pairKey),
    limits.perAddress.fail(address),
    limits.perAccount.fail(account),
  ]);
  const forgive = async () => {
    await Promise.all([limits.perAccountAddress.forgive(pairKey), limits.perAddress.forgive(address), limits.perAccount.forgive(account)]);
  };
  const hard = [pair, fromAddress].filter((s) => s.blocked).sort((a, b) => b.retryAfterSeconds - a.retryAfterSeconds)[0];
  if (hard) {
    await forgive();
    return { blocked: { ...hard, slowed: false } as Refusal, forgive };
  }
  if (onAccount.blocked) {
    const over = onAccount.count - limits.perAccount.points;
    const wait = Math.min(limits.maxWaitSeconds, 2 ** Math.min(over - 1, 30));
    const turn = await limits.accountTurns.fail(account, wait);
    if (turn.blocked) {
      await Promise.all([forgive(), limits.accountTurns.forgive(account)]);
      return { blocked: { ...turn, slowed: true } as Refusal, forgive };
    }
  }
  return { blocked: undefined, forgive };
}

/**
 * One sign-up, counted per address before the account is made, for the same reason as
 * `takeSignInAttempt`: sign-ups sent at once must not all pass a check made before any of them is
 * counted. Sign-ups and "already taken" answers count; a refused attempt and a form refused for
 * its fields are given back (`forgive`).
 */
export async function takeSignUp(limits: AuthLimits, address: string) {
  const state = await limits.signUps.fail(address);
  const forgive = () => limits.signUps.forgive(address);
  if (state.blocked) await forgive();
  return { blocked: state.blocked ? state : undefined, forgive };
}

export function tooMany(reply: FastifyReply, state: LimitState | Refusal) {
  reply.code(429).header('retry-after', String(state.retryAfterSeconds));
  if ('slowed' in state && state.slowed) return slowedMessage(state.retryAfterSeconds);
  return `Too many attempts. Try again in ${minutes(state.retryAfterSeconds)}.`;
}

/** An account slowed by wrong passwords: said without telling whether it exists (unknown emails are slowed alike). */
export function slowedMessage(seconds: number) {
  return `Too many wrong passwords for this email lately, so its sign-ins are slowed down: try again in ${seconds === 1 ? 'a second' : `${seconds} seconds`}.`;
}

export async function authPages(app: FastifyInstance, { deps, sessions, limits }: { deps: ConsoleDeps; sessions: SessionStore; limits: AuthLimits }) {
  const signupOpen = deps.config.SIGNUP === 'open';

  const signInPage = (request: FastifyRequest, reply: FastifyReply, data: Partial<Views['sign-in']> = {}) =>
    page(request, reply, 'sign-in', { title: 'Sign in', signupOpen, next: '', ...data });

  app.get('/', async (request, reply) => {
    if (!(await loadSignedIn(deps, sessions, request))) return reply.redirect('/app/sign-in', 303);
    if (mustConfirmFirst(deps, request)) return reply.redirect(CHECK_EMAIL, 303);
    const first = request.consoleTargets[0];
    if (first) return reply.redirect(first.href, 303);
    return page(request, reply, 'no-target', { title: 'Welcome' });
  });

  app.get('/sign-in', async (request, reply) => {
    const next = safeNext(String((request.query as { next?: unknown }).next ?? '/app'));
    return signInPage(request, reply, { next: next === '/app' ? '' : next });
  });

  app.post('/sign-in', async (request, reply) => {
    const form = (request.body ?? {}) as Form;
    const email = formText(form, 'email');
    const password = formText(form, 'password');
    const next = safeNext(formText(form, 'next') || '/app');
    const account = `account:${email.trim().toLowerCase()}`;
    const address = `ip:${request.ip}`;
    const again = { form: { email }, next: next === '/app' ? '' : next };
    const attempt = await takeSignInAttempt(limits, account, address);
    if (attempt.blocked) return signInPage(request, reply, { ...again, problem: tooMany(reply, attempt.blocked) });
    const user = await verifyCredentials(deps.pool, email, password);
    if (!user) {
      reply.code(401);
      return signInPage(request, reply, { ...again, problem: WRONG_CREDENTIALS });
    }
    await attempt.forgive();
    await startSession(deps, sessions, request, reply, user.id);
    await recordSignIn(deps.pool, user.id, deps.clock);
    return reply.redirect(next, 303);
  });

  app.post('/sign-out', async (request, reply) => {
    await endSession(deps, sessions, request, reply);
    return reply.redirect('/app/sign-in', 303);
  });

  const signUpPage = (request: FastifyRequest, reply: FastifyReply, data: Partial<Views['sign-up']> = {}) =>
    page(request, reply, 'sign-up', { title: 'Sign up', ...data });

  app.get('/sign-up', async (request, reply) => {
    if (!signupOpen) throw new DomainError('not_found', 'Sign-up is closed here: accounts are added by an operator or by invitation.');
    return signUpPage(request, reply);
  });

  app.post('/sign-up', async (request, reply) => {
    if (!signupOpen) throw new DomainError('not_found', 'Sign-up is closed here: accounts are added by an operator or by invitation.');
    const form = (request.body ?? {}) as Form;
    const input = { name: formText(form, 'name'), email: formText(form, 'email'), password: formText(form, 'password') };
    const again = { form: { name: input.name, email: input.email } };
    const address = `ip:${request.ip}`;
    const attempt = await takeSignUp(limits, address);
    if (attempt.blocked) return signUpPage(request, reply, { ...again, problem: tooMany(reply, attempt.blocked) });
    let created: Awaited<ReturnType<typeof signUp>>;
    try {
      created = await signUp(deps.pool, input, { baseUrl: consoleBaseUrl(deps.config) }, deps.clock);
    } catch (err) {
      // "Already taken" tells that an account exists: such answers count like sign-ups, so the
      // form cannot be used without limit to learn which emails have an account.
      if (!(err instanceof DomainError && err.code === 'conflict')) await attempt.forgive();
      if (err instanceof DomainError && (err.code === 'invalid_input' || err.code === 'conflict')) {
        reply.code(422);
        return signUpPage(request, reply, { ...again, errors: (err.details.errors ?? {}) as FieldErrors, problem: err.message });
      }
      throw err;
    }
    await startSession(deps, sessions, request, reply, created.user.id);
    await recordSignIn(deps.pool, created.user.id, deps.clock);
    // The address is not confirmed yet: with EMAIL_VERIFICATION=required the console waits for the link.
    return reply.redirect(deps.config.EMAIL_VERIFICATION === 'required' ? CHECK_EMAIL : `/app/w/${created.workspaceId}`, 303);
  });
}
