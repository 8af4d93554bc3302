import { hash, randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { canonicalJson } from '../../common/canonical-json.js';
import { adjustBalance } from '../../domain/billing/adjustments.js';
import { confirmTopUp, rejectTopUp } from '../../domain/billing/confirm.js';
import { findAccounts, opsPublisher, opsTopUp, opsWorkspace, pendingTopUps, staffActions } from '../../domain/billing/operations.js';
import type { OpsTopUpView } from '../../domain/billing/top-up-view.js';
import { DomainError, type FieldErrors, invalidInput, notFound } from '../../domain/errors.js';
import { valueOf } from '../../domain/idempotency/record-once.js';
import { usdToCents } from '../../domain/money/format.js';
import { parseUserInput } from '../../domain/users/user-input.js';
import type { Staff } from '../../domain/users/staff.js';
import { adjustmentForm, confirmTopUpForm, rejectTopUpForm } from '../../schemas/top-ups.js';
import { batchPayouts, makePayoutBatch, markBatchSent, markPayoutFailed, markPayoutSent, opsPayout, payoutBatchFile, pendingPayouts } from '../../domain/billing/payout-decide.js';
import type { OpsPayoutView } from '../../domain/billing/payout-view.js';
import { payoutFailedForm, payoutSentForm } from '../../schemas/payouts.js';
import { PAYOUT_STATUS_WORDS } from './payouts.js';
import { type ConsoleDeps, page, pathId } from '../context.js';
import { type Form, formText } from '../form.js';
import { TOP_UP_STATUS_WORDS, requesterWords } from './funds.js';
import { when } from '../format.js';

// The operations console (docs/billing.md), /app/ops: the operator's staff confirm top-ups,
// find workspaces and publishers with their balances, and adjust a balance with a reason. Anyone
// else gets 404 for every page here, as for a page that does not exist; each action checks again,
// in its own transaction, that the person is staff now. Nothing here shows a key, a member or an
// order: staff run the money and are no members of the workspaces they look at.

const ACTION_WORDS = { confirmed: 'Confirmed a top-up', rejected: 'Rejected a top-up', adjusted: 'Adjusted the balance', sent: 'Sent a payout', failed: 'Marked a payout failed' } as const;

const staffOf = (request: FastifyRequest): Staff => ({ userId: request.consoleUser!.id });

/** A request as a row of the staff's tables. */
const topUpRow = (v: OpsTopUpView) => ({
  href: `/app/ops/top-ups/${v.id}`,
  reference: v.reference,
  status: TOP_UP_STATUS_WORDS[v.status],
  workspace: v.workspace.name,
  workspaceHref: `/app/ops/workspaces/${v.workspace.id}`,
  amount: v.amount_formatted,
  received: v.received_formatted ?? '',
  requested: when(v.requested_at),
  by: requesterWords(v),
  decidedBy: v.decided_by ? `${v.decided_by.name}, ${when(v.decided_at)}` : '',
});

/** A payout as a row of the staff's tables. */
const payoutRow = (v: OpsPayoutView) => ({
  href: `/app/ops/payouts/${v.id}`,
  reference: v.reference,
  status: PAYOUT_STATUS_WORDS[v.status],
  publisher: v.publisher.name,
  publisherHref: `/app/ops/publishers/${v.publisher.id}`,
  amount: v.amount_formatted,
  destination: v.destination,
  requested: when(v.requested_at),
  batch: v.batch_reference,
  batchHref: v.batch_reference ? `/app/ops/payout-batches/${v.batch_reference}` : null,
  decidedBy: v.decided_by ? `${v.decided_by.name}, ${when(v.decided_at)}` : '',
});

/** Field errors and what the page says of them, from a refusal of the form's fields. */
const fieldsOf = (err: DomainError) => (err.details.errors ?? {}) as FieldErrors;

export async function opsPages(app: FastifyInstance, { deps }: { deps: ConsoleDeps }) {
  const billing = deps.billing;

  // Staff only: anyone else is told there is no such page, before any form token is looked at.
  app.addHook('onRequest', async (request) => {
    if (!request.consoleUser?.staff) throw notFound('Page');
  });

  app.get('/', async (request, reply) => {
    const q = ((request.query ?? {}) as Record<string, unknown>).q;
    const text = typeof q === 'string' ? q.trim().slice(0, 200) : '';
    const [queue, actions, found, payouts] = await Promise.all([
      pendingTopUps(deps.pool, billing.baseUrl),
      staffActions(deps.pool),
      findAccounts(deps.pool, text, billing.baseUrl),
      pendingPayouts(deps.pool),
    ]);
    return page(request, reply, 'ops', {
      title: 'Operations',
      section: 'ops',
      q: text,
      searched: text !== '',
      found: {
        workspaces: found.workspaces.map((w) => ({ ...w, href: `/app/ops/workspaces/${w.id}` })),
        publishers: found.publishers.map((p) => ({ ...p, href: `/app/ops/publishers/${p.id}` })),
        topUp: found.topUp ? topUpRow(found.topUp) : null,
      },
      queue: queue.map(topUpRow),
      payouts: payouts.map(payoutRow),
      unbatched: payouts.some((p) => p.batch_reference === null),
      actions: actions.map((a) => ({
        at: when(a.at),
        who: a.staff.name,
        what: ACTION_WORDS[a.action],
        workspace: a.workspace ? a.workspace.name : (a.publisher?.name ?? ''),
        workspaceHref: a.workspace ? `/app/ops/workspaces/${a.workspace.id}` : `/app/ops/publishers/${a.publisher?.id ?? ''}`,
        amount: a.amount_formatted,
        topUp: a.top_up
          ? { reference: a.top_up.reference, href: `/app/ops/top-ups/${a.top_up.id}` }
          : a.payout
            ? { reference: a.payout.reference, href: `/app/ops/payouts/${a.payout.id}` }
            : null,
        reason: a.reason ?? '',
      })),
    });
  });

  const topUpId = (request: FastifyRequest) => pathId((request.params as { id?: string }).id, 'Top-up');

  async function topUpPage(request: FastifyRequest, reply: FastifyReply, id: number, extras: { status?: number; done?: unknown; problem?: string; errors?: FieldErrors; received?: string; reason?: string } = {}) {
    const v = await opsTopUp(deps.pool, id, billing.baseUrl);
    const pending = v.status === 'pending';
    if (extras.status) reply.code(extras.status);
    const notice =
      extras.done === 'confirmed' && v.status === 'confirmed'
        ? `Confirmed: ${v.received_formatted} added to ${v.workspace.name}'s available balance.`
        : extras.done === 'rejected' && v.status === 'rejected'
          ? 'Rejected: the workspace sees the reason.'
          : undefined;
    return page(request, reply, 'ops-top-up', {
      title: `Top-up ${v.reference}`,
      section: 'ops',
      topUp: { ...topUpRow(v), instructions: v.instructions, ledgerTransaction: v.ledger_transaction_id, rejectReason: v.reject_reason },
      base: `/app/ops/top-ups/${v.id}`,
      pending,
      // The amount asked, as the form's starting value: staff change it when a different amount arrived.
      received: extras.received ?? (v.amount_cents / 100).toFixed(2),
      reason: extras.reason ?? '',
      errors: extras.errors ?? {},
      ...(notice ? { notice } : {}),
      ...(extras.problem ? { problem: extras.problem } : {}),
    });
  }

  app.get('/top-ups/:id', async (request, reply) => topUpPage(request, reply, topUpId(request), { done: ((request.query ?? {}) as Record<string, unknown>).done }));

  /** A decision met a request decided meanwhile (another staff member pressed first): said on its page as it now is. */
  const movedOn = (request: FastifyRequest, reply: FastifyReply, id: number, err: DomainError) =>
    topUpPage(request, reply, id, { status: 409, problem: `Nothing was done: ${err.message.replace(/^Cannot \w+: /, '')} The page shows it as it is now.` });

  app.post('/top-ups/:id/confirm', async (request, reply) => {
    const id = topUpId(request);
    const form = (request.body ?? {}) as Form;
    let received = '';
    try {
      received = formText(form, 'received_usd');
      const { received_usd } = parseUserInput(confirmTopUpForm, { received_usd: received });
      await confirmTopUp(billing, staffOf(request), id, usdToCents(received_usd));
    } catch (err) {
      if (!(err instanceof DomainError)) throw err;
      if (err.code === 'conflict') return movedOn(request, reply, id, err);
      if (err.code === 'invalid_input') return topUpPage(request, reply, id, { status: 422, received, errors: fieldsOf(err), problem: 'Nothing was confirmed: check the amount below.' });
      throw err;
    }
    return reply.redirect(`/app/ops/top-ups/${id}?done=confirmed`, 303);
  });

  app.post('/top-ups/:id/reject', async (request, reply) => {
    const id = topUpId(request);
    const form = (request.body ?? {}) as Form;
    let reason = '';
    try {
      reason = formText(form, 'reason');
      parseUserInput(rejectTopUpForm, { reason });
      await rejectTopUp(billing, staffOf(request), id, reason);
    } catch (err) {
      if (!(err instanceof DomainError)) throw err;
      if (err.code === 'conflict') return movedOn(request, reply, id, err);
      if (err.code === 'invalid_input') return topUpPage(request, reply, id, { status: 422, reason, errors: fieldsOf(err), problem: 'Nothing was rejected: give the reason below.' });
      throw err;
    }
    return reply.redirect(`/app/ops/top-ups/${id}?done=rejected`, 303);
  });

  const workspaceId = (request: FastifyRequest) => pathId((request.params as { id?: string }).id, 'Workspace');

  async function workspacePage(request: FastifyRequest, reply: FastifyReply, id: number, extras: { status?: number; done?: unknown; problem?: string; errors?: FieldErrors; form?: Record<string, string> } = {}) {
    const w = await opsWorkspace(deps.pool, id, billing.baseUrl);
    if (extras.status) reply.code(extras.status);
    return page(request, reply, 'ops-workspace', {
      title: `Workspace ${w.workspace.name}`,
      section: 'ops',
      workspace: w.workspace,
      base: `/app/ops/workspaces/${id}`,
      topUps: w.topUps.map(topUpRow),
      adjustments: w.adjustments.map((a) => ({ ...a, at: when(a.created_at) })),
      form: extras.form ?? { direction: 'credit', amount_usd: '', reason: '' },
      errors: extras.errors ?? {},
      idempotencyKey: randomUUID(),
      ...(extras.done === 'adjusted' ? { notice: `Adjusted: the available balance is now ${w.workspace.available_formatted}.` } : {}),
      ...(extras.problem ? { problem: extras.problem } : {}),
    });
  }

  app.get('/workspaces/:id', async (request, reply) => workspacePage(request, reply, workspaceId(request), { done: ((request.query ?? {}) as Record<string, unknown>).done }));

  /** An adjustment: which way, how much and why, kept once under the form's key (a double click adjusts once). */
  app.post('/workspaces/:id/adjust', async (request, reply) => {
    const id = workspaceId(request);
    const body = (request.body ?? {}) as Form;
    const form = { direction: '', amount_usd: '', reason: '' };
    try {
      for (const name of Object.keys(form) as (keyof typeof form)[]) form[name] = formText(body, name);
      const parsed = parseUserInput(adjustmentForm, form);
      const key = formText(body, 'idempotency_key');
      if (!/^[0-9a-f-]{36}$/.test(key)) throw invalidInput({ amount_usd: ['was not sent from the form: open the workspace and try again'] });
      const cents = (parsed.direction === 'debit' ? -1 : 1) * usdToCents(parsed.amount_usd);
      const staff = staffOf(request);
      const fingerprint = hash('sha256', canonicalJson([id, cents, parsed.reason]), 'hex');
      valueOf(await adjustBalance(billing, staff, id, cents, parsed.reason, { once: { book: 'person', userId: staff.userId, key, fingerprint } }));
    } catch (err) {
      if (!(err instanceof DomainError)) throw err;
      if (err.code === 'invalid_input') return workspacePage(request, reply, id, { status: 422, form, errors: fieldsOf(err), problem: 'The balance was not adjusted: check the fields below.' });
      if (err.code === 'idempotency_key_reused') return workspacePage(request, reply, id, { status: 422, form, problem: 'The balance was not adjusted: this form was already used for another adjustment. Try again.' });
      throw err;
    }
    return reply.redirect(`/app/ops/workspaces/${id}?done=adjusted`, 303);
  });

  app.get('/publishers/:id', async (request, reply) => {
    const p = await opsPublisher(deps.pool, pathId((request.params as { id?: string }).id, 'Publisher'));
    return page(request, reply, 'ops-publisher', { title: `Publisher ${p.name}`, section: 'ops', publisher: p });
  });

  // ---- Payouts (docs/billing.md, "Payouts") ----------------------------------------------------

  const payoutId = (request: FastifyRequest) => pathId((request.params as { id?: string }).id, 'Payout');

  async function payoutPage(request: FastifyRequest, reply: FastifyReply, id: number, extras: { status?: number; done?: unknown; problem?: string; errors?: FieldErrors; form?: Record<string, string> } = {}) {
    const v = await opsPayout(deps.pool, id);
    if (extras.status) reply.code(extras.status);
    const notice =
      extras.done === 'sent' && v.status === 'sent'
        ? `Marked sent: ${v.publisher.name} is told, with the bank's reference.`
        : extras.done === 'failed' && v.status === 'failed'
          ? `Marked failed: ${v.amount_formatted} is back in ${v.publisher.name}'s payable balance.`
          : undefined;
    return page(request, reply, 'ops-payout', {
      title: `Payout ${v.reference}`,
      section: 'ops',
      payout: { ...payoutRow(v), sentReference: v.sent_reference, failureReason: v.failure_reason, ledgerTransaction: v.ledger_transaction_id, decidedLedgerTransaction: v.decided_ledger_transaction_id },
      base: `/app/ops/payouts/${v.id}`,
      pending: v.status === 'pending',
      form: extras.form ?? { bank_reference: '', reason: '' },
      errors: extras.errors ?? {},
      ...(notice ? { notice } : {}),
      ...(extras.problem ? { problem: extras.problem } : {}),
    });
  }

  app.get('/payouts/:id', async (request, reply) => payoutPage(request, reply, payoutId(request), { done: ((request.query ?? {}) as Record<string, unknown>).done }));

  const payoutMovedOn = (request: FastifyRequest, reply: FastifyReply, id: number, err: DomainError) =>
    payoutPage(request, reply, id, { status: 409, problem: `Nothing was done: ${err.message.replace(/^Cannot [^:]+: /, '')} The page shows it as it is now.` });

  app.post('/payouts/:id/sent', async (request, reply) => {
    const id = payoutId(request);
    const form = { bank_reference: '', reason: '' };
    try {
      form.bank_reference = formText((request.body ?? {}) as Form, 'bank_reference');
      parseUserInput(payoutSentForm, { bank_reference: form.bank_reference });
      await markPayoutSent(billing, staffOf(request), id, form.bank_reference);
    } catch (err) {
      if (!(err instanceof DomainError)) throw err;
      if (err.code === 'conflict') return payoutMovedOn(request, reply, id, err);
      if (err.code === 'invalid_input') return payoutPage(request, reply, id, { status: 422, form, errors: fieldsOf(err), problem: "Nothing was marked: give the bank's reference." });
      throw err;
    }
    return reply.redirect(`/app/ops/payouts/${id}?done=sent`, 303);
  });

  app.post('/payouts/:id/failed', async (request, reply) => {
    const id = payoutId(request);
    const form = { bank_reference: '', reason: '' };
    try {
      form.reason = formText((request.body ?? {}) as Form, 'reason');
      parseUserInput(payoutFailedForm, { reason: form.reason });
      await markPayoutFailed(billing, staffOf(request), id, form.reason);
    } catch (err) {
      if (!(err instanceof DomainError)) throw err;
      if (err.code === 'conflict') return payoutMovedOn(request, reply, id, err);
      if (err.code === 'invalid_input') return payoutPage(request, reply, id, { status: 422, form, errors: fieldsOf(err), problem: 'Nothing was marked: give the reason.' });
      throw err;
    }
    return reply.redirect(`/app/ops/payouts/${id}?done=failed`, 303);
  });

  /** Every pending payout not in a batch yet, gathered into one for the bank's file. */
  app.post('/payout-batches', async (request, reply) => {
    const batch = await makePayoutBatch(billing, staffOf(request));
    return reply.redirect(batch ? `/app/ops/payout-batches/${batch}` : '/app/ops', 303);
  });

  const batchOf = (request: FastifyRequest) => {
    const ref = (request.params as { batch?: string }).batch ?? '';
    if (!/^PB-[2-9A-Z]{4}-[2-9A-Z]{4}$/.test(ref)) throw notFound('Batch');
    return ref;
  };

  async function batchPage(request: FastifyRequest, reply: FastifyReply, batch: string, extras: { status?: number; done?: unknown; problem?: string; errors?: FieldErrors; bankReference?: string } = {}) {
    const rows = await batchPayouts(deps.pool, batch);
    if (extras.status) reply.code(extras.status);
    const pending = rows.filter((r) => r.status === 'pending');
    return page(request, reply, 'ops-payout-batch', {
      title: `Batch ${batch}`,
      section: 'ops',
      batch,
      base: `/app/ops/payout-batches/${batch}`,
      rows: rows.map(payoutRow),
      pendingCount: pending.length,
      bankReference: extras.bankReference ?? '',
      errors: extras.errors ?? {},
      ...(extras.done === 'sent' ? { notice: 'Marked sent: each publisher is told.' } : {}),
      ...(extras.problem ? { problem: extras.problem } : {}),
    });
  }

  app.get('/payout-batches/:batch', async (request, reply) => batchPage(request, reply, batchOf(request), { done: ((request.query ?? {}) as Record<string, unknown>).done }));

  /** The bank's file of the batch's payouts still pending: the details opened for the bank, never cached, never logged. */
  app.get('/payout-batches/:batch/file', async (request, reply) => {
    const file = await payoutBatchFile(billing, staffOf(request), batchOf(request));
    return reply
      .header('content-type', file.contentType)
      .header('content-disposition', `attachment; filename="${file.filename}"`)
      .header('cache-control', 'no-store')
      .send(file.body);
  });

  app.post('/payout-batches/:batch/sent', async (request, reply) => {
    const batch = batchOf(request);
    let bankRef = '';
    try {
      bankRef = formText((request.body ?? {}) as Form, 'bank_reference');
      parseUserInput(payoutSentForm, { bank_reference: bankRef });
      await markBatchSent(billing, staffOf(request), batch, bankRef);
    } catch (err) {
      if (!(err instanceof DomainError)) throw err;
      if (err.code === 'conflict') return batchPage(request, reply, batch, { status: 409, problem: `Nothing was marked: ${err.message.replace(/^Cannot [^:]+: /, '')}` });
      if (err.code === 'invalid_input') return batchPage(request, reply, batch, { status: 422, bankReference: bankRef, errors: fieldsOf(err), problem: "Nothing was marked: give the bank's reference." });
      throw err;
    }
    return reply.redirect(`/app/ops/payout-batches/${batch}?done=sent`, 303);
  });
}
