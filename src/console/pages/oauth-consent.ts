import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { DomainError, type FieldErrors, notFound } from '../../domain/errors.js';
import { claimAnswer, mayGrant, recordGrant, releaseAnswer } from '../../domain/oauth/grants.js';
import type { ConsentRequest } from '../../domain/oauth/interactions.js';
import { can } from '../../domain/users/permissions.js';
import { MAX_LIMIT_USD, optionalUsdLimit } from '../../schemas/key-budget.js';
import { pathIdText } from '../../schemas/outlets.js';
import { type ConsoleDeps, page } from '../context.js';
import type { Views } from '../view-models.js';
import { type Form, NOT_SENT_ONCE } from '../form.js';

const MAX_EXPIRY_DAYS = 3650;

const usdLimit = optionalUsdLimit(`must be empty or an amount of US dollars from 0 to ${MAX_LIMIT_USD.toLocaleString('en-US')} (such as 200 or 12.50)`);

/** The consent form: which workspace, whether the app may spend (and only with a person's approval), its budget and expiry. */
const consentForm = z.object({
  workspace_id: z.string().transform((v, ctx) => {
    const id = pathIdText.safeParse(v);
    if (id.success) return id.data;
    ctx.addIssue({ code: 'custom', message: 'must be one of your workspaces' });
    return z.NEVER;
  }),
  can_place_orders: z.string().optional().transform((v) => v === '1'),
  // A checkbox: sent ticked, absent unticked (the page ticks it for an app that asks to spend).
  needs_approval: z.string().optional().transform((v) => v === '1'),
  order_limit_usd: usdLimit.default(null),
  daily_limit_usd: usdLimit.default(null),
  monthly_limit_usd: usdLimit.default(null),
  expires_in_days: z
    .string()
    .trim()
    .refine((v) => v === '' || (/^[1-9][0-9]*$/.test(v) && Number(v) <= MAX_EXPIRY_DAYS), { message: `must be empty or a whole number of days from 1 to ${MAX_EXPIRY_DAYS}` })
    .transform((v) => (v === '' ? null : Number(v)))
    .default(null),
});

/**
 * The consent page's content security policy: the console's, with `form-action` also allowing
 * the validated redirect URI's origin, since Chromium applies form-action to the redirects that
 * follow a form (Allow and Deny both end at the client's redirect URI).
 */
