import { describe, expect, it } from 'vitest';
import { type LiveCheck, liveChecks, type PlacementExpectation } from '../../../src/domain/placements/live-checks.js';
import type { PageResult } from '../../../src/outbound/page-fetch.js';
import { shoeOrder } from '../../helpers/placement-expectation.js';

// How the checks read real-world pages (docs/link-checks.md): what a browser shows is what counts,
// and what search engines accept is what they accept.

const order = shoeOrder;
type Page = Extract<PageResult, { ok: true }>;
const page = (body: string, more: Partial<Page> = {}): PageResult => ({
  ok: true,
  status: 200,
  finalUrl: 'https://outlet.example/post',
  headers: { 'content-type': 'text/html' },
  headersDistinct: { 'content-type': ['text/html'] },
  body,
  redirects: [],
  ...more,
});
const theLink = (attrs = '') => `<a href="https://buyer.example/shoes" ${attrs}>Best running shoes</a>`;
const check = (checks: LiveCheck[], name: string) => checks.find((c) => c.name === name);
const run = (body: string, expected: Partial<PlacementExpectation> = {}, more: Partial<Page> = {}) => liveChecks(page(body, more), { ...order, ...expected });

describe('links a browser does not render do not count', () => {
  for (const [where, html] of [
    ['<template>', `<p>Hi</p><template><p>${theLink()}</p></template>`],
    ['<noscript>', `<p>Hi</p><noscript>${theLink()}</noscript>`],
    ['a <template> nested in an article', `<article><div><template><div><div>${theLink()}</div></div></template></div></article>`],
  ] as const) {
    it(`a link only inside ${where} fails link`, () => {
      const checks = run(html);
      expect(check(checks, 'link')).toMatchObject({ status: 'fail' });
      expect(check(checks, 'link')!.detail).toContain("among the page's 0 links");
    });
  }

  it("a <template> inside the link is not part of its text", () => {
    expect(check(run('<a href="https://buyer.example/shoes">Best <template>cheap </template>running shoes</a>'), 'anchor')).toMatchObject({ status: 'pass' });
  });

  it('a link after a closed <template> or <noscript> still counts', () => {
    expect(check(run(`<template><a href="/x">x</a></template><noscript>no js</noscript><p>${theLink()}</p>`), 'link')).toMatchObject({ status: 'pass' });
  });
});

describe('rel is split on white space and commas', () => {
  it('rel="noopener,nofollow" is not followed: a dofollow offer fails', () => {
    const rel = check(run(theLink('rel="noopener,nofollow"')), 'rel')!;
    expect(rel.status).toBe('fail');
    expect(rel.detail).toContain('nofollow makes it not followed');
  });

  it('rel="sponsored,ugc" and rel="noopener , nofollow" pass a nofollow offer', () => {
    expect(check(run(theLink('rel="sponsored,ugc"'), { linkType: 'nofollow' }), 'rel')!.status).toBe('pass');
    expect(check(run(theLink('rel="noopener , nofollow"'), { linkType: 'nofollow' }), 'rel')!.status).toBe('pass');
  });
});

describe('each X-Robots-Tag header is judged on its own', () => {
  const headers = (...values: string[]): Partial<Page> => ({ headers: { 'x-robots-tag': values.join(', ') }, headersDistinct: { 'x-robots-tag': values } });

  it('"bingbot: noarchive" then a plain "noindex": the noindex is every crawler\'s, and fails', () => {
    const indexable = check(run(theLink(), {}, headers('bingbot: noarchive', 'noindex')), 'indexable')!;
    expect(indexable.status).toBe('fail');
    expect(indexable.detail).toBe('The X-Robots-Tag header says "noindex": search engines will not index the page.');
  });

  it('"bingbot: noindex" alone is bingbot\'s only; "googlebot: noindex" in a second header counts', () => {
    expect(check(run(theLink(), {}, headers('bingbot: noindex')), 'indexable')!.status).toBe('pass');
    expect(check(run(theLink(), {}, headers('noarchive', 'googlebot: noindex')), 'indexable')!.status).toBe('fail');
    expect(check(run(theLink(), {}, headers('bingbot: noindex', 'nosnippet')), 'indexable')!.status).toBe('pass');
  });
});

describe('a canonical link to another domain', () => {
  it('is reported as a warning, naming it; the placement still passes', () => {
    const checks = run(`<head><link rel="canonical" href="https://aggregator.example/copy"></head><body>${theLink()}</body>`);
    expect(check(checks, 'canonical')).toEqual({
      name: 'canonical',
      status: 'warn',
      detail: 'The page names https://aggregator.example/copy, on another domain, as its canonical URL: search engines may index that page instead of this one.',
    });
    expect(checks.filter((c) => c.status === 'fail')).toEqual([]);
  });

  it('on the outlet (or a subdomain), relative, or absent: no warning', () => {
    for (const head of ['<link rel="canonical" href="https://www.outlet.example/post">', '<link rel="canonical" href="/post">', '']) {
      expect(run(`<head>${head}</head><body>${theLink()}</body>`).filter((c) => c.status !== 'pass'), head).toEqual([]);
    }
  });
});

describe('the read of one page is bounded', () => {
  it('past its time budget the read stops and page fails, saying so', () => {
    const body = '<p>x</p>'.repeat(2000) + `<p>${theLink()}</p>`;
    expect(liveChecks(page(body), order, 0)).toEqual([
      { name: 'page', status: 'fail', detail: 'https://outlet.example/post answered 200, but could not be read within 0 ms; it was not read.' },
    ]);
    expect(check(liveChecks(page(body), order), 'link')!.status).toBe('pass');
  });

  it('past 20,000 links (with or without href) the read stops and page fails', () => {
    expect(check(run('<a></a>'.repeat(19_999) + theLink()), 'link')!.status).toBe('pass');
    expect(run('<a></a>'.repeat(20_000) + theLink())).toEqual([
      { name: 'page', status: 'fail', detail: 'https://outlet.example/post answered 200, but has more than 20,000 links; it was not read.' },
    ]);
  });
});
