// A client of the API as its users write one: types generated from /openapi.json by
// openapi-typescript, requests through openapi-fetch. generated-client.test.ts generates
// ./.generated/api.d.ts, type-checks this file against it, then runs it. Should the document stop
// saying what the API takes and returns (integers typed as strings, a resource schema no longer
// named), this file stops compiling.
import createClient from 'openapi-fetch';
import type { components, paths } from './.generated/api.js';

type Schemas = components['schemas'];

export interface FlowResult {
  outlet: Schemas['Outlet'];
  plan: Schemas['Plan'];
  placed: Schemas['Order'];
  readBack: Schemas['Order'];
  ledger: Schemas['LedgerEntry'][];
}

function must<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new Error(`${what}: no data`);
  return value;
}

/** Searches, opens an outlet, plans, places an order for the plan's first offer and reads it back. */
export async function searchPlanOrder(opts: { baseUrl: string; key: string; fetch?: (request: Request) => Promise<Response> }): Promise<FlowResult> {
  // 'application/json': the lists that also export CSV (docs/billing.md) document text/csv beside
  // JSON; this client reads JSON, so its answers are typed as JSON only.
  const client = createClient<paths, 'application/json'>({
    baseUrl: opts.baseUrl,
    headers: { Authorization: `Bearer ${opts.key}` },
    ...(opts.fetch ? { fetch: opts.fetch } : {}),
  });

  const search = await client.GET('/api/v1/outlets', {
    params: { query: { q: 'travel', per_page: 5, page: 1, min_traffic: 0, verified_traffic: true, max_price_usd: 5000 } },
  });
  const summaries: Schemas['OutletSummary'][] = must(search.data, 'search').data;
  const first = summaries[0];
  if (!first) throw new Error('search found no outlet');
  const total: number = must(search.data, 'search').meta.total;
  if (total < 1) throw new Error('search counted no outlet');

  // @ts-expect-error per_page is an integer, not a string
  void client.GET('/api/v1/outlets', { params: { query: { per_page: '5' } } }).catch(() => undefined);

  const detail = await client.GET('/api/v1/outlets/{id}', { params: { path: { id: first.id } } });
  const outlet = must(detail.data, 'outlet').data;
  const offer: Schemas['Offer'] | undefined = outlet.offers[0];
  if (!offer) throw new Error('outlet has no offer');

  const planned = await client.POST('/api/v1/plan', { body: { goal: 'travel guides for families', budget_usd: 2000 } });
  const plan = must(planned.data, 'plan').data;
  const offerId = plan.offer_ids[0] ?? offer.id;

  const placed = await client.POST('/api/v1/orders', {
    params: { header: { 'idempotency-key': `client-flow-${offerId}` } },
    body: { offer_ids: [offerId], target_url: 'https://demo.example/guide', anchor_text: 'family travel guide', brief: 'A practical guide.' },
  });
  if (placed.error) throw new Error(`place order: ${placed.error.code}: ${placed.error.message}`);
  const answer = must(placed.data, 'place order').data;
  // 202: a person must approve it first (an approval request, not orders: docs/approvals.md).
  if (!Array.isArray(answer)) throw new Error(`waiting for a person's approval: ${answer.approve_url}`);
  const order = answer[0];
  if (!order) throw new Error('no order placed');

  const read = await client.GET('/api/v1/orders/{id}', { params: { path: { id: order.id } } });
  const readBack = must(read.data, 'read order').data;

  const ledger = await client.GET('/api/v1/ledger', { params: { query: { per_page: 10 } } });
  return { outlet, plan, placed: order, readBack, ledger: must(ledger.data, 'ledger').data };
}
