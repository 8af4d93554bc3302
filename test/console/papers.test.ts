import { describe, expect, it } from 'vitest';
import { monthOf } from '../../src/domain/ledger/statements.js';
import { setupApp } from '../helpers/app.js';
import { publisherWithOutlet } from '../helpers/catalog.js';
import { bearer, workspaceWithKeys } from '../helpers/fixtures.js';
import { PASSWORD, personIn } from '../helpers/notify.js';
import { orderKit } from '../helpers/orders.js';
import { consoleClient } from './helpers.js';

// Papers in the console (docs/billing.md): the statements page with its month picker, a month's
// printable statement, the CSV downloads of the orders and the ledger; for every member, viewers
// included, of their own workspace or publisher only: anyone else's is 404.

const h = await setupApp({ SIGNIN_FAILURES_PER_ADDRESS: 1000, RATE_LIMIT_PER_MINUTE: 1_000_000 });
const pool = h.database.pool;
const kit = orderKit(h);
let ip = 0;

async function signedIn(user: { email: string }) {
  const c = consoleClient(h, `10.59.0.${++ip}`);
  expect((await c.post('/app/sign-in', { email: user.email, password: PASSWORD })).statusCode).toBe(303);
  return c;
}

const p = await publisherWithOutlet(h.database);
const ws = await workspaceWithKeys(pool, { balanceCents: 50_000, name: 'Papers & Co' });
const other = await workspaceWithKeys(pool, { balanceCents: 9_000 });
const otherPublisher = await publisherWithOutlet(h.database);
const placed = await kit.place(ws.spendKey, { offer_ids: [p.offers[0]!.id], target_url: 'https://buyer.example/', anchor_text: '=1+1', brief: 'A brief, "quoted"' });
expect(placed.statusCode, placed.body).toBe(201);
const orderId = placed.json().data[0].id as number;
const viewer = await signedIn(await personIn(h, { workspaceId: ws.workspaceId }, 'viewer'));
const publisherOwner = await signedIn(await personIn(h, { publisherId: p.publisherId }, 'owner'));
const w = `/app/w/${ws.workspaceId}`;
const pp = `/app/p/${p.publisherId}`;
const thisMonth = monthOf(h.clock.now());

describe('statements in the console', () => {
  it('a viewer picks a month and gets its printable statement, which says what the API says', async () => {
    const list = await viewer.get(`${w}/statements`);
    expect(list.statusCode).toBe(200);
    expect(list.body).toContain(`<input type="month" id="month" name="month" value="${thisMonth}"`);
    expect(list.body).toContain(`href="${w}/statements/${thisMonth}"`);
    expect(list.body).toContain('aria-current="page">Statements</a>');
    const picked = await viewer.get(`${w}/statements?month=${thisMonth}`);
    expect(picked.statusCode).toBe(303);
    expect(picked.headers.location).toBe(`${w}/statements/${thisMonth}`);

    const doc = await viewer.get(`${w}/statements/${thisMonth}`);
    expect(doc.statusCode).toBe(200);
    expect(doc.headers['content-type']).toMatch(/^text\/html/);
    expect(doc.body).toContain('href="/app/assets/invoice.css"');
    expect(doc.body).toContain('Papers &amp; Co');
    const api = (await h.app.inject({ method: 'GET', url: `/api/v1/statements?month=${thisMonth}`, headers: bearer(ws.readKey) })).json().data;
    expect(api.closing).toBe(50_000);
    for (const a of api.accounts) expect(doc.body).toContain(`closing ${a.closing_formatted}`);
    expect(doc.body).toContain('Order placed (held)');
    expect(doc.body).toContain(`Order ${orderId}`);
    expect(doc.body).toContain('So far: the month is not over');
  });

  it('a publisher’s member reads the publisher’s statement: pending and payable', async () => {
    const doc = await publisherOwner.get(`${pp}/statements/${thisMonth}`);
    expect(doc.statusCode).toBe(200);
    expect(doc.body).toContain('Pending (in the guarantee window)');
    expect(doc.body).toContain('Payable');
  });

  it('another tenant’s statement is 404, as are its downloads', async () => {
    for (const path of [`/app/w/${other.workspaceId}/statements/${thisMonth}`, `/app/w/${other.workspaceId}/statements`, `/app/w/${other.workspaceId}/orders.csv`, `/app/w/${other.workspaceId}/ledger.csv`]) {
      expect((await viewer.get(path)).statusCode, path).toBe(404);
    }
    for (const path of [`/app/p/${otherPublisher.publisherId}/statements/${thisMonth}`, `/app/p/${otherPublisher.publisherId}/orders.csv`, `/app/p/${p.publisherId}/statements/${thisMonth}`]) {
      expect((await (path.includes(`/p/${p.publisherId}/`) ? viewer : publisherOwner).get(path)).statusCode, path).toBe(404);
    }
    // A publisher has no workspace ledger.
    expect((await publisherOwner.get(`${pp}/ledger.csv`)).statusCode).toBe(404);
  });

  it('a bad or future month is a 422 page', async () => {
    for (const month of ['2026-13', 'soon', '9999-01']) {
      const res = await viewer.get(`${w}/statements/${month}`);
      expect(res.statusCode, month).toBe(422);
    }
  });
});

describe('CSV downloads in the console', () => {
  it('the orders and the ledger, the same bytes the API exports; linked from Orders, Funds and Statements', async () => {
    const orders = await viewer.get(`${w}/orders.csv`);
    expect(orders.statusCode).toBe(200);
    expect(orders.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(orders.headers['content-disposition']).toBe('attachment; filename="orders.csv"');
    const api = await h.app.inject({ method: 'GET', url: '/api/v1/orders', headers: { ...bearer(ws.readKey), accept: 'text/csv' } });
    expect(orders.body).toBe(api.body);
    expect(orders.body).toContain(",'=1+1,");
    const ledger = await viewer.get(`${w}/ledger.csv`);
    const apiLedger = await h.app.inject({ method: 'GET', url: '/api/v1/ledger', headers: { ...bearer(ws.readKey), accept: 'text/csv' } });
    expect(ledger.body).toBe(apiLedger.body);
    const filtered = await viewer.get(`${w}/orders.csv?status=completed`);
    expect(filtered.body.split('\r\n').filter(Boolean)).toHaveLength(1);
    const pub = await publisherOwner.get(`${pp}/orders.csv`);
    const apiPub = await h.app.inject({ method: 'GET', url: '/api/v1/publisher/orders', headers: { ...bearer(p.publisherKey), accept: 'text/csv' } });
    expect(pub.body).toBe(apiPub.body);
    expect(pub.headers['content-disposition']).toBe('attachment; filename="publisher-orders.csv"');

    expect((await viewer.get(`${w}/orders?status=awaiting_acceptance`)).body).toContain(`href="${w}/orders.csv?status=awaiting_acceptance" download`);
    expect((await viewer.get(`${w}/funds`)).body).toContain(`href="${w}/ledger.csv" download`);
    expect((await publisherOwner.get(`${pp}/orders`)).body).toContain(`href="${pp}/orders.csv" download`);
    expect((await publisherOwner.get(`${pp}/statements`)).body).not.toContain('ledger.csv');
  });
});
