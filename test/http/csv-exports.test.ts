import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { eachOrder } from '../../src/domain/orders/order-read.js';
import { orderStatuses } from '../../src/domain/orders/states.js';
import { buyerOrderCsvColumns, publisherOrderCsvColumns } from '../../src/schemas/orders.js';
import { ledgerCsvColumns } from '../../src/schemas/ledger.js';
import { payoutCsvColumns } from '../../src/schemas/payouts.js';
import { createBilling } from '../../src/domain/billing/billing-deps.js';
import { markPayoutFailed, markPayoutSent } from '../../src/domain/billing/payout-decide.js';
import { setDestination } from '../../src/domain/billing/payout-details.js';
import { requestPayout } from '../../src/domain/billing/payouts.js';
import { valueOf } from '../../src/domain/idempotency/record-once.js';
import { setStaff } from '../../src/domain/users/user-service.js';
import { webhookSecretBox } from '../../src/domain/webhooks/secret-box.js';
import { personIn } from '../helpers/notify.js';
import { makePayable } from '../helpers/payouts.js';
import { setupApp } from '../helpers/app.js';
import { publisherWithOutlet } from '../helpers/catalog.js';
import { expectedCell, fieldAt, parseCsv } from '../helpers/csv.js';
import { bearer, workspaceWithKeys } from '../helpers/fixtures.js';
import { orderKit } from '../helpers/orders.js';

// CSV exports (docs/billing.md, "Papers"): Accept: text/csv on the order lists and the ledger
// answers every matching row, the same rows as the JSON list's pages put together, field by field.

// The property tests read many pages with one key: no rate limit in the way.
const h = await setupApp({ RATE_LIMIT_PER_MINUTE: 1_000_000 });
const kit = orderKit(h);
const p = await publisherWithOutlet(h.database, [{}, { publisher_price_cents: 12_345 }]);
const w = await workspaceWithKeys(h.database.pool, { balanceCents: 10_000_000 });
const other = await workspaceWithKeys(h.database.pool, { balanceCents: 1_000_000 });

// Text a spreadsheet would run, and text that needs quoting, in the fields a buyer and a publisher write.
const anchors = ['=HYPERLINK("https://evil.example","x")', '+1 for us', '@mention', '-minus', 'plain, with "quotes"', 'line\nbreak', 'carriage\r\nreturn', '＝SUM(A1)'];
const ids: number[] = [];
for (let i = 0; i < 24; i++) {
  const res = await kit.place(w.spendKey, {
    offer_ids: [p.offers[i % 2]!.id],
    target_url: `https://buyer.example/${i}`,
    anchor_text: anchors[i % anchors.length],
    brief: `Brief ${i}: a "quoted" word, a comma,\nand a second line.`,
  });
  if (res.statusCode !== 201) throw new Error(res.body);
  ids.push(res.json().data[0].id);
}
// Some move on: accepted, declined with a reason, cancelled by the buyer.
for (const [n, id] of ids.entries()) {
  if (n % 4 === 1) await kit.pub(p.publisherKey, `${id}/accept`);
  if (n % 4 === 2) await kit.pub(p.publisherKey, `${id}/decline`, { reason: '=cmd|/C calc, declined' });
  if (n % 4 === 3) await kit.buyer(w.spendKey, `${id}/cancel`);
}
// Another workspace's order on the same outlet: in the publisher's export, never in w's.
const othersOrder = (await kit.place(other.spendKey, { offer_ids: [p.offers[0]!.id], target_url: 'https://other.example/', brief: 'Theirs' })).json().data[0].id as number;

// The publisher's payouts: nine, one after another (each takes the whole payable balance), some
// sent, some failed, the last still pending.
const billing = createBilling(h.database.pool, h.clock, h.config, webhookSecretBox(h.database.pool, h.config.SECRETS_KEY));
const payee = { publisherId: p.publisherId, userId: (await personIn(h, { publisherId: p.publisherId }, 'owner')).id };
const payer = { userId: (await personIn(h, { workspaceId: other.workspaceId }, 'viewer')).id };
await setStaff(h.database.pool, payer.userId, true);
await setDestination(billing, payee, { method: 'paypal', email: '=pay@example.com' });
for (let i = 0; i < 9; i++) {
  await makePayable(h.database.pool, p.publisherId, 10_000 + i);
  const payout = valueOf(await requestPayout(billing, payee));
  if (i % 3 === 0) await markPayoutSent(billing, payer, payout.id, `BANK-${i}`);
  if (i % 3 === 1 && i < 8) await markPayoutFailed(billing, payer, payout.id, '-returned, by the bank');
}

const get = (url: string, key: string, accept?: string) => h.app.inject({ method: 'GET', url, headers: { ...bearer(key), ...(accept ? { accept } : {}) } });

