import { monitorEventLoopDelay } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import { publisherOrder } from '../../../src/schemas/orders.js';
import { setupApp } from '../../helpers/app.js';
import { bearer } from '../../helpers/fixtures.js';
import { DAY } from '../../helpers/orders.js';
import { orderKit } from '../../helpers/orders.js';
import { html, startPages } from '../../helpers/pages.js';

// A publisher's page built to be slow to read must not stall the API (docs/link-checks.md): pages
// are read in worker threads, with a budget of time and links, and re-checks of one order are
// limited. No timing is asserted as speed: the event loop's longest stall while six heavy re-checks
// run must stay under a second and a half, where reading these pages on it took 3 to 6 s each.

const DOMAIN = 'heavy-news.test';
const TARGET = 'https://buyer.example/product';
// Just under the 2 MB a fetch reads: 995 nested <div>s around 140,000 closed links (`<a href=#>`;
// 262,000 `<a></a>` without href cost a fifth of it), then the ordered link. Read on the main
// thread, one such page stalled it for about 3 s.
const heavy = `<html><body>${'<div>'.repeat(995)}${'<a href=#></a>'.repeat(140_000)}${'</div>'.repeat(995)}<p><a href="${TARGET}">our product</a></p></body></html>`;
const pages = { '/heavy': html(heavy), '/light': html(`<p><a href="${TARGET}">our product</a></p>`) };
const site = await startPages(pages);
const h = await setupApp({
  OUTBOUND_ALLOW_LOOPBACK: true,
  OUTBOUND_RESOLVE: new Map([[DOMAIN, '127.0.0.1']]),
  LINK_CHECK_TIMEOUT_MS: 60_000,
  LINK_CHECKS_PER_DOMAIN_PER_SECOND: 1000,
});
const { accepted, pub, setup } = orderKit(h);
const { ws, p } = await setup([{ content_by: 'buyer', sponsored_label: false }], 1_000_000, DOMAIN);

async function published(path: string) {
  const id = await accepted(ws.spendKey, p.publisherKey, p.offers[0]!.id, TARGET);
  expect((await pub(p.publisherKey, `${id}/publish`, { live_url: site.url(path, DOMAIN) })).statusCode).toBe(200);
  return id;
}

describe('heavy pages', () => {
  it('GET /api/v1/me keeps answering while six re-checks of a 2 MB page of 995 nested divs and 140,000 links run', async () => {
    expect(heavy.length).toBeGreaterThan(1.85 * 1024 * 1024);
    const ids = [];
    for (let i = 0; i < 6; i++) ids.push(await published('/heavy'));

    const stalls = monitorEventLoopDelay({ resolution: 10 });
    stalls.enable();
    let settled = 0;
    const rechecks = ids.map((id) =>
      pub(p.publisherKey, `${id}/recheck`).finally(() => {
        settled++;
      }),
    );
    const me = await h.app.inject({ method: 'GET', url: '/api/v1/me', headers: bearer(ws.readKey) });
    const settledWhenMeAnswered = settled;
    const answers = await Promise.all(rechecks);
    stalls.disable();

    expect(me.statusCode).toBe(200);
    expect(settledWhenMeAnswered).toBeLessThan(6);
    expect(stalls.max / 1e6).toBeLessThan(1500);
    for (const answer of answers) {
      expect(answer.statusCode).toBe(200);
      // Read in part, the page is not judged: the check fails, saying why.
      expect(publisherOrder.parse(answer.json().data).live_checks).toEqual([
        { name: 'page', status: 'fail', detail: `${site.url('/heavy', DOMAIN)} answered 200, but has more than 20,000 links; it was not read.` },
      ]);
    }
  });

  it('a re-check of the same order within a minute is 429 with Retry-After; after it, allowed again', async () => {
    const id = await published('/light');
    const first = await pub(p.publisherKey, `${id}/recheck`);
    expect(first.statusCode).toBe(200);
    h.clock.advance(20_000);
    const again = await pub(p.publisherKey, `${id}/recheck`);
    expect(again.statusCode).toBe(429);
    expect(again.headers['retry-after']).toBe('40');
    expect(again.json()).toMatchObject({ code: 'rate_limited', retry_after: 40, request_id: expect.any(String) });
    expect(again.json().message).toMatch(/re-checked less than 60 seconds ago/);
    // Another order is not held up by this one.
    expect((await pub(p.publisherKey, `${await published('/light')}/recheck`)).statusCode).toBe(200);
    h.clock.advance(40_000);
    expect((await pub(p.publisherKey, `${id}/recheck`)).statusCode).toBe(200);
    h.clock.advance(DAY);
  });
});
