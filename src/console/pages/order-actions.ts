import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { z } from 'zod';
import { DomainError, type FieldErrors, forbidden, notFound } from '../../domain/errors.js';
import type { OnceOptions } from '../../domain/idempotency/record-once.js';
import { buyerOrders, type WorkspaceMember } from '../../domain/orders/buyer-actions.js';
import { publisherOrders } from '../../domain/orders/publisher-actions.js';
import { type OrderQuote, quoteApproval, quoteCancel } from '../../domain/orders/quote.js';
import { refuseUnstorableText } from '../../domain/text-input.js';
import { parseUserInput } from '../../domain/users/user-input.js';
import { can, requireSpend } from '../../domain/users/permissions.js';
import { contentBody, declineBody, messageBody, publishBody } from '../../schemas/orders.js';
import { type ConsoleDeps, type ConsoleTarget, page, targetOf } from '../context.js';
import { renderMarkdown } from '../markdown.js';
import { orderIdParam, orderPage } from './orders.js';
import { type Form, formText } from '../form.js';

// The orders desk's actions: each one is the domain call its REST route makes (src/http/v1/orders.ts,
// publisher.ts), with the same zod schema for its fields. Nothing is kept for a retry (a console
// form has no Idempotency-Key): a repeated form meets the order's new state, a 409 shown on the
// order page as it now is.

/** The console keeps no answer: it reads the order again after the action. */
const unkept: OnceOptions = { once: undefined };

/** Why a viewer is refused an action: said on every form of the desk. */
const READ_ONLY = 'Your role can read orders here, not act on them.';

/** The form's fields, judged by the API's own schema for them. */
function parseFields<S extends z.ZodType>(schema: S, values: Record<string, string>): z.output<S> {
  refuseUnstorableText(values, 'form');
  return parseUserInput(schema, values);
}

function requireKind(target: ConsoleTarget, kind: ConsoleTarget['kind']) {
  if (target.kind !== kind) throw notFound('Page');
}

const member = (target: ConsoleTarget, request: FastifyRequest): WorkspaceMember => ({ workspaceId: target.id, userId: request.consoleUser!.id });

interface Action {
  /** Which form on the page this is (to show its errors next to it). */
  form: string;
  values: Record<string, string>;
  /** The notice after success (orders.ts NOTICES). */
  done: string;
  run: (orderId: number) => Promise<unknown>;
}