/** Every page of a JSON list, concatenated. */
async function allPages(path: string, key: string, query: URLSearchParams, perPage: number): Promise<unknown[]> {
  const rows: unknown[] = [];
  for (let page = 1; ; page++) {
    const q = new URLSearchParams(query);
    q.set('per_page', String(perPage));
    q.set('page', String(page));
    const res = await get(`${path}?${q}`, key);
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    rows.push(...body.data);
    if (page >= body.meta.last_page) return rows;
  }
}

/** The CSV export of a list, parsed: its header and its records. */
async function csvOf(path: string, key: string, query: URLSearchParams) {
  const res = await get(`${path}?${query}`, key, 'text/csv');
  expect(res.statusCode, res.body).toBe(200);
  expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
  expect(res.headers['content-disposition']).toMatch(/^attachment; filename="[a-z-]+\.csv"$/);
  const [header, ...records] = parseCsv(res.body);
  return { header: header!, records };
}

/** The CSV rows equal the JSON rows, in order, field by field, under the columns given. */
function expectSameRows(columns: string[], csv: { header: string[]; records: string[][] }, json: unknown[]) {
  expect(csv.header).toEqual(columns);
  expect(csv.records.length).toBe(json.length);
  for (const [n, row] of json.entries()) {
    const record = csv.records[n]!;
    for (const [c, column] of columns.entries()) {
      expect(record[c], `row ${n} (id ${(row as { id: number }).id}), ${column}`).toBe(expectedCell(fieldAt(row, column)));
    }
  }
}

const filters = fc.record(
  {
    status: fc.option(fc.constantFrom(...orderStatuses), { nil: undefined }),
    your_turn: fc.option(fc.constantFrom('true', 'false', '1', '0'), { nil: undefined }),
    per_page: fc.integer({ min: 1, max: 9 }),
  },
  { requiredKeys: ['per_page'] },
);
const queryOf = (f: { status?: string | undefined; your_turn?: string | undefined }) => {
  const q = new URLSearchParams();
  if (f.status !== undefined) q.set('status', f.status);
  if (f.your_turn !== undefined) q.set('your_turn', f.your_turn);
  return q;
};

describe('CSV exports equal the JSON lists row for row (property)', () => {
  it('GET /api/v1/orders, buyer: random filters', async () => {
    await fc.assert(
      fc.asyncProperty(filters, async (f) => {
        const q = queryOf(f);
        const json = await allPages('/api/v1/orders', w.readKey, q, f.per_page);
        expectSameRows(buyerOrderCsvColumns, await csvOf('/api/v1/orders', w.readKey, q), json);
      }),
      { numRuns: 25 },
    );
  });

  it('GET /api/v1/publisher/orders: random filters', async () => {
    await fc.assert(
      fc.asyncProperty(filters, async (f) => {
        const q = queryOf(f);
        const json = await allPages('/api/v1/publisher/orders', p.publisherKey, q, f.per_page);
        expectSameRows(publisherOrderCsvColumns, await csvOf('/api/v1/publisher/orders', p.publisherKey, q), json);
      }),
      { numRuns: 25 },
    );
  });

  it('GET /api/v1/publisher/payouts: random filters', async () => {
    await fc.assert(
      fc.asyncProperty(fc.record({ status: fc.constantFrom(undefined, 'pending', 'sent', 'failed'), per_page: fc.integer({ min: 1, max: 10 }) }), async (f) => {
        const q = new URLSearchParams(f.status ? { status: f.status } : {});
        const json = await allPages('/api/v1/publisher/payouts', p.publisherKey, q, f.per_page);
        if (!f.status) expect(json).toHaveLength(9);
        expectSameRows(payoutCsvColumns, await csvOf('/api/v1/publisher/payouts', p.publisherKey, q), json);
      }),
      { numRuns: 12 },
    );
  });

  it('GET /api/v1/ledger: every entry', async () => {
    const json = await allPages('/api/v1/ledger', w.readKey, new URLSearchParams(), 7);
    expect(json.length).toBeGreaterThan(30);
    expectSameRows(ledgerCsvColumns, await csvOf('/api/v1/ledger', w.readKey, new URLSearchParams()), json);
  });
});

