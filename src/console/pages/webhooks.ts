import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DomainError, type FieldErrors, forbidden, notFound } from '../../domain/errors.js';
import { type EventOwner, type EventType, eventTypes, receivableEventTypes } from '../../domain/events/event-types.js';
import { outboundPolicyFor } from '../../domain/orders/configured-checker.js';
import { can } from '../../domain/users/permissions.js';
import { addEndpoint, deleteEndpoint, listDeliveries, listEndpoints, resendDelivery, rotateSecret } from '../../domain/webhooks/endpoints.js';
import { type ConsoleDeps, type ConsoleTarget, page, pageNumber, pathId, targetOf } from '../context.js';
import type { Views } from '../view-models.js';
import { type Form, formText } from '../form.js';
import { moment } from '../format.js';
import { eventWords } from '../words.js';

// Settings → Webhooks: the same domain functions as /api/v1/webhook-endpoints and the CLI's
// `webhook` commands (create, list, delete, rotate the secret, the delivery log, resend). Owners
// change them; everyone else sees them. A secret is on one page only, sent with no-store.

const PER_PAGE = 25;

const ownerOf = (t: ConsoleTarget): EventOwner => (t.kind === 'workspace' ? { party: 'buyer', workspaceId: t.id } : { party: 'publisher', publisherId: t.id });

function idParam(request: FastifyRequest, name: 'endpointId' | 'deliveryId'): number {
  return pathId((request.params as Record<string, string>)[name], name === 'endpointId' ? 'Webhook endpoint' : 'Delivery');
}

/** The form's fields by the names its labels give them, for the banner that says what failed. */
const FIELD_LABELS: Record<string, string> = { url: 'Endpoint URL', events: 'Events' };

/** The banner of a refused endpoint: each failing field by its label and what is wrong with it, as the key form names its fields. */
function refusal(err: DomainError): string {
  const errors = (err.details.errors ?? {}) as FieldErrors;
  const named = Object.entries(errors).map(([field, messages]) => `${FIELD_LABELS[field] ?? field} ${messages.join('; ')}`);
  return `The endpoint was not created: ${named.length ? `${named.join('. ')}.` : err.message}`;
}

/** The checked event types of the form; none means every type. */
function chosenEvents(form: Form): EventType[] | undefined {
  const raw = form.events;
  const list = (Array.isArray(raw) ? raw : raw === undefined ? [] : [raw]).filter((v): v is string => typeof v === 'string');
  const known = list.filter((v): v is EventType => (eventTypes as readonly string[]).includes(v));
  return known.length ? [...new Set(known)] : undefined;
}

