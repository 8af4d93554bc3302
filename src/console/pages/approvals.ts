import { hash, randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { canonicalJson } from '../../common/canonical-json.js';
import { type ApprovalStatus, approvalStatuses } from '../../common/enums.js';
import { consoleBaseUrl } from '../../config.js';
import { getApproval, listApprovals } from '../../domain/approvals/approval-read.js';
import type { ApprovalRequestView } from '../../domain/approvals/approval-view.js';
import type { ApprovalDeps } from '../../domain/approvals/ask.js';
import { approvalRequests, MAX_DECLINE_REASON } from '../../domain/approvals/decide.js';
import { DomainError, type FieldErrors, invalidInput, notFound } from '../../domain/errors.js';
import { valueOf } from '../../domain/idempotency/record-once.js';
import { formatCents } from '../../domain/money/format.js';
import type { WorkspaceMember } from '../../domain/orders/buyer-actor.js';
import { quoteMoney } from '../../domain/orders/quote.js';
import { refuseUnstorableText } from '../../domain/text-input.js';
import { can, requireSpend } from '../../domain/users/permissions.js';
import { type ConsoleDeps, type ConsoleTarget, page, pageNumber, pathId, targetOf } from '../context.js';
import { type Form, formText } from '../form.js';
import { moment } from '../format.js';

// Approval requests (an agent's key that needs a person before it spends): the list, and a
// request's page, which is itself the confirmation: what is bought, who asked, the price and the
// balance now and after, "Approve" and "Decline". Each decision is the domain's
// `approvalRequests.approve` / `.decline`, which places the orders through the same placement
// the API uses. Nothing here is a rule of its own: the domain checks the role, the workspace and
// the request's status again inside its transaction.

const PER_PAGE = 25;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** A request's status, as a person reads it. */
export const APPROVAL_STATUS_WORDS: Record<ApprovalStatus, string> = {
  pending: 'Waiting for a decision',
  approved: 'Approved',
  declined: 'Declined',
  expired: 'Expired',
  cancelled: 'Withdrawn by a key',
  failed: 'Failed',
};

/** Who asked: the key, or the app connected through OAuth, with its name. */
export const askedBy = (v: ApprovalRequestView) => (v.requested_by.kind === 'oauth_app' ? `Connected app “${v.requested_by.key_name}”` : `API key “${v.requested_by.key_name}”`);

/** The outlets a request buys on, each named once. */
export const outletsOf = (v: ApprovalRequestView) => [...new Set(v.items.map((i) => i.outlet.name))].join(', ');

/** When a request ends or ended: its expiry while pending, its decision after. */
function endOf(v: ApprovalRequestView, now: number) {
  if (v.status === 'pending') return { label: 'Expires', at: moment(v.expires_at, now) };
  if (v.status === 'expired') return { label: 'Expired', at: moment(v.expires_at, now) };
  return v.decided_at ? { label: APPROVAL_STATUS_WORDS[v.status], at: moment(v.decided_at, now) } : { label: '', at: moment(null, now) };
}

/** One row of a table of requests (the list, the overview). */
export function approvalRow(target: ConsoleTarget, v: ApprovalRequestView, now: number) {
  return {
    id: v.id,
    href: `${target.href}/approvals/${v.id}`,
    status: APPROVAL_STATUS_WORDS[v.status],
    what: outletsOf(v),
    action: v.action === 'place_orders' ? 'Place an order' : 'Approve a placement',
    total: v.total_formatted,
    askedBy: askedBy(v),
    end: endOf(v, now),
    expires: moment(v.expires_at, now),
  };
}

/** The approvals' deps: the console's own handles, and its address for the requests' `approve_url`. */
const approvalDepsOf = (deps: ConsoleDeps): ApprovalDeps => ({ pool: deps.pool, clock: deps.clock, durations: deps.durations, baseUrl: consoleBaseUrl(deps.config) });

function workspaceOf(request: FastifyRequest): ConsoleTarget {
  const target = targetOf(request);
  if (target.kind !== 'workspace') throw notFound('Page');
  return target;
}

/** A request id from the path; anything else is a request that does not exist. */
function requestIdParam(request: FastifyRequest): number {
  return pathId((request.params as { requestId: string }).requestId, 'Approval request');
}

/** What the page says after a decision (the form redirects here with ?done=…), when the request is in the state it announces. */
function noticeOf(done: unknown, v: ApprovalRequestView): string | undefined {
  if (done === 'approved' && v.status === 'approved') {
    return v.action === 'place_orders'
      ? 'Approved: the orders below are placed, as the key that asked would have placed them.'
      : 'Approved: the publisher is paid and the order is completed.';
  }
  if (done === 'declined' && v.status === 'declined') return 'Declined: the agent that asked can read your decision.';
  // A failed approval says its failure instead (the page's problem).
  return undefined;
}

export interface RequestPageExtras {
  status?: number;
  /** The decision just made (`?done=`): its notice, if the request is in that state. */
  done?: unknown;
  problem?: string;
  /** What was typed in the decline form, and what is wrong with it. */
  reason?: string;
  errors?: FieldErrors;
}

export async function approvalPages(app: FastifyInstance, { deps }: { deps: ConsoleDeps }) {
  const approvals = approvalDepsOf(deps);
  const at = () => ({ now: deps.clock.now(), baseUrl: approvals.baseUrl });

  app.get('/approvals', async (request, reply) => {
    const target = workspaceOf(request);
    const query = (request.query ?? {}) as Record<string, unknown>;
    const status = approvalStatuses.find((s) => s === query.status);
    const pageNo = pageNumber(query.page);
    const when = at();
    const { items, total } = await listApprovals(deps.pool, target.id, { status }, pageNo, PER_PAGE, when);
    const pages = Math.max(1, Math.ceil(total / PER_PAGE));
    const link = (n: number) => `${target.href}/approvals?${status ? `status=${status}&` : ''}page=${n}`;
    return page(request, reply, 'approvals', {
      title: 'Approval requests',
      section: 'approvals',
      statuses: approvalStatuses.map((s) => ({ value: s, label: APPROVAL_STATUS_WORDS[s], selected: s === status })),
      status: status ?? '',
      rows: items.map((v) => approvalRow(target, v, when.now)),
      total,
      pageNo,
      pages,
      prev: pageNo > 1 ? link(pageNo - 1) : null,
      next: pageNo < pages ? link(pageNo + 1) : null,
      maySpend: can(target.role, 'spend'),
    });
  });

  /** A request's page: everything the decision needs, and its two forms for a person who may decide a pending one. */
  async function requestPage(request: FastifyRequest, reply: FastifyReply, id: number, extras: RequestPageExtras = {}) {
    const target = workspaceOf(request);
    const { now } = at();
    const [v, summary, settings] = await Promise.all([
      getApproval(deps.pool, target.id, id, { now, baseUrl: approvals.baseUrl }),
      deps.workspaces.summary(target.id),
      deps.workspaces.settings.get(target.id),
    ]);
    const fmt = (c: number) => formatCents(c, settings.currency, settings.perUsd);
    const pending = v.status === 'pending';
    const placing = v.action === 'place_orders';
    // Placing holds the total from the available balance; a live placement's price was held
    // when it was placed, so paying it leaves the available balance as it is.
    const money = quoteMoney(v.total_cents, summary, placing ? 'hold' : 'release', fmt);
    const base = `${target.href}/approvals/${v.id}`;
    if (extras.status) reply.code(extras.status);
    const notice = noticeOf(extras.done, v);
    return page(request, reply, 'approval', {
      title: `Approval request ${v.id}`,
      section: 'approvals',
      heading: pending ? (placing ? `Approve an order on ${outletsOf(v)}?` : `Approve the placement on ${outletsOf(v)}?`) : `Approval request ${v.id}: ${outletsOf(v)}`,
      back: `${target.href}/approvals`,
      base,
      request: {
        ...v,
        statusWords: APPROVAL_STATUS_WORDS[v.status],
        actionWords: placing ? 'Place an order' : 'Approve a live placement (pays the publisher)',
        askedBy: askedBy(v),
        requested: moment(v.requested_at, now),
        expires: moment(v.expires_at, now),
        decided: moment(v.decided_at, now),
        items: v.items.map((i) => ({
          ...i,
          formatWords: i.format.replace(/_/g, ' '),
          orderHref: i.order_id === null ? null : `${target.href}/orders/${i.order_id}`,
        })),
        orders: v.order_ids.map((o) => ({ id: o, href: `${target.href}/orders/${o}` })),
      },
      pending,
      placing,
      figures: pending
        ? [
            { label: 'Total', value: v.total_formatted },
            { label: 'Available balance now', value: summary.balance_formatted },
            { label: 'Available balance after', value: money.balanceAfter.formatted },
            ...(money.shortfall.cents > 0 ? [{ label: 'Short by', value: money.shortfall.formatted }] : []),
          ]
        : [{ label: 'Total', value: v.total_formatted }],
      short: pending && money.shortfall.cents > 0,
      mayDecide: pending && can(target.role, 'spend'),
      // Each form's idempotency key (sent twice, a decision is made once).
      approveKey: randomUUID(),
      declineKey: randomUUID(),
      reason: extras.reason ?? '',
      reasonErrors: extras.errors?.reason ?? [],
      maxReason: MAX_DECLINE_REASON,
      ...(notice ? { notice } : {}),
      ...(extras.problem ? { problem: extras.problem } : v.status === 'failed' && v.failure ? { problem: `Approving failed, so nothing was placed or paid: ${v.failure.message}` } : {}),
    });
  }

  app.get('/approvals/:requestId', async (request, reply) => {
    const done = ((request.query ?? {}) as Record<string, unknown>).done;
    return requestPage(request, reply, requestIdParam(request), { done });
  });

  /** The person who decides: an owner (`spend`) of this workspace; the domain checks it again in its transaction. */
  function deciderOf(request: FastifyRequest): { target: ConsoleTarget; who: WorkspaceMember } {
    const target = workspaceOf(request);
    requireSpend(target.role, 'decide');
    return { target, who: { workspaceId: target.id, userId: request.consoleUser!.id } };
  }

  /** A refusal of the domain's a person can act on, said on the request's page as it now is. */
  async function refused(request: FastifyRequest, reply: FastifyReply, id: number, err: unknown, reason: string) {
    if (!(err instanceof DomainError)) throw err;
    if (err.code === 'conflict') {
      const status = err.details.status as ApprovalStatus | undefined;
      const words = status && status in APPROVAL_STATUS_WORDS ? APPROVAL_STATUS_WORDS[status].toLowerCase() : 'decided';
      return requestPage(request, reply, id, { status: 409, problem: `Nothing was done: this request is no longer waiting for a decision, it is ${words}. The page shows it as it is now.` });
    }
    if (err.code === 'insufficient_balance') {
      return requestPage(request, reply, id, { status: 402, problem: `Nothing was placed. ${err.message} The request is still waiting: approve it once the balance is topped up, or decline it.`, reason });
    }
    if (err.code === 'invalid_input') {
      const errors = (err.details.errors ?? {}) as FieldErrors;
      const problem = errors.reason ? 'Nothing was declined: check the reason below.' : 'Nothing was done: the form was incomplete. Review the request and decide again.';
      return requestPage(request, reply, id, { status: 422, problem, reason, errors });
    }
    if (err.code === 'idempotency_key_reused') {
      return requestPage(request, reply, id, { status: 422, problem: 'Nothing was done: this form was already used for another decision. Review the request and decide again.', reason });
    }
    throw err;
  }

  /** Approve or decline: the domain's call, kept once under the form's idempotency key, then the request's page. */
  const decision = (what: 'approve' | 'decline') =>
    app.post(`/approvals/:requestId/${what}`, async (request, reply) => {
      const { target, who } = deciderOf(request);
      const id = requestIdParam(request);
      const form = (request.body ?? {}) as Form;
      let reason = '';
      try {
        reason = what === 'decline' ? formText(form, 'reason') : '';
        refuseUnstorableText({ reason }, 'form');
        const key = formText(form, 'idempotency_key');
        if (!UUID.test(key)) throw invalidInput({ idempotency_key: ['is missing: review the request and decide again'] });
        const fingerprint = hash('sha256', canonicalJson([target.id, id, what, reason]), 'hex');
        // Only a success is kept (no `keeps`): a refusal (the balance) may succeed when sent again.
        const once = { once: { book: 'person' as const, userId: who.userId, key, fingerprint } };
        valueOf(what === 'approve' ? await approvalRequests.approve(approvals, who, id, once) : await approvalRequests.decline(approvals, who, id, reason, once));
      } catch (err) {
        return refused(request, reply, id, err, reason);
      }
      return reply.redirect(`${target.href}/approvals/${id}?done=${what === 'approve' ? 'approved' : 'declined'}`, 303);
    });
  decision('approve');
  decision('decline');
}