describe('CSV exports: what they hold', () => {
  it('every matching row, not one page; nobody else’s', async () => {
    const csv = await csvOf('/api/v1/orders', w.readKey, new URLSearchParams({ per_page: '2', page: '3' }));
    expect(csv.records.map((r) => Number(r[0]))).toEqual([...ids].reverse());
    const publisher = await csvOf('/api/v1/publisher/orders', p.publisherKey, new URLSearchParams());
    expect(publisher.records.map((r) => Number(r[0]))).toEqual([othersOrder, ...[...ids].reverse()]);
    const theirs = await csvOf('/api/v1/orders', other.readKey, new URLSearchParams());
    expect(theirs.records.map((r) => Number(r[0]))).toEqual([othersOrder]);
  });

  it('guards formulas in text with an apostrophe, never numbers; quotes as RFC 4180 says', async () => {
    const res = await get('/api/v1/orders', w.readKey, 'text/csv');
    expect(res.body).toContain(`,"'=HYPERLINK(""https://evil.example"",""x"")",`);
    expect(res.body).toContain(",'+1 for us,");
    expect(res.body).toContain(",'@mention,");
    expect(res.body).toContain(",'-minus,");
    expect(res.body).toContain(",'＝SUM(A1),");
    expect(res.body).toContain(`,"'=cmd|/C calc, declined",`);
    expect(res.body).toContain(',"line\nbreak",');
    expect(res.body.startsWith('id,status,turn,your_turn,outlet.id,outlet.name,')).toBe(true);
    const ledger = await get('/api/v1/ledger', w.readKey, 'text/csv');
    const [header, ...rows] = parseCsv(ledger.body);
    const amount = header!.indexOf('amount');
    // A debit is a negative number, written as one: summable, no apostrophe.
    expect(rows.some((r) => /^-\d+$/.test(r[amount]!))).toBe(true);
  });

  it('reads in keyset batches: a batch of 3 yields every order once, newest first', async () => {
    const seen: number[] = [];
    for await (const o of eachOrder(h.database.pool, { party: 'buyer', workspaceId: w.workspaceId }, {}, 3)) seen.push(o.id);
    expect(seen).toEqual([...ids].reverse());
    const cancelled: number[] = [];
    for await (const o of eachOrder(h.database.pool, { party: 'buyer', workspaceId: w.workspaceId }, { status: 'cancelled' }, 2)) cancelled.push(o.id);
    expect(cancelled).toEqual(ids.filter((_, n) => n % 4 === 3).reverse());
  });
});

describe('content negotiation', () => {
  const json = ['', '*/*', 'application/json', 'application/*', 'text/csv;q=0.5, application/json', 'text/csv, application/json', 'text/html,application/xhtml+xml,*/*;q=0.8'];
  for (const accept of json) {
    it(`Accept ${JSON.stringify(accept)} gets JSON`, async () => {
      const res = await get('/api/v1/ledger', w.readKey, accept || undefined);
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.headers.vary).toMatch(/Accept/i);
    });
  }
  for (const accept of ['text/csv', 'text/*', 'text/csv; charset=utf-8', 'application/json;q=0.1, text/csv', 'TEXT/CSV']) {
    it(`Accept ${JSON.stringify(accept)} gets CSV`, async () => {
      const res = await get('/api/v1/orders', w.readKey, accept);
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
    });
  }
  for (const accept of ['image/png', 'text/html', 'application/json;q=0, text/csv;q=0', 'application/xml, text/plain']) {
    it(`Accept ${JSON.stringify(accept)} is 406 in the error shape`, async () => {
      for (const path of ['/api/v1/orders', '/api/v1/ledger']) {
        const res = await get(path, w.readKey, accept);
        expect(res.statusCode).toBe(406);
        expect(res.json()).toEqual({ code: 'not_acceptable', message: expect.stringMatching(/text\/csv/), request_id: res.headers['x-request-id'] });
      }
      const pub = await get('/api/v1/publisher/orders', p.publisherKey, accept);
      expect(pub.statusCode).toBe(406);
    });
  }

  it('a bad filter is still a 422 naming it, and no key a 401, whatever the Accept', async () => {
    const bad = await get('/api/v1/orders?status=lost', w.readKey, 'text/csv');
    expect(bad.statusCode).toBe(422);
    expect(Object.keys(bad.json().errors)).toEqual(['status']);
    const anonymous = await h.app.inject({ method: 'GET', url: '/api/v1/orders', headers: { accept: 'text/csv' } });
    expect(anonymous.statusCode).toBe(401);
  });
});

describe('the OpenAPI document', () => {
  it('shows text/csv beside JSON on the exporting lists, with their columns, and their 406', async () => {
    const doc = (await h.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    for (const [path, columns] of [['/api/v1/orders', buyerOrderCsvColumns], ['/api/v1/publisher/orders', publisherOrderCsvColumns], ['/api/v1/ledger', ledgerCsvColumns]] as const) {
      const op = doc.paths[path].get;
      expect(Object.keys(op.responses['200'].content).sort(), path).toEqual(['application/json', 'text/csv']);
      expect(op.responses['200'].content['application/json'].schema.properties.data).toBeDefined();
      expect(op.responses['200'].content['text/csv'].schema.description).toContain(`Columns: ${columns.join(', ')}.`);
      expect(op.responses['406'], path).toBeDefined();
    }
    expect(Object.keys(doc.paths['/api/v1/top-ups'].get.responses['200'].content)).toEqual(['application/json']);
  });
});

describe('HEAD', () => {
  it('answers the export’s headers without a body', async () => {
    const res = await h.app.inject({ method: 'HEAD', url: '/api/v1/orders', headers: { ...bearer(w.readKey), accept: 'text/csv' } });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(res.body).toBe('');
  });
});
