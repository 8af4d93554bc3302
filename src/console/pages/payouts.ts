import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { PayoutStatus } from '../../common/enums.js';
import { NOT_A_PAYOUT_OWNER, type PayoutActor } from '../../domain/billing/payout-actor.js';
import { getDestination, setDestination } from '../../domain/billing/payout-details.js';
import { getPayout, listPayouts, payoutBalances, requestPayout } from '../../domain/billing/payouts.js';
import { DomainError, type FieldErrors, forbidden, invalidInput, notFound } from '../../domain/errors.js';
import { valueOf } from '../../domain/idempotency/record-once.js';
import { can } from '../../domain/users/permissions.js';
import { parseUserInput } from '../../domain/users/user-input.js';
import { payoutDestinationForm } from '../../schemas/payouts.js';
import { type ConsoleDeps, type ConsoleTarget, page, pathId, targetOf } from '../context.js';
import { type Form, formText } from '../form.js';
import { when } from '../format.js';

// Payouts (docs/billing.md): a publisher's payable balance paid out. Its owners say where to be
// paid (sealed at rest, shown masked) and ask for a payout of the whole payable balance; everyone
// of the publisher sees the payouts and what became of them. Every action is the domain's call,
// which checks the role again in its transaction. The details typed here are never logged.

const PER_PAGE = 25;

/** A payout's status, as a person reads it. */
export const PAYOUT_STATUS_WORDS: Record<PayoutStatus, string> = {
  pending: 'Requested: waiting to be sent',
  sent: 'Sent',
  failed: 'Failed: the money is back in payable',
};

function publisherOf(request: FastifyRequest): ConsoleTarget {
  const target = targetOf(request);
  if (target.kind !== 'publisher') throw notFound('Page');
  return target;
}

function ownerOf(request: FastifyRequest): { target: ConsoleTarget; who: PayoutActor } {
  const target = publisherOf(request);
  if (!can(target.role, 'manage_billing')) throw forbidden(NOT_A_PAYOUT_OWNER);
  return { target, who: { publisherId: target.id, userId: request.consoleUser!.id } };
}

const EMPTY_FORM = { method: 'bank', holder: '', iban: '', account_number: '', routing_number: '', paypal_email: '' };

export async function payoutPages(app: FastifyInstance, { deps }: { deps: ConsoleDeps }) {
  const billing = deps.billing;

  async function payoutsPage(
    request: FastifyRequest,
    reply: FastifyReply,
    extras: { status?: number; errors?: FieldErrors; problem?: string; notice?: string; form?: Record<string, string>; editing?: boolean } = {},
  ) {
    const target = publisherOf(request);
    const query = (request.query ?? {}) as Record<string, unknown>;
    const pageNo = typeof query.page === 'string' && /^[1-9][0-9]{0,5}$/.test(query.page) ? Number(query.page) : 1;
    const [balances, destination, list] = await Promise.all([
      payoutBalances(deps.pool, target.id, billing.payoutMinCents),
      getDestination(deps.pool, target.id),
      listPayouts(deps.pool, target.id, {}, pageNo, PER_PAGE),
    ]);
    const pages = Math.max(1, Math.ceil(list.total / PER_PAGE));
    if (extras.status) reply.code(extras.status);
    const mayManage = can(target.role, 'manage_billing');
    const notice = extras.notice ?? (query.done === 'details' ? 'Saved: payouts from now on go there.' : undefined);
    return page(request, reply, 'payouts', {
      title: 'Payouts',
      section: 'payouts',
      balances,
      destination: destination ? { ...destination, updated: when(destination.updated_at) } : null,
      mayManage,
      mayRequest: mayManage && destination !== null && balances.payable >= balances.minimum_cents,
      editing: extras.editing ?? destination === null,
      form: extras.form ?? EMPTY_FORM,
      errors: extras.errors ?? {},
      idempotencyKey: randomUUID(),
      rows: list.items.map((v) => ({
        href: `${target.href}/payouts/${v.id}`,
        reference: v.reference,
        status: PAYOUT_STATUS_WORDS[v.status],
        amount: v.amount_formatted,
        destination: v.destination,
        requested: when(v.requested_at),
      })),
      pageNo,
      pages,
      prev: pageNo > 1 ? `${target.href}/payouts?page=${pageNo - 1}` : null,
      next: pageNo < pages ? `${target.href}/payouts?page=${pageNo + 1}` : null,
      ...(notice ? { notice } : {}),
      ...(extras.problem ? { problem: extras.problem } : {}),
    });
  }

  app.get('/payouts', async (request, reply) => payoutsPage(request, reply));

  /** "Where we pay you": the details judged by the schema, sealed by the domain; the form is shown again without them on a refusal of another field. */
  app.post('/payouts/destination', async (request, reply) => {
    const { target, who } = ownerOf(request);
    const body = (request.body ?? {}) as Form;
    const form: Record<string, string> = { ...EMPTY_FORM };
    try {
      for (const name of Object.keys(EMPTY_FORM)) form[name] = formText(body, name);
      const details = parseUserInput(payoutDestinationForm, form);
      await setDestination(billing, who, details);
    } catch (err) {
      if (err instanceof DomainError && err.code === 'invalid_input') {
        return payoutsPage(request, reply, { status: 422, form, editing: true, errors: (err.details.errors ?? {}) as FieldErrors, problem: 'Nothing was saved: check the fields below.' });
      }
      throw err;
    }
    return reply.redirect(`${target.href}/payouts?done=details`, 303);
  });

  /** "Request payout": the whole payable balance, kept once under the form's key (a double click asks once). */
  app.post('/payouts', async (request, reply) => {
    const { target, who } = ownerOf(request);
    const form = (request.body ?? {}) as Form;
    let id: number;
    try {
      const key = formText(form, 'idempotency_key');
      if (!/^[0-9a-f-]{36}$/.test(key)) throw invalidInput({ idempotency_key: ['was not sent from the form: open Payouts and try again'] });
      id = valueOf(await requestPayout(billing, who, { once: { book: 'person', userId: who.userId, key, fingerprint: `payout:${target.id}` } })).id;
    } catch (err) {
      if (err instanceof DomainError && (err.code === 'conflict' || err.code === 'invalid_input')) {
        return payoutsPage(request, reply, { status: err.code === 'conflict' ? 409 : 422, problem: `No payout was requested. ${err.message}` });
      }
      throw err;
    }
    return reply.redirect(`${target.href}/payouts/${id}?done=requested`, 303);
  });

  app.get('/payouts/:payoutId', async (request, reply) => {
    const target = publisherOf(request);
    const v = await getPayout(deps.pool, target.id, pathId((request.params as { payoutId?: string }).payoutId, 'Payout'));
    const done = ((request.query ?? {}) as Record<string, unknown>).done;
    return page(request, reply, 'payout', {
      title: `Payout ${v.reference}`,
      section: 'payouts',
      back: `${target.href}/payouts`,
      payout: { ...v, statusWords: PAYOUT_STATUS_WORDS[v.status], requested: when(v.requested_at), decided: when(v.decided_at) },
      ...(done === 'requested' && v.status === 'pending' ? { notice: `Requested: ${v.amount_formatted} is held for this payout until the operator sends it.` } : {}),
    });
  });
}
