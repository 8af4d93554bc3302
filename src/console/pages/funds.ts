import { hash, randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { canonicalJson } from '../../common/canonical-json.js';
import type { TopUpStatus } from '../../common/enums.js';
import { getTopUp, listTopUps, cancelTopUp, type FundsActor, requestTopUp } from '../../domain/billing/top-ups.js';
import { type TopUpView, usd } from '../../domain/billing/top-up-view.js';
import { DomainError, type FieldErrors, forbidden, invalidInput, notFound } from '../../domain/errors.js';
import { valueOf } from '../../domain/idempotency/record-once.js';
import { usdToCents } from '../../domain/money/format.js';
import { parseUserInput } from '../../domain/users/user-input.js';
import { can } from '../../domain/users/permissions.js';
import { topUpRequestForm } from '../../schemas/top-ups.js';
import { type ConsoleDeps, type ConsoleTarget, page, pageNumber, pathId, targetOf } from '../context.js';
import { renderDocument } from '../documents.js';
import { type Form, formText } from '../form.js';
import { when } from '../format.js';

// Adding funds (docs/billing.md): a workspace's top-up requests, "Add funds" for its owners, a
// request's page with its reference and payment instructions, and its printable invoice. Every
// action is the domain's call the API's /api/v1/top-ups makes, with the person instead of a key.

const NOT_AN_OWNER = "Only the workspace's owners can add funds or cancel a top-up.";
const PER_PAGE = 25;

/** A request's status, as a person reads it. */
export const TOP_UP_STATUS_WORDS: Record<TopUpStatus, string> = {
  pending: 'Waiting for your payment',
  confirmed: 'Paid: funds added',
  cancelled: 'Cancelled',
  rejected: 'Rejected',
};

/** Who asked, as a person reads it. */
export const requesterWords = (v: Pick<TopUpView, 'requested_by'>) => (v.requested_by.kind === 'key' ? `API key “${v.requested_by.name}”` : v.requested_by.name);

function workspaceOf(request: FastifyRequest): ConsoleTarget {
  const target = targetOf(request);
  if (target.kind !== 'workspace') throw notFound('Page');
  return target;
}

/** The person adding funds: an owner (`manage_billing`) of this workspace; the domain checks it again in its transaction. */
function ownerOf(request: FastifyRequest): { target: ConsoleTarget; who: FundsActor & { kind: 'person' } } {
  const target = workspaceOf(request);
  if (!can(target.role, 'manage_billing')) throw forbidden(NOT_AN_OWNER);
  return { target, who: { kind: 'person', workspaceId: target.id, userId: request.consoleUser!.id } };
}

export async function fundsPages(app: FastifyInstance, { deps }: { deps: ConsoleDeps }) {
  const billing = deps.billing;
  const { minCents, maxCents } = billing.limits;

  async function fundsPage(request: FastifyRequest, reply: FastifyReply, extras: { status?: number; amount?: string; errors?: FieldErrors; problem?: string } = {}) {
    const target = workspaceOf(request);
    const query = (request.query ?? {}) as Record<string, unknown>;
    const pageNo = pageNumber(query.page);
    const [summary, list] = await Promise.all([deps.workspaces.summary(target.id), listTopUps(deps.pool, target.id, {}, pageNo, PER_PAGE, billing.baseUrl)]);
    const pages = Math.max(1, Math.ceil(list.total / PER_PAGE));
    if (extras.status) reply.code(extras.status);
    return page(request, reply, 'funds', {
      title: 'Funds',
      section: 'funds',
      balance: summary.balance_formatted,
      held: summary.held_formatted,
      mayAdd: can(target.role, 'manage_billing'),
      provider: billing.provider.label,
      limits: `${usd(minCents)} to ${usd(maxCents)}`,
      amount: extras.amount ?? '',
      errors: extras.errors ?? {},
      idempotencyKey: randomUUID(),
      rows: list.items.map((v) => ({
        href: `${target.href}/funds/${v.id}`,
        reference: v.reference,
        status: TOP_UP_STATUS_WORDS[v.status],
        amount: v.amount_formatted,
        received: v.received_formatted ?? '',
        requested: when(v.requested_at),
        by: requesterWords(v),
      })),
      pageNo,
      pages,
      prev: pageNo > 1 ? `${target.href}/funds?page=${pageNo - 1}` : null,
      next: pageNo < pages ? `${target.href}/funds?page=${pageNo + 1}` : null,
      ...(extras.problem ? { problem: extras.problem } : {}),
    });
  }

  app.get('/funds', async (request, reply) => fundsPage(request, reply));

  /** "Add funds": the amount judged as the API judges it, kept once under the form's key (a double click requests once). */
  app.post('/funds', async (request, reply) => {
    const { target, who } = ownerOf(request);
    const form = (request.body ?? {}) as Form;
    let amount = '';
    let created: TopUpView;
    try {
      amount = formText(form, 'amount_usd');
      const { amount_usd } = parseUserInput(topUpRequestForm, { amount_usd: amount });
      const key = formText(form, 'idempotency_key');
      if (!/^[0-9a-f-]{36}$/.test(key)) throw invalidInput({ amount_usd: ['was not sent from the form: open Funds and try again'] });
      const cents = usdToCents(amount_usd);
      const fingerprint = hash('sha256', canonicalJson([target.id, cents]), 'hex');
      created = valueOf(await requestTopUp(billing, who, cents, { once: { book: 'person', userId: who.userId, key, fingerprint } }));
    } catch (err) {
      if (!(err instanceof DomainError)) throw err;
      if (err.code === 'invalid_input') return fundsPage(request, reply, { status: 422, amount, errors: (err.details.errors ?? {}) as FieldErrors, problem: 'No top-up was requested: check the amount below.' });
      if (err.code === 'idempotency_key_reused') return fundsPage(request, reply, { status: 422, amount, problem: 'No top-up was requested: this form was already used for another amount. Try again.' });
      if (err.code === 'conflict') return fundsPage(request, reply, { status: 409, amount, problem: `No top-up was requested. ${err.message}` });
      throw err;
    }
    return reply.redirect(`${target.href}/funds/${created.id}?done=requested`, 303);
  });

  function topUpIdOf(request: FastifyRequest): number {
    return pathId((request.params as { topUpId?: string }).topUpId, 'Top-up');
  }

  async function topUpPage(request: FastifyRequest, reply: FastifyReply, id: number, extras: { status?: number; done?: unknown; problem?: string } = {}) {
    const target = workspaceOf(request);
    const v = await getTopUp(deps.pool, target.id, id, billing.baseUrl);
    const pending = v.status === 'pending';
    if (extras.status) reply.code(extras.status);
    const notice =
      extras.done === 'requested' && pending
        ? `Requested: pay ${v.amount_formatted} with the reference ${v.reference}. The balance grows once the money has arrived.`
        : extras.done === 'cancelled' && v.status === 'cancelled'
          ? 'Cancelled: a payment sent for it now is not added to the balance.'
          : undefined;
    return page(request, reply, 'top-up', {
      title: `Top-up ${v.reference}`,
      section: 'funds',
      back: `${target.href}/funds`,
      base: `${target.href}/funds/${v.id}`,
      topUp: {
        ...v,
        statusWords: TOP_UP_STATUS_WORDS[v.status],
        by: requesterWords(v),
        requested: when(v.requested_at),
        decided: when(v.decided_at),
        differs: v.received_cents !== null && v.received_cents !== v.amount_cents,
      },
      pending,
      mayCancel: pending && can(target.role, 'manage_billing'),
      ...(notice ? { notice } : {}),
      ...(extras.problem ? { problem: extras.problem } : {}),
    });
  }

  app.get('/funds/:topUpId', async (request, reply) => topUpPage(request, reply, topUpIdOf(request), { done: ((request.query ?? {}) as Record<string, unknown>).done }));

  app.post('/funds/:topUpId/cancel', async (request, reply) => {
    const { target, who } = ownerOf(request);
    const id = topUpIdOf(request);
    try {
      valueOf(await cancelTopUp(billing, who, id));
    } catch (err) {
      if (err instanceof DomainError && err.code === 'conflict') {
        return topUpPage(request, reply, id, { status: 409, problem: `Nothing was cancelled: ${err.message.replace(/^Cannot cancel: /, '')} The page shows it as it is now.` });
      }
      throw err;
    }
    return reply.redirect(`${target.href}/funds/${id}?done=cancelled`, 303);
  });

  /** The invoice: a document of its own with a print style sheet (the browser's Print makes the paper or the PDF). */
  app.get('/funds/:topUpId/invoice', async (request, reply) => {
    const target = workspaceOf(request);
    const v = await getTopUp(deps.pool, target.id, topUpIdOf(request), billing.baseUrl);
    const html = await renderDocument('invoice', {
      topUp: v,
      workspace: { id: target.id, name: target.name },
      issued: v.requested_at.slice(0, 10),
      paid: v.status === 'confirmed' ? { amount: v.received_formatted, on: (v.decided_at ?? '').slice(0, 10) } : null,
      void: v.status === 'cancelled' || v.status === 'rejected',
      statusWords: TOP_UP_STATUS_WORDS[v.status],
      provider: billing.provider.label,
      back: `${target.href}/funds/${v.id}`,
    });
    return reply.type('text/html; charset=utf-8').send(html);
  });
}
