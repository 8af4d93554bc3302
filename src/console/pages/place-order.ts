import { hash, randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { z } from 'zod';
import { canonicalJson } from '../../common/canonical-json.js';
import { DomainError, type FieldErrors, invalidInput, notFound } from '../../domain/errors.js';
import { checksAgainst, type ContentCheck, TITLE_LENGTH } from '../../domain/orders/content-checks.js';
import { valueOf } from '../../domain/idempotency/record-once.js';
import type { WorkspaceMember } from '../../domain/orders/buyer-actor.js';
import { place } from '../../domain/orders/place-orders.js';
import type { PlaceOrdersInput } from '../../domain/orders/placement-rules.js';
import { type PlacementQuote, quotePlacement } from '../../domain/orders/quote.js';
import { getOutlet } from '../../domain/outlets/outlet-detail.js';
import { outletSearchOf, searchOutlets } from '../../domain/outlets/search.js';
import { refuseUnstorableText } from '../../domain/text-input.js';
import { can, requireSpend } from '../../domain/users/permissions.js';
import { parseUserInput } from '../../domain/users/user-input.js';
import { outletListQuery } from '../../schemas/outlets.js';
import { placeOrdersBody } from '../../schemas/orders.js';
import { type ConsoleDeps, type ConsoleTarget, page, pathId, targetOf } from '../context.js';
import { type Form, formText } from '../form.js';
import { renderMarkdown } from '../markdown.js';
import { anyFilter, filterFields, filterValuesOf } from '../outlet-filters.js';

// Placing an order from the console (docs/console.md, "Placing an order"): search outlets with
// the engine GET /api/v1/outlets uses, pick an offer, fill the brief POST /api/v1/orders takes,
// confirm on a page showing the price and the balance after, and `place()` runs: the REST route's
// domain function, with the signed-in person as the buyer instead of a key.

/** The brief's fields, as POST /api/v1/orders names them. */
const FIELDS = ['target_url', 'anchor_text', 'brief', 'content_title', 'content'] as const;
type Values = Record<(typeof FIELDS)[number], string>;

const PER_PAGE = 20;

function workspaceOf(request: FastifyRequest): ConsoleTarget {
  const target = targetOf(request);
  if (target.kind !== 'workspace') throw notFound('Page');
  return target;
}

/** The console asks the role table before showing a form; `place()` asks it again inside its transaction. */
function spenderOf(request: FastifyRequest): { target: ConsoleTarget; who: WorkspaceMember } {
  const target = workspaceOf(request);
  requireSpend(target.role, 'place');
  return { target, who: { workspaceId: target.id, userId: request.consoleUser!.id } };
}

/** The outlet and one of its active offers; an unknown, inactive or other outlet's offer does not exist here. */
async function offerOf(deps: ConsoleDeps, request: FastifyRequest, workspaceId: number) {
  const params = request.params as { outletId: string; offerId: string };
  const outlet = await getOutlet(deps.pool, workspaceId, pathId(params.outletId, 'Outlet'));
  const offer = outlet.offers.find((f) => f.id === pathId(params.offerId, 'Offer'));
  if (!offer) throw notFound('Offer');
  return { outlet, offer };
}

type TrackRecord = Awaited<ReturnType<typeof getOutlet>>['track_record'];

const percent = (rate: number) => `${(rate * 100).toLocaleString('en-US', { maximumFractionDigits: 1 })}%`;
const count = (n: number, what: string) => `${n.toLocaleString('en-US')} ${what}${n === 1 ? '' : 's'}`;

/**
 * The outlet's track record as GET /api/v1/outlets/{id} gives it (`track_record`), in words: a
 * figure the marketplace has not measured yet says so rather than showing 0.
 */
function trackRecordRows(r: TrackRecord) {
  const notYet = 'Not measured yet';
  const checked = (rate: number | null, n: number, noun: string) => (rate === null ? 'None checked yet' : `${percent(rate)} of ${count(n, noun)} checked`);
  return [
    { label: 'Orders completed', value: r.orders_completed.toLocaleString('en-US') },
    { label: 'Orders accepted', value: r.acceptance_rate === null ? notYet : percent(r.acceptance_rate) },
    { label: 'Published on time', value: r.on_time_rate === null ? notYet : percent(r.on_time_rate) },
    { label: 'Average turnaround', value: r.avg_turnaround_days === null ? notYet : `${r.avg_turnaround_days} days` },
    { label: 'Rating', value: r.rating === null ? notYet : `${r.rating} of 5` },
    { label: 'Links alive at 30 days', value: checked(r.link_survival_30d, r.links_checked_30d, 'link') },
    { label: 'Links alive at 60 days', value: checked(r.link_survival_60d, r.links_checked_60d, 'link') },
    { label: 'First link check passed', value: checked(r.verification_pass_rate, r.placements_checked, 'placement') },
  ];
}

function valuesOf(form: Form): Values {
  return Object.fromEntries(FIELDS.map((f) => [f, formText(form, f)])) as Values;
}

/**
 * The form's fields judged by the REST route's own schema (placeOrdersBody): an empty optional
 * field is one not given, as an API client would leave it out.
 */
function inputOf(offerId: number, values: Values): PlaceOrdersInput {
  refuseUnstorableText(values, 'form');
  const given = Object.fromEntries(Object.entries(values).filter(([k, v]) => v.trim() !== '' || k === 'target_url'));
  return parseUserInput(placeOrdersBody, { offer_ids: [offerId], ...given });
}

export async function placeOrderPages(app: FastifyInstance, { deps }: { deps: ConsoleDeps }) {
  // Outlets: the search of GET /api/v1/outlets, its query parsed by the same schema and answered
  // by the same engine and function; a bad filter is the form again with the field named (422).
  app.get('/outlets', async (request, reply) => {
    const target = workspaceOf(request);
    const { values, given } = filterValuesOf(request.query);
    let query: z.output<typeof outletListQuery>;
    try {
      query = parseUserInput(outletListQuery, { ...given, per_page: String(PER_PAGE) });
    } catch (err) {
      if (!(err instanceof DomainError && err.code === 'invalid_input')) throw err;
      const errors = (err.details.errors ?? {}) as FieldErrors;
      reply.code(422);
      return page(request, reply, 'outlets', {
        title: 'Place an order',
        section: 'orders',
        fields: filterFields(values, errors),
        filtered: anyFilter(values),
        // Each filter's problem is said under it; the page number has no field of its own.
        problem: `Nothing was searched: check the filters below.${errors.page ? ` Page ${errors.page.join('; ')}.` : ''}`,
        searched: false,
        maySpend: can(target.role, 'spend'),
      });
    }
    const { page: pageNo, per_page: perPage, max_price_usd, ...params } = query;
    const { items, total } = await searchOutlets(deps.search, deps.pool, target.id, outletSearchOf({ ...params, max_price_cents: max_price_usd }), pageNo, perPage);
    const pages = Math.max(1, Math.ceil(total / perPage));
    const link = (n: number) => `${target.href}/outlets?${new URLSearchParams({ ...values, page: String(n) }).toString()}`;
    return page(request, reply, 'outlets', {
      title: 'Place an order',
      section: 'orders',
      fields: filterFields(values, {}),
      filtered: anyFilter(values),
      searched: true,
      q: query.q ?? '',
      total,
      outlets: items.map((o) => ({
        href: `${target.href}/outlets/${o.id}`,
        name: o.name,
        domain: o.domain,
        country: o.country,
        topics: o.topics.join(', '),
        from: o.from_price_formatted,
        visits: o.traffic.monthly_visits.toLocaleString('en-US'),
        verified: o.traffic.verified,
      })),
      pageNo,
      pages,
      prev: pageNo > 1 ? link(pageNo - 1) : null,
      next: pageNo < pages ? link(pageNo + 1) : null,
      maySpend: can(target.role, 'spend'),
    });
  });

  // One outlet's active offers, each with its "Order" link.
  app.get('/outlets/:outletId', async (request, reply) => {
    const target = workspaceOf(request);
    const outlet = await getOutlet(deps.pool, target.id, pathId((request.params as { outletId: string }).outletId, 'Outlet'));
    return page(request, reply, 'outlet', {
      title: outlet.name,
      section: 'orders',
      outlet,
      record: trackRecordRows(outlet.track_record),
      back: `${target.href}/outlets`,
      offers: outlet.offers.map((f) => ({ ...f, href: `${target.href}/outlets/${outlet.id}/offers/${f.id}` })),
      maySpend: can(target.role, 'spend'),
    });
  });

  async function briefPage(
    request: FastifyRequest,
    reply: FastifyReply,
    values: Values,
    extras: { status?: number; errors?: FieldErrors; problem?: string; preview?: { title: string; html: string; checks: ContentCheck[] } } = {},
  ) {
    const { target } = spenderOf(request);
    const { outlet, offer } = await offerOf(deps, request, target.id);
    if (extras.status) reply.code(extras.status);
    return page(request, reply, 'order-new', {
      title: `Order from ${outlet.name}`,
      section: 'orders',
      outlet,
      offer,
      action: `${target.href}/outlets/${outlet.id}/offers/${offer.id}`,
      back: `${target.href}/outlets/${outlet.id}`,
      values,
      errors: extras.errors ?? {},
      titleLength: TITLE_LENGTH,
      preview: extras.preview ?? null,
      ...(extras.problem ? { problem: extras.problem } : {}),
    });
  }

  /** A refusal of the domain's the person can act on, shown on the brief form with what they typed. */
  async function refused(request: FastifyRequest, reply: FastifyReply, values: Values, err: unknown) {
    if (!(err instanceof DomainError)) throw err;
    if (err.code === 'invalid_input') {
      const errors = (err.details.errors ?? {}) as FieldErrors;
      // The confirmation's own hidden fields are not on the brief: say what to do instead.
      const incomplete = 'idempotency_key' in errors || 'quoted_cents' in errors;
      const problem = incomplete ? 'Nothing was placed: the confirmation was incomplete. Review the order and confirm it again.' : 'Nothing was placed: check the fields below.';
      return briefPage(request, reply, values, { status: 422, errors, problem });
    }
    if (err.code === 'idempotency_key_reused') {
      return briefPage(request, reply, values, { status: 422, problem: 'Nothing was placed: this confirmation already placed a different order. Review the order and confirm it again.' });
    }
    if (err.code === 'quote_changed') {
      return briefPage(request, reply, values, { status: 409, problem: 'Nothing was placed: the price changed since the confirmation page. The new price is below; review the order again.' });
    }
    if (err.code === 'insufficient_balance') return briefPage(request, reply, values, { status: 402, problem: `Nothing was placed. ${err.message}` });
    if (err.code === 'approval_required') return briefPage(request, reply, values, { status: 403, problem: `Nothing was placed. ${err.message}` });
    throw err;
  }

  // The brief: what POST /api/v1/orders takes besides the offer.
  app.get('/outlets/:outletId/offers/:offerId', async (request, reply) => briefPage(request, reply, valuesOf({})));

  // The brief sent: judged, then the confirmation page (nothing is placed yet). "Change the
  // brief" on the confirmation page sends it back here to be shown again as typed.
  app.post('/outlets/:outletId/offers/:offerId', async (request, reply) => {
    const { target, who } = spenderOf(request);
    const body = (request.body ?? {}) as Form;
    const values = valuesOf(body);
    if (formText(body, 'intent') === 'edit') return briefPage(request, reply, values);
    const { outlet, offer } = await offerOf(deps, request, target.id);
    if (formText(body, 'intent') === 'preview') {
      // The article rendered, and the checks placing will store with it: the brief judged as
      // placing judges it, then `checksAgainst` with this offer's limits. Nothing is placed.
      let brief: PlaceOrdersInput;
      try {
        brief = inputOf(offer.id, values);
      } catch (err) {
        return refused(request, reply, values, err);
      }
      const article = { title: brief.content_title ?? '', body: brief.content ?? '' };
      const rules = { target_url: brief.target_url, anchor_text: brief.anchor_text ?? null, min_words: offer.min_words, max_words: offer.max_words, max_links: offer.max_links };
      return briefPage(request, reply, values, { preview: { title: article.title, html: renderMarkdown(article.body), checks: checksAgainst(rules, article) } });
    }
    let input: PlaceOrdersInput;
    let quote: PlacementQuote;
    try {
      input = inputOf(offer.id, values);
      // The quote MCP's first step answers: every rule placement checks but the balance, whose
      // shortfall it says instead.
      quote = await quotePlacement({ db: deps.pool, workspaces: deps.workspaces }, who, input, deps.clock.now());
    } catch (err) {
      return refused(request, reply, values, err);
    }
    return page(request, reply, 'order-place', {
      title: `Confirm the order from ${outlet.name}`,
      section: 'orders',
      heading: `Place an order with ${outlet.name}?`,
      offer,
      outlet,
      input,
      figures: [
        { label: 'Price', value: quote.total.formatted },
        { label: 'Available balance now', value: quote.balance.formatted },
        { label: 'Available balance after', value: quote.balanceAfter.formatted },
        ...(quote.shortfall.cents > 0 ? [{ label: 'Short by', value: quote.shortfall.formatted }] : []),
      ],
      short: quote.shortfall.cents > 0,
      values,
      // The idempotency key this confirmation carries (sent twice, it places once) and the price it shows.
      idempotencyKey: randomUUID(),
      quotedCents: quote.total.cents,
      action: `${target.href}/outlets/${outlet.id}/offers/${offer.id}/place`,
      edit: `${target.href}/outlets/${outlet.id}/offers/${offer.id}`,
    });
  });

  // Confirmed: the REST route's place(), kept once under the form's idempotency key.
  app.post('/outlets/:outletId/offers/:offerId/place', async (request, reply) => {
    const { target, who } = spenderOf(request);
    const form = (request.body ?? {}) as Form;
    const values = valuesOf(form);
    const { offer } = await offerOf(deps, request, target.id);
    let id: number;
    try {
      const key = formText(form, 'idempotency_key');
      if (!/^[0-9a-f-]{36}$/.test(key)) throw invalidInput({ idempotency_key: ['is missing: review the order and confirm it again'] });
      const input = inputOf(offer.id, values);
      // The price the confirmation page showed: any other is refused (quote_changed), as an MCP
      // confirmation's is, so nobody pays a price they did not see.
      const quoted = formText(form, 'quoted_cents');
      if (!/^[1-9][0-9]{0,14}$/.test(quoted)) throw invalidInput({ quoted_cents: ['is missing: review the order and confirm it again'] });
      const fingerprint = hash('sha256', canonicalJson([target.id, input, quoted]), 'hex');
      // Only a success is kept (no `keeps`): a refusal may succeed when sent again (after a top-up).
      const orders = valueOf(await place(deps.placementGroups, who, input, { quotedTotalCents: Number(quoted), once: { book: 'person', userId: who.userId, key, fingerprint } }));
      id = orders[0]!.id;
    } catch (err) {
      return refused(request, reply, values, err);
    }
    return reply.redirect(`${target.href}/orders/${id}?done=placed`, 303);
  });
}
