import { describe, expect, it } from 'vitest';
import { setupApp } from '../../helpers/app.js';
import { bearer } from '../../helpers/fixtures.js';
import { orderKit } from '../../helpers/orders.js';
import { hang, html, startPages } from '../../helpers/pages.js';

// The check runs in the server, right after publication: the publish answer does not wait for it,
// and the order carries its results once it is done (docs/link-guarantee.md).

const DOMAIN = 'published-news.test';
const TARGET = 'https://buyer.example/product';
const good = html(`<html><body><p>See <a href="${TARGET}">our product</a>.</p></body></html>`);
/** Answers once the test lets it: a page as slow as the test needs, without a clock. */
let release: () => void = () => {};
const held = new Promise<void>((resolve) => (release = resolve));
const pages = {
  '/good': good,
  '/slow': hang,
  '/held': ((req, res) => void held.then(() => good(req, res))) as typeof good,
  '/after-held': good,
};
const site = await startPages(pages);
const h = await setupApp({
  OUTBOUND_ALLOW_LOOPBACK: true,
  OUTBOUND_RESOLVE: new Map([[DOMAIN, '127.0.0.1']]),
  LINK_CHECK_POLL_MS: 50,
  LINK_CHECK_TIMEOUT_MS: 1_000,
});
// A page held for as long as a test needs calls for a longer timeout: a server of its own.
const patient = await setupApp({
  OUTBOUND_ALLOW_LOOPBACK: true,
  OUTBOUND_RESOLVE: new Map([[DOMAIN, '127.0.0.1']]),
  LINK_CHECK_POLL_MS: 50,
  LINK_CHECK_TIMEOUT_MS: 60_000,
});
/** A workspace and an outlet on DOMAIN, on one server; `publish` places, accepts and publishes an order there. */
async function market(server: typeof h) {
  const { accepted, pub, setup } = orderKit(server);
  const { ws, p } = await setup([{ content_by: 'buyer', sponsored_label: false }], 1_000_000, DOMAIN);
  return {
    server,
    ws,
    async publish(path: string) {
      const id = await accepted(ws.spendKey, p.publisherKey, p.offers[0]!.id, TARGET);
      const published = await pub(p.publisherKey, `${id}/publish`, { live_url: site.url(path, DOMAIN) });
      expect(published.statusCode).toBe(200);
      return { id, published: published.json().data };
    },
  };
}
const m = await market(h);
const publishedOrder = (path: string) => m.publish(path);

/** The order's live_checks once the server has checked it (a hang detector, not a timing). */
async function checksOf(id: number, at = m) {
  for (let i = 0; i < 400; i++) {
    const order = (await at.server.app.inject({ method: 'GET', url: `/api/v1/orders/${id}`, headers: bearer(at.ws.readKey) })).json().data;
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

  it('a page that takes its time holds up no other check', async () => {
    const at = await market(patient);
    const slow = await at.publish('/held');
    // The held page is being fetched before the next placement is published.
    for (let i = 0; i < 400 && !site.received.some((r) => r.url === '/held'); i++) await new Promise((r) => setTimeout(r, 50));
    expect(site.received.some((r) => r.url === '/held')).toBe(true);
    const quick = await at.publish('/after-held');
    const checks = await checksOf(quick.id, at);
    expect(checks.filter((c) => c.status === 'fail')).toEqual([]);
    const waiting = (await patient.app.inject({ method: 'GET', url: `/api/v1/orders/${slow.id}`, headers: bearer(at.ws.readKey) })).json().data;
    expect(waiting.live_checks).toEqual([]);
    release();
    expect((await checksOf(slow.id, at)).filter((c) => c.status === 'fail')).toEqual([]);
  });
});
