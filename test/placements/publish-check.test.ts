import { describe, expect, it } from 'vitest';
import { setupApp } from '../helpers/app.js';
import { bearer } from '../helpers/fixtures.js';
import { orderKit } from '../helpers/orders.js';
import { hang, html, startPages } from '../helpers/pages.js';

// The check runs in the server, right after publication: the publish answer does not wait for it,
// and the order carries its results once it is done (docs/link-guarantee.md).

const DOMAIN = 'published-news.test';
const TARGET = 'https://buyer.example/product';
const pages = {
  '/good': html(`<html><body><p>See <a href="${TARGET}">our product</a>.</p></body></html>`),
  '/slow': hang,
};
const site = await startPages(pages);
const h = await setupApp({
  OUTBOUND_ALLOW_LOOPBACK: true,
  OUTBOUND_RESOLVE: new Map([[DOMAIN, '127.0.0.1']]),
  LINK_CHECK_POLL_MS: 50,
  LINK_CHECK_TIMEOUT_MS: 1_000,
});
const { accepted, pub, setup } = orderKit(h);
const { ws, p } = await setup([{ content_by: 'buyer', sponsored_label: false }], 1_000_000, DOMAIN);

async function publishedOrder(path: string) {
  const id = await accepted(ws.spendKey, p.publisherKey, p.offers[0]!.id, TARGET);
  const published = await pub(p.publisherKey, `${id}/publish`, { live_url: site.url(path, DOMAIN) });
  expect(published.statusCode).toBe(200);
  return { id, published: published.json().data };
}

/** The order's live_checks once the server has checked it (a hang detector, not a timing). */
async function checksOf(id: number) {
  for (let i = 0; i < 400; i++) {
    const order = (await h.app.inject({ method: 'GET', url: `/api/v1/orders/${id}`, headers: bearer(ws.readKey) })).json().data;
    if (order.live_checks.length > 0) return order.live_checks as Array<{ name: string; status: string; detail: string }>;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`order ${id} was never checked`);
}

describe('the check after publication', () => {
  it('publish answers before the check; the server then checks the page and the order shows it', async () => {
    const { id, published } = await publishedOrder('/good');
    expect(published).toMatchObject({ status: 'live_review', live_checks: [], live_checked_at: null });
    const checks = await checksOf(id);
    expect(checks.filter((c) => c.status === 'fail')).toEqual([]);
    expect(checks.map((c) => c.name)).toEqual(expect.arrayContaining(['page', 'link', 'anchor', 'rel', 'indexable', 'domain']));
  });

  it('a page that never answers does not hold up the publish answer, and fails its check after the timeout', async () => {
    const { id, published } = await publishedOrder('/slow');
    expect(published.live_checks).toEqual([]);
    const checks = await checksOf(id);
    expect(checks.find((c) => c.name === 'page')).toMatchObject({ status: 'fail' });
    expect(checks.find((c) => c.name === 'page')!.detail).toMatch(/1000 ms|1 s/);
  });
});