export async function orderActionPages(app: FastifyInstance, { deps }: { deps: ConsoleDeps }) {
  const actions = { pool: deps.pool, clock: deps.clock, durations: deps.durations };

  /** Runs one action and goes back to the order; the domain's refusals a person can act on are shown there. */
  async function act(request: FastifyRequest, reply: FastifyReply, a: Action) {
    const target = targetOf(request);
    if (!can(target.role, 'manage_orders')) throw forbidden(READ_ONLY);
    const orderId = orderIdParam(request);
    try {
      await a.run(orderId);
    } catch (err) {
      if (!(err instanceof DomainError)) throw err;
      if (err.code === 'conflict') {
        return orderPage(deps, request, reply, orderId, { status: 409, problem: `This order has moved on. ${err.message} The page shows it as it is now.` });
      }
      if (err.code === 'invalid_input') {
        const errors = (err.details.errors ?? {}) as FieldErrors;
        return orderPage(deps, request, reply, orderId, { status: 422, problem: 'Nothing was sent: check the fields below.', failed: { form: a.form, values: a.values, errors } });
      }
      if (err.code === 'rate_limited') {
        const retry = err.details.retry_after;
        if (typeof retry === 'number') reply.header('retry-after', String(retry));
        return orderPage(deps, request, reply, orderId, { status: 429, problem: err.message.replace('the given number of seconds', `${retry} seconds`) });
      }
      throw err;
    }
    return reply.redirect(`${target.href}/orders/${orderId}?done=${a.done}`, 303);
  }

  /** An article form (the buyer's content, the publisher's draft): "Preview" shows it rendered, "Submit" sends it. */
  async function article(request: FastifyRequest, reply: FastifyReply, form: string, done: string, send: (orderId: number, v: { title: string; body: string }) => Promise<unknown>) {
    const body = (request.body ?? {}) as Form;
    const values = { title: formText(body, 'title'), body: formText(body, 'body') };
    if (formText(body, 'intent') === 'preview') {
      const target = targetOf(request);
      if (!can(target.role, 'manage_orders')) throw forbidden(READ_ONLY);
      return orderPage(deps, request, reply, orderIdParam(request), { preview: { form, values, html: renderMarkdown(values.body) } });
    }
    return act(request, reply, { form, values, done, run: async (id) => send(id, parseFields(contentBody, values)) });
  }

  // The publisher's desk.
  const publisherAction = (path: string, handler: (request: FastifyRequest, reply: FastifyReply, publisherId: number) => Promise<unknown>) =>
    app.post(`/orders/:orderId/${path}`, async (request, reply) => {
      const target = targetOf(request);
      requireKind(target, 'publisher');
      return handler(request, reply, target.id);
    });

  publisherAction('accept', (request, reply, pub) =>
    act(request, reply, { form: 'accept', values: {}, done: 'accepted', run: (id) => publisherOrders.accept(actions, pub, id, unkept) }),
  );
  publisherAction('decline', (request, reply, pub) => {
    const values = { reason: formText((request.body ?? {}) as Form, 'reason') };
    return act(request, reply, { form: 'decline', values, done: 'declined', run: (id) => publisherOrders.decline(actions, pub, id, parseFields(declineBody, values).reason, unkept) });
  });
  publisherAction('draft', (request, reply, pub) => article(request, reply, 'draft', 'draft', (id, draft) => publisherOrders.submitDraft(actions, pub, id, draft, unkept)));
  publisherAction('publish', (request, reply, pub) => {
    const values = { live_url: formText((request.body ?? {}) as Form, 'live_url').trim() };
    return act(request, reply, { form: 'publish', values, done: 'published', run: (id) => publisherOrders.publish(actions, pub, id, parseFields(publishBody, values).live_url, unkept) });
  });
  publisherAction('recheck', (request, reply, pub) =>
    act(request, reply, { form: 'recheck', values: {}, done: 'rechecked', run: (id) => deps.linkChecker.recheck(pub, id) }),
  );

  // Messages, from either side.
  app.post('/orders/:orderId/messages', async (request, reply) => {
    const target = targetOf(request);
    const values = { body: formText((request.body ?? {}) as Form, 'body') };
    const send = (id: number, body: string) =>
      target.kind === 'publisher' ? publisherOrders.message(actions, target.id, id, body, unkept) : buyerOrders.message(actions, member(target, request), id, body, unkept);
    return act(request, reply, { form: 'message', values, done: 'message', run: (id) => send(id, parseFields(messageBody, values).body) });
  });

  // The buyer's orders.
  const buyerAction = (path: string, handler: (request: FastifyRequest, reply: FastifyReply, who: WorkspaceMember) => Promise<unknown>) =>
    app.post(`/orders/:orderId/${path}`, async (request, reply) => {
      const target = targetOf(request);
      requireKind(target, 'workspace');
      return handler(request, reply, member(target, request));
    });

  buyerAction('content', (request, reply, who) => article(request, reply, 'content', 'content', (id, content) => buyerOrders.submitContent(actions, who, id, content, unkept)));
  buyerAction('approve-draft', (request, reply, who) =>
    act(request, reply, { form: 'approve-draft', values: {}, done: 'draft-approved', run: (id) => buyerOrders.approveDraft(actions, who, id, unkept) }),
  );
  buyerAction('approve', (request, reply, who) => {
    requireSpend(targetOf(request).role, 'approvePlacement');
    return act(request, reply, { form: 'approve', values: {}, done: 'approved', run: (id) => buyerOrders.approve(actions, who, id, unkept) });
  });
  buyerAction('cancel', (request, reply, who) =>
    act(request, reply, { form: 'cancel', values: {}, done: 'cancelled', run: (id) => buyerOrders.cancel(actions, who, id, unkept) }),
  );

  // The confirmation pages of the two actions that move money: the domain's quote of what
  // happens (src/domain/orders/quote.ts, as MCP's approve-placement answers it), then one button.
  const confirmPage = (path: 'approve' | 'cancel') =>
    app.get(`/orders/:orderId/${path}`, async (request, reply) => {
      const target = targetOf(request);
      requireKind(target, 'workspace');
      const orderId = orderIdParam(request);
      const approve = path === 'approve';
      if (approve) requireSpend(target.role, 'approvePlacement');
      else if (!can(target.role, 'manage_orders')) throw forbidden(READ_ONLY);
      const quoteOf = approve ? quoteApproval : quoteCancel;
      let quote: OrderQuote;
      try {
        quote = await quoteOf({ db: deps.pool, workspaces: deps.workspaces }, member(target, request), orderId, deps.clock.now());
      } catch (err) {
        if (!(err instanceof DomainError && err.code === 'conflict')) throw err;
        return orderPage(deps, request, reply, orderId, { status: 409, problem: `This order has moved on. ${err.message} The page shows it as it is now.` });
      }
      const { order } = quote;
      const base = `${target.href}/orders/${order.id}`;
      return page(request, reply, 'order-confirm', {
        title: approve ? `Approve order ${order.id}` : `Cancel order ${order.id}`,
        section: 'orders',
        heading: approve ? `Approve the placement on ${order.outlet.name}?` : `Cancel order ${order.id}?`,
        lines: approve
          ? [
              `The article is live at ${order.live_url}. Approving completes the order and pays the publisher; it cannot be undone.`,
              'The price was held for this order when it was placed, so your available balance does not change.',
            ]
          : ['The publisher has not started: the order is cancelled and its price returns to your available balance. This cannot be undone.'],
        figures: [
          { label: approve ? 'Price' : 'Refund', value: quote.total.formatted },
          { label: 'Available balance now', value: quote.balance.formatted },
          { label: 'Available balance after', value: quote.balanceAfter.formatted },
          ...(approve ? [{ label: 'Held for orders after', value: quote.heldAfter.formatted }] : []),
        ],
        action: `${base}/${path}`,
        button: approve ? 'Approve and pay' : 'Cancel order',
        danger: !approve,
        back: base,
      });
    });
  confirmPage('approve');
  confirmPage('cancel');
}
