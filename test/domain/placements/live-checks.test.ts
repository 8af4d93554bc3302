import { describe, expect, it } from 'vitest';
import { type LiveCheck, liveChecks, livePassed, type PlacementExpectation } from '../../../src/domain/placements/live-checks.js';
import type { PageResult } from '../../../src/outbound/page-fetch.js';
import { shoeOrder } from '../../helpers/placement-expectation.js';

const order = shoeOrder;
const page = (body: string, more: Partial<Extract<PageResult, { ok: true }>> = {}): PageResult => ({
  ok: true,
  status: 200,
  finalUrl: 'https://outlet.example/post',
  headers: { 'content-type': 'text/html' },
  body,
  redirects: [],
  ...more,
});
const link = (attrs = '', text = 'Best running shoes', href = 'https://buyer.example/shoes') => `<p>Read <a href="${href}" ${attrs}>${text}</a>.</p>`;
const check = (checks: LiveCheck[], name: string) => checks.find((c) => c.name === name);
const run = (body: string, expected: Partial<PlacementExpectation> = {}, more: Partial<Extract<PageResult, { ok: true }>> = {}) => liveChecks(page(body, more), { ...order, ...expected });

describe('live checks', () => {
  it('a page with the ordered link passes every check, in a fixed order', () => {
    const checks = run(`<html><body><article>${link('rel="noopener"')}</article></body></html>`);
    expect(checks.map((c) => [c.name, c.status])).toEqual([
      ['page', 'pass'],
      ['domain', 'pass'],
      ['link', 'pass'],
      ['anchor', 'pass'],
      ['rel', 'pass'],
      ['indexable', 'pass'],
    ]);
    expect(livePassed(checks)).toBe(true);
    expect(check(checks, 'rel')!.detail).toBe('The link is followed (rel="noopener").');
  });

  describe('page', () => {
    it('a page that could not be read gets only the failing page check, with the fetcher\'s reason', () => {
      const failed: PageResult = { ok: false, reason: 'timeout', detail: 'No complete answer from outlet.example within 300 ms (https://outlet.example/post).', finalUrl: order.liveUrl, redirects: [] };
      expect(liveChecks(failed, order)).toEqual([{ name: 'page', status: 'fail', detail: failed.detail }]);
    });

    it('any status but 200 fails, naming it and the redirects that led there', () => {
      expect(run(link(), {}, { status: 404 })).toEqual([{ name: 'page', status: 'fail', detail: 'https://outlet.example/post answered 404, not 200.' }]);
      const moved = run(link(), {}, { finalUrl: 'https://outlet.example/new', redirects: ['https://outlet.example/new'] });
      expect(check(moved, 'page')).toEqual({ name: 'page', status: 'pass', detail: 'https://outlet.example/new answered 200 after 1 redirect from https://outlet.example/post.' });
    });
  });

  it('page: a page nested deeper than browsers nest is not read (its parse would take minutes)', () => {
    expect(livePassed(run('<div>'.repeat(900) + link()))).toBe(true);
    expect(run('<div>'.repeat(1001) + link())).toEqual([
      { name: 'page', status: 'fail', detail: 'https://outlet.example/post answered 200, but nests its elements more than 1000 deep; it was not read.' },
    ]);
  });

  it('domain: the page must end on the outlet or a subdomain', () => {
    expect(check(run(link(), {}, { finalUrl: 'https://blog.outlet.example/post' }), 'domain')!.status).toBe('pass');
    expect(check(run(link(), {}, { finalUrl: 'https://elsewhere.example/landing' }), 'domain')).toEqual({
      name: 'domain',
      status: 'fail',
      detail: 'The page ended on elsewhere.example (https://elsewhere.example/landing), not on outlet.example or one of its subdomains.',
    });
  });

  describe('link', () => {
    it('finds the target however the href is written: relative to <base>, tracked, reordered', () => {
      const base = '<base href="https://buyer.example/"><p><a href="shoes/?utm_source=outlet#top">Best running shoes</a></p>';
      expect(check(run(base), 'link')!.status).toBe('pass');
      expect(check(run(link('', 'Best running shoes', 'http://BUYER.example/shoes/?gclid=1')), 'link')!.status).toBe('pass');
      expect(check(run(link('', 'x', '/shoes'), { targetUrl: 'https://outlet.example/shoes', anchorText: null }), 'link')!.status).toBe('pass');
    });

    it('without the link, fails it and marks anchor and rel not checked; names a near miss', () => {
      const checks = run(`${link('', 'shoes', 'https://buyer.example/boots')}<a href="/about">About</a>`);
      expect(checks.slice(2, 5)).toEqual([
        { name: 'link', status: 'fail', detail: 'No link to https://buyer.example/shoes among the page\'s 2 links; a link to buyer.example goes to https://buyer.example/boots instead.' },
        { name: 'anchor', status: 'fail', detail: 'Not checked: there is no link to https://buyer.example/shoes.' },
        { name: 'rel', status: 'fail', detail: 'Not checked: there is no link to https://buyer.example/shoes.' },
      ]);
      expect(livePassed(checks)).toBe(false);
      expect(check(run('<p>No links at all</p>'), 'link')!.detail).toBe("No link to https://buyer.example/shoes among the page's 0 links.");
      expect(check(run(link('', 'x', 'https://www.buyer.example/shoes')), 'link')!.status).toBe('fail');
    });
  });

  describe('anchor', () => {
    it('compares the text with entities decoded, white space collapsed, any case', () => {
      expect(check(run(link('', '  best&nbsp;<b>RUNNING</b>\n shoes ')), 'anchor')).toEqual({ name: 'anchor', status: 'pass', detail: 'The link reads "best RUNNING shoes".' });
      expect(check(run(link('', 'Fish &amp; chips'), { anchorText: 'fish & chips' }), 'anchor')!.status).toBe('pass');
      expect(check(run(link('', '<img src="s.png" alt="Best running shoes">')), 'anchor')!.status).toBe('pass');
    });

    it('fails another text, naming both', () => {
      expect(check(run(link('', 'click here')), 'anchor')).toEqual({ name: 'anchor', status: 'fail', detail: 'The link reads "click here", not "Best running shoes".' });
    });

    it('accepts any text when none was ordered', () => {
      expect(check(run(link('', 'click here'), { anchorText: null }), 'anchor')).toEqual({ name: 'anchor', status: 'pass', detail: 'No anchor text was ordered; any is accepted (the link reads "click here").' });
    });

    it('of several links to the target, passes when one has the right text and rel', () => {
      const body = link('rel="nofollow"') + link('', 'here') + link();
      const checks = run(body);
      expect(check(checks, 'link')!.detail).toBe('The page links to https://buyer.example/shoes (3 links to it; the best is judged).');
      expect(livePassed(checks)).toBe(true);
      // Right text only on a nofollow link, followed only with the wrong text: judged on the right text.
      const split = run(link('rel="nofollow"') + link('', 'here'));
      expect([check(split, 'anchor')!.status, check(split, 'rel')!.status]).toEqual(['pass', 'fail']);
    });
  });

  describe('rel', () => {
    it('a dofollow offer fails on nofollow, ugc or sponsored, naming what it found', () => {
      for (const rel of ['nofollow', 'UGC', 'noopener sponsored']) {
        expect(check(run(link(`rel="${rel}"`)), 'rel')!.status, rel).toBe('fail');
      }
      expect(check(run(link('rel="nofollow noopener"')), 'rel')!.detail).toBe('The link has rel="nofollow noopener": nofollow makes it not followed; the offer is dofollow.');
    });

    it('a nofollow offer needs one of them', () => {
      expect(check(run(link('rel="sponsored"'), { linkType: 'nofollow' }), 'rel')).toEqual({ name: 'rel', status: 'pass', detail: 'The link is marked sponsored (rel="sponsored").' });
      expect(check(run(link(), { linkType: 'nofollow' }), 'rel')).toEqual({
        name: 'rel',
        status: 'fail',
        detail: 'The link has no rel attribute: the offer is nofollow, so it needs nofollow, ugc or sponsored.',
      });
    });
  });

  describe('indexable', () => {
    it('fails on noindex or none in a robots or googlebot meta tag', () => {
      for (const meta of ['<meta name="robots" content="noindex, follow">', '<meta name="GoogleBot" content="none">', '<META NAME="robots" CONTENT="NOINDEX">']) {
        expect(check(run(meta + link()), 'indexable')!.status, meta).toBe('fail');
      }
      expect(check(run('<meta name="robots" content="noindex, follow">' + link()), 'indexable')!.detail).toBe(
        'A robots meta tag says "noindex, follow": search engines will not index the page.',
      );
      expect(check(run('<meta name="robots" content="nofollow, noarchive"><meta name="bingbot" content="noindex">' + link()), 'indexable')!.status).toBe('pass');
    });

    it('fails on noindex in X-Robots-Tag for every crawler or googlebot, not for another crawler', () => {
      const header = (value: string) => check(run(link(), {}, { headers: { 'x-robots-tag': value } }), 'indexable')!;
      expect(header('noindex')).toEqual({ name: 'indexable', status: 'fail', detail: 'The X-Robots-Tag header says "noindex": search engines will not index the page.' });
      expect(header('googlebot: nofollow, noindex').status).toBe('fail');
      expect(header('unavailable_after: 25 Jun 2030 15:00:00 PST, noindex').status).toBe('fail');
      expect(header('otherbot: noindex, nofollow').status).toBe('pass');
      expect(header('noarchive').status).toBe('pass');
    });
  });

  describe('disclosure', () => {
    const sponsored = { sponsoredLabel: true, language: 'de' };

    it('is only checked for offers that promise a label', () => {
      expect(check(run(link()), 'disclosure')).toBeUndefined();
    });

    it('passes on a word of the outlet\'s language, or English, in the link\'s article', () => {
      const article = (label: string) => `<nav>Home</nav><article><header><span class="label">${label}</span></header><h1>Title</h1>${link()}</article>`;
      expect(check(run(article('Anzeige'), sponsored), 'disclosure')).toEqual({ name: 'disclosure', status: 'pass', detail: '"Anzeige" appears in the link\'s <article>.' });
      expect(check(run(article('Bezahlte   Partnerschaft'), sponsored), 'disclosure')!.detail).toBe('"Bezahlte Partnerschaft" appears in the link\'s <article>.');
      expect(check(run(article('Sponsored post'), sponsored), 'disclosure')!.status).toBe('pass');
      expect(check(run(article('<span aria-hidden="true">Werbung</span>'), sponsored), 'disclosure')!.status).toBe('pass');
      expect(check(run(`<article>Annons ${link()}</article>`, { sponsoredLabel: true, language: 'sv-FI' }), 'disclosure')!.status).toBe('pass');
      expect(check(run(`<article>Annons ${link()}</article>`, { sponsoredLabel: true, language: 'xx' }), 'disclosure')!.status).toBe('warn');
      expect(check(run(`<body><p>Publicité</p>${link()}</body>`, { sponsoredLabel: true, language: 'fr' }), 'disclosure')).toEqual({
        name: 'disclosure',
        status: 'pass',
        detail: '"Publicité" appears on the page.',
      });
    });

    it('warns, never fails, when there is none near the link: elsewhere, hidden, or part of a word', () => {
      const cases = [
        `<aside>Anzeige</aside><article>${link()}</article>`,
        `<article><span hidden>Anzeige</span><script>var label = "Anzeige"</script><p style="display: none">Werbung</p>${link()}</article>`,
        `<article><p>Anzeigenmarkt und Werbungskosten</p>${link()}</article>`,
      ];
      for (const body of cases) {
        const checks = run(body, sponsored);
        expect(check(checks, 'disclosure'), body).toEqual({
          name: 'disclosure',
          status: 'warn',
          detail: 'No sponsored label (such as "Anzeige", "Werbung", "gesponsert") in the link\'s <article>; the offer promises one.',
        });
        expect(livePassed(checks)).toBe(true);
      }
    });
  });
});