function allowFormActionTo(reply: FastifyReply, target: string) {
  const csp = reply.getHeader('content-security-policy');
  if (typeof csp !== 'string') return;
  const source = /^[a-z][a-z0-9+.-]*:$/i.test(target) || /^https?:\/\/[^\s;,'"]+$/i.test(target) ? target : null;
  if (source) reply.header('content-security-policy', csp.replace("form-action 'self'", `form-action 'self' ${source}`));
}

/**
 * The OAuth login and consent pages (docs/oauth.md), at /app/oauth/:uid behind the console's
 * sign-in: the person signs in to the console as always, then sees which app asks, picks the
 * workspace it acts for and, as an owner, whether it may place orders and within which budget.
 */
export async function oauthConsentPages(app: FastifyInstance, { deps }: { deps: ConsoleDeps }) {
  const oauth = deps.oauth;
  if (!oauth) return;

  /** Workspaces this person may connect an app to (members and owners; a viewer may not). */
  const eligible = (request: FastifyRequest) =>
    request.consoleTargets.filter((t) => t.kind === 'workspace' && can(t.role, 'manage_read_only_keys'));

  const uidOf = (request: FastifyRequest) => {
    const uid = (request.params as { uid: string }).uid;
    if (!/^[A-Za-z0-9_-]{1,64}$/.test(uid)) throw notFound('Sign-in request');
    return uid;
  };

  const consentPage = (request: FastifyRequest, reply: FastifyReply, consent: ConsentRequest, data: Partial<Views['oauth-consent']> = {}) => {
    allowFormActionTo(reply, consent.redirectTarget);
    const workspaces = eligible(request);
    const owner = workspaces.some((w) => can(w.role, 'manage_spending_keys'));
    return page(request, reply, 'oauth-consent', {
      title: `Connect ${consent.clientName}`,
      consent,
      workspaces,
      showSpending: consent.wantsSpend && owner,
      action: `/app/oauth/${consent.uid}`,
      // An app that asks to spend starts with each spend waiting for a person: letting it spend
      // alone is the choice to make, not the default.
      form: { workspace_id: String(workspaces[0]?.id ?? ''), needs_approval: consent.wantsSpend },
      ...data,
    });
  };

  app.get('/oauth/:uid', async (request, reply) => {
    const consent = await oauth.consentRequest(request.raw, reply.raw, uidOf(request));
    return consentPage(request, reply, consent);
  });

  app.post('/oauth/:uid', async (request, reply) => {
    const uid = uidOf(request);
    const consent = await oauth.consentRequest(request.raw, reply.raw, uid);
    const body = (request.body ?? {}) as Form;
    // A request is answered once (docs/oauth.md): a second Allow or Deny changes nothing and leads
    // on as the first did, to the client with the first answer.
    const answered = () => reply.redirect(consent.returnTo, 303);
    if (body.decision === 'deny') {
      if (!(await claimAnswer(deps.pool, uid))) return answered();
      return reply.redirect(await oauth.deny(request.raw, reply.raw, uid), 303);
    }
    if (body.decision !== 'allow') throw new DomainError('invalid_input', 'Choose Allow or Deny.');
    const user = request.consoleUser!;
    const again = { form: Object.fromEntries(Object.entries(body).filter(([k]) => k !== '_csrf')) };
    const refuse = (errors: FieldErrors, problem: string) => {
      reply.code(422);
      return consentPage(request, reply, consent, { ...again, errors, problem });
    };
    // A field sent twice (or as a JSON number) is refused, not read as empty: an empty limit means
    // "no limit", so reading it as empty would lift the budget the person meant to set.
    const errors: FieldErrors = {};
    const fields: Record<string, string> = {};
    for (const name of Object.keys(consentForm.shape)) {
      const value = body[name];
      if (value === undefined) continue;
      if (typeof value === 'string') fields[name] = value;
      else errors[name] = [NOT_SENT_ONCE];
    }
    const parsed = consentForm.safeParse(fields);
    // A field refused above is not also told it is missing.
    if (!parsed.success) for (const issue of parsed.error.issues) if (!(String(issue.path[0]) in errors)) (errors[String(issue.path[0])] ??= []).push(issue.message);
    if (!parsed.success || Object.keys(errors).length > 0) return refuse(errors, 'Nothing was allowed yet: check the fields below.');
    const form = parsed.data;
    const spend = form.can_place_orders && consent.wantsSpend;
    if (!eligible(request).some((w) => w.id === form.workspace_id)) return refuse({ workspace_id: ['must be one of your workspaces'] }, 'Choose a workspace you may connect apps to.');
    if (spend && !(await mayGrant(deps.pool, user.id, form.workspace_id, true))) {
      return refuse({ can_place_orders: ['is for owners of the workspace'] }, 'Only an owner of this workspace may let an app place orders.');
    }
    // Letting an app spend is making a spending key: a confirmed address first (docs/mail.md).
    if (spend && !user.emailVerified) {
      return refuse({ can_place_orders: ['needs your email address confirmed first'] }, 'Confirm your email address before letting an app place orders.');
    }
    const limits = spend ? { orderLimitCents: form.order_limit_usd, dailyLimitCents: form.daily_limit_usd, monthlyLimitCents: form.monthly_limit_usd } : {};
    const expiresAt = form.expires_in_days === null ? null : new Date(deps.clock.now() + form.expires_in_days * 86_400_000);
    if (!(await claimAnswer(deps.pool, uid))) return answered();
    let grantId: string;
    try {
      grantId = await oauth.saveGrant(request.raw, reply.raw, uid, user.id, spend);
      await recordGrant(
        deps.pool,
        {
          grantId,
          clientId: consent.clientId,
          clientName: consent.clientName,
          userId: user.id,
          workspaceId: form.workspace_id,
          canPlaceOrders: spend,
          // Only an app that may spend has spending to wait for.
          needsApproval: spend && form.needs_approval,
          limits,
          expiresAt,
        },
        deps.clock,
      );
    } catch (err) {
      await releaseAnswer(deps.pool, uid);
      throw err;
    }
    return reply.redirect(await oauth.finish(request.raw, reply.raw, uid, user.id, grantId), 303);
  });
}