export async function webhookPages(app: FastifyInstance, { deps }: { deps: ConsoleDeps }) {
  const policy = outboundPolicyFor(deps.config);
  const base = (t: ConsoleTarget) => `${t.href}/settings/webhooks`;
  const mustManage = (t: ConsoleTarget) => {
    if (!can(t.role, 'manage_webhooks')) throw forbidden('Only an owner can change webhooks.');
  };
  /** The endpoint, if it is this target's (another tenant's is not found). */
  const endpointOf = async (request: FastifyRequest) => {
    const target = targetOf(request);
    const id = idParam(request, 'endpointId');
    const endpoint = (await listEndpoints(deps.pool, ownerOf(target))).find((e) => e.id === id);
    if (!endpoint) throw notFound('Webhook endpoint');
    return endpoint;
  };

  const listPage = async (request: FastifyRequest, reply: FastifyReply, data: Partial<Views['webhooks']> = {}) => {
    const target = targetOf(request);
    const endpoints = await listEndpoints(deps.pool, ownerOf(target));
    const now = deps.clock.now();
    return page(request, reply, 'webhooks', {
      title: 'Webhooks',
      section: 'webhooks',
      base: base(target),
      manage: can(target.role, 'manage_webhooks'),
      // Words for people, and the type's code beside them: a receiver is written against the codes.
      eventTypes: receivableEventTypes(ownerOf(target)).map((t) => ({ value: t, words: eventWords(t) })),
      endpoints: endpoints.map((e) => ({
        ...e,
        events: e.events ? e.events.map((t) => ({ value: t, words: eventWords(t) })) : null,
        created: moment(e.created_at, now),
        disabled: moment(e.disabled_at, now),
      })),
      chosen: [],
      ...data,
    });
  };

  const secretPage = (request: FastifyRequest, reply: FastifyReply, endpoint: { id: number; url: string; secret: string }, heading: string, note: string) => {
    reply.header('cache-control', 'no-store');
    return page(request, reply, 'webhook-secret', { title: heading, heading, section: 'webhooks', endpoint, note, back: base(targetOf(request)) });
  };

  app.get('/settings/webhooks', async (request, reply) => listPage(request, reply));

  app.post('/settings/webhooks', async (request, reply) => {
    const target = targetOf(request);
    mustManage(target);
    const form = (request.body ?? {}) as Form;
    const url = formText(form, 'url').trim();
    const events = chosenEvents(form);
    try {
      const created = await addEndpoint(deps.pool, ownerOf(target), { url, ...(events ? { events } : {}) }, policy, deps.clock.now(), deps.webhookSecrets);
      return secretPage(request, reply, created, 'Webhook endpoint created', 'Copy the signing secret now: it is shown once. Receivers check each delivery\'s signature with it (Standard Webhooks).');
    } catch (err) {
      if (!(err instanceof DomainError && (err.code === 'invalid_input' || err.code === 'conflict'))) throw err;
      reply.code(err.code === 'conflict' ? 409 : 422);
      return listPage(request, reply, { form: { url }, chosen: events ?? [], errors: (err.details.errors ?? {}) as FieldErrors, problem: refusal(err) });
    }
  });

  for (const action of ['rotate', 'delete'] as const) {
    app.get(`/settings/webhooks/:endpointId/${action}`, async (request, reply) => {
      const target = targetOf(request);
      mustManage(target);
      const endpoint = await endpointOf(request);
      return page(request, reply, 'webhook-confirm', {
        title: action === 'rotate' ? 'Rotate the secret' : 'Delete the endpoint',
        section: 'webhooks',
        action,
        endpoint,
        post: `${base(target)}/${endpoint.id}/${action}`,
        back: base(target),
      });
    });
  }

  app.post('/settings/webhooks/:endpointId/rotate', async (request, reply) => {
    const target = targetOf(request);
    mustManage(target);
    const rotated = await rotateSecret(deps.pool, ownerOf(target), idParam(request, 'endpointId'), deps.clock.now(), deps.webhookSecrets);
    return secretPage(request, reply, rotated, 'New signing secret', 'Copy the new secret now: it is shown once. The previous secret keeps signing beside it for 24 hours, so receivers can switch.');
  });

  app.post('/settings/webhooks/:endpointId/delete', async (request, reply) => {
    const target = targetOf(request);
    mustManage(target);
    await deleteEndpoint(deps.pool, ownerOf(target), idParam(request, 'endpointId'));
    return listPage(request, reply, { notice: 'Endpoint deleted, with its delivery log.' });
  });

  const deliveriesPage = async (request: FastifyRequest, reply: FastifyReply, data: Partial<Views['webhook-deliveries']> = {}) => {
    const target = targetOf(request);
    const endpoint = await endpointOf(request);
    const pageNo = pageNumber((request.query as { page?: unknown }).page);
    const { items, total } = await listDeliveries(deps.pool, ownerOf(target), endpoint.id, pageNo, PER_PAGE);
    const now = deps.clock.now();
    const here = `${base(target)}/${endpoint.id}/deliveries`;
    return page(request, reply, 'webhook-deliveries', {
      title: 'Deliveries',
      section: 'webhooks',
      endpoint,
      here,
      back: base(target),
      manage: can(target.role, 'manage_webhooks') && !endpoint.disabled_at,
      deliveries: items.map((d) => ({ ...d, words: eventWords(d.event_type), created: moment(d.created_at, now), last: moment(d.last_attempt_at, now) })),
      total,
      previous: pageNo > 1 ? `${here}?page=${pageNo - 1}` : '',
      next: pageNo * PER_PAGE < total ? `${here}?page=${pageNo + 1}` : '',
      ...data,
    });
  };

  app.get('/settings/webhooks/:endpointId/deliveries', async (request, reply) => deliveriesPage(request, reply));

  app.post('/settings/webhooks/:endpointId/deliveries/:deliveryId/resend', async (request, reply) => {
    const target = targetOf(request);
    mustManage(target);
    const endpoint = await endpointOf(request);
    try {
      await resendDelivery(deps.pool, ownerOf(target), endpoint.id, idParam(request, 'deliveryId'), deps.clock.now());
    } catch (err) {
      if (!(err instanceof DomainError && err.code === 'conflict')) throw err;
      reply.code(409);
      return deliveriesPage(request, reply, { problem: err.message });
    }
    return deliveriesPage(request, reply, { notice: 'Sent again: a new delivery is due now.' });
  });
}
