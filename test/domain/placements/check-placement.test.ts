import { afterAll, describe, expect, it } from 'vitest';
import { checkPlacement, type PlacementExpectation } from '../../../src/domain/placements/live-checks.js';
import { createOutboundClient } from '../../../src/outbound/http-client.js';
import { hang, html, type Page, redirect, startPages } from '../../helpers/pages.js';

// Published pages served on loopback under the outlet's name (OUTBOUND_RESOLVE maps outlet.test
// and other.test to 127.0.0.1), fetched and checked as the service will.
const resolve = new Map([
  ['outlet.test', '127.0.0.1'],
  ['other.test', '127.0.0.1'],
]);
const post = (inner: string) => `<!doctype html><html><head><title>Post</title></head><body><article><h1>Spring picks</h1><p>Our pick: ${inner}</p></article></body></html>`;
const theLink = '<a href="https://buyer.example/shoes?utm_source=outlet">Best running shoes</a>';

describe('checkPlacement against real pages', async () => {
  const client = createOutboundClient({ allowLoopback: true, resolve });
  afterAll(() => client.close());
  const pages: Record<string, Page> = {};
  const site = await startPages(pages);
  const order = (path: string, more: Partial<PlacementExpectation> = {}): PlacementExpectation => ({
    liveUrl: site.url(path, 'outlet.test'),
    targetUrl: 'https://buyer.example/shoes',
    anchorText: 'best running shoes',
    linkType: 'dofollow',
    sponsoredLabel: false,
    outletDomain: 'outlet.test',
    language: 'en',
    ...more,
  });
  const failing = async (path: string, more: Partial<PlacementExpectation> = {}, timeoutMs = 5000) => {
    const r = await checkPlacement(client, order(path, more), timeoutMs);
    expect(r.passed, path).toBe(false);
    return r.checks.filter((c) => c.status === 'fail');
  };

  it('a page with the ordered link passes', async () => {
    pages['/good'] = html(post(theLink));
    const r = await checkPlacement(client, order('/good', { sponsoredLabel: true }), 5000);
    expect(r).toMatchObject({ passed: true, status: 200, finalUrl: site.url('/good', 'outlet.test') });
    expect(r.checks.map((c) => [c.name, c.status])).toEqual([
      ['page', 'pass'],
      ['domain', 'pass'],
      ['link', 'pass'],
      ['anchor', 'pass'],
      ['rel', 'pass'],
      ['indexable', 'pass'],
      ['disclosure', 'warn'],
    ]);
  });

  it('a page without the link fails link', async () => {
    pages['/no-link'] = html(post('<a href="https://elsewhere.example/">a shop</a>'));
    expect((await failing('/no-link')).map((c) => c.name)).toEqual(['link', 'anchor', 'rel']);
  });

  it('a nofollow link on a dofollow offer fails rel', async () => {
    pages['/nofollow'] = html(post(theLink.replace('<a ', '<a rel="nofollow" ')));
    expect(await failing('/nofollow')).toEqual([{ name: 'rel', status: 'fail', detail: 'The link has rel="nofollow": nofollow makes it not followed; the offer is dofollow.' }]);
  });

  it('another anchor text fails anchor', async () => {
    pages['/anchor'] = html(post('<a href="https://buyer.example/shoes">this shop</a>'));
    expect(await failing('/anchor')).toEqual([{ name: 'anchor', status: 'fail', detail: 'The link reads "this shop", not "best running shoes".' }]);
  });

  it('noindex, in a meta tag or the X-Robots-Tag header, fails indexable', async () => {
    pages['/noindex-meta'] = html(post(theLink).replace('<title>', '<meta name="robots" content="noindex"><title>'));
    pages['/noindex-header'] = html(post(theLink), { 'x-robots-tag': 'noindex, nofollow' });
    expect(await failing('/noindex-meta')).toEqual([{ name: 'indexable', status: 'fail', detail: 'A robots meta tag says "noindex": search engines will not index the page.' }]);
    expect(await failing('/noindex-header')).toEqual([
      { name: 'indexable', status: 'fail', detail: 'The X-Robots-Tag header says "noindex, nofollow": search engines will not index the page.' },
    ]);
  });

  it('a redirect to another domain fails domain, naming where it ended', async () => {
    pages['/moved'] = redirect(site.url('/landing', 'other.test'), 301);
    pages['/landing'] = html(post(theLink));
    expect(await failing('/moved')).toEqual([
      {
        name: 'domain',
        status: 'fail',
        detail: `The page ended on other.test (${site.url('/landing', 'other.test')}), not on outlet.test or one of its subdomains.`,
      },
    ]);
  });

  it('a 404, a 5 MB page and a page that never answers fail page, and only page', async () => {
    pages['/big'] = html(post(theLink) + 'x'.repeat(5 * 1024 * 1024));
    pages['/hang'] = hang;
    expect(await failing('/gone')).toEqual([{ name: 'page', status: 'fail', detail: `${site.url('/gone', 'outlet.test')} answered 404, not 200.` }]);
    expect(await failing('/big')).toEqual([
      { name: 'page', status: 'fail', detail: `The page at ${site.url('/big', 'outlet.test')} is larger than 2 MB (stopped reading after 2 MB).` },
    ]);
    expect(await failing('/hang', {}, 300)).toEqual([
      { name: 'page', status: 'fail', detail: `No complete answer from outlet.test:${site.port} within 300 ms (${site.url('/hang', 'outlet.test')}): connected, but no reply began.` },
    ]);
  });
});

describe('checkPlacement with loopback not allowed', async () => {
  const strict = createOutboundClient({ allowLoopback: false, resolve });
  afterAll(() => strict.close());
  const site = await startPages({ '/post': html(post(theLink)) });

  it('refuses the page, however its address is reached, and sends nothing', async () => {
    for (const liveUrl of [site.url('/post', 'outlet.test'), site.url('/post'), 'http://169.254.169.254/latest/meta-data/']) {
      const r = await checkPlacement(strict, { liveUrl, targetUrl: 'https://buyer.example/shoes', anchorText: null, linkType: 'dofollow', sponsoredLabel: false, outletDomain: 'outlet.test', language: 'en' }, 5000);
      expect(r, liveUrl).toMatchObject({ passed: false, status: null, checks: [{ name: 'page', status: 'fail', detail: expect.stringMatching(/^Refused to connect to /) }] });
      expect(r.checks).toHaveLength(1);
    }
    expect(site.received).toEqual([]);
  });
});
