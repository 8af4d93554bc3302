import { describe, expect, it } from 'vitest';
import { setupApp } from '../../helpers/app.js';
import { linkCheckerFor } from '../../helpers/link-checker.js';
import { orderKit } from '../../helpers/orders.js';
import { html, redirect, startPages } from '../../helpers/pages.js';

// At most LINK_CHECKS_PER_DOMAIN_PER_SECOND fetches of one outlet's domain a second, however many
// of its placements are due at once (docs/link-guarantee.md). Only the lower bound is asserted:
// nothing is fetched before its turn.

const DOMAIN = 'paced-news.test';
const VICTIM = 'elsewhere.test';
const OTHERS = [1, 2, 3, 4, 5].map((i) => `redirecting-${i}.test`);
const TARGET = 'https://buyer.example/product';
const arrivals: number[] = [];
const victimArrivals: number[] = [];
const page = html(`<p><a href="${TARGET}">our product</a></p>`);
const pages = {
  '/paced': (req, res) => {
    arrivals.push(performance.now());
    page(req, res);
  },
  '/landing': (req, res) => {
    victimArrivals.push(performance.now());
    page(req, res);
  },
} as Parameters<typeof startPages>[0];
const site = await startPages(pages);
pages['/away'] = redirect(site.url('/landing', VICTIM));
const h = await setupApp({
  OUTBOUND_ALLOW_LOOPBACK: true,
  OUTBOUND_RESOLVE: new Map([DOMAIN, VICTIM, ...OTHERS].map((d) => [d, '127.0.0.1'])),
  LINK_CHECKS_PER_DOMAIN_PER_SECOND: 4,
});
const { accepted, pub, setup } = orderKit(h);
const { ws, p } = await setup([{ content_by: 'buyer', sponsored_label: false }], 1_000_000, DOMAIN);

describe('link check pacing', () => {
  it('fetches one domain at most 4 times a second: 5 due checks take at least a second', async () => {
    for (let i = 0; i < 5; i++) {
      const id = await accepted(ws.spendKey, p.publisherKey, p.offers[0]!.id, TARGET);
      await pub(p.publisherKey, `${id}/publish`, { live_url: site.url('/paced', DOMAIN) });
    }
    const checker = linkCheckerFor(h);
    const started = performance.now();
    expect(await checker.runDue()).toBe(5);
    expect(arrivals).toHaveLength(5);
    // The fifth fetch waits for four quarter-seconds after the first could start.
    expect(arrivals[4]! - started).toBeGreaterThanOrEqual(1000 - 1);
  });

  it('paces the host actually fetched: five outlets redirecting to one host reach it at most 4 times a second', async () => {
    for (const domain of OTHERS) {
      const other = await setup([{ content_by: 'buyer', sponsored_label: false }], 1_000_000, domain);
      const id = await accepted(other.ws.spendKey, other.p.publisherKey, other.p.offers[0]!.id, TARGET);
      await pub(other.p.publisherKey, `${id}/publish`, { live_url: site.url('/away', domain) });
    }
    const checker = linkCheckerFor(h);
    const started = performance.now();
    expect(await checker.runDue()).toBe(5);
    expect(victimArrivals).toHaveLength(5);
    // Each outlet's own first hop is not held up by the others; the host they all lead to is.
    expect(victimArrivals[4]! - started).toBeGreaterThanOrEqual(1000 - 1);
  });
});
