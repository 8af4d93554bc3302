import { describe, expect, it } from 'vitest';
import { prefersHtml } from '../../src/http/front-door.js';
import { setupApp } from '../helpers/app.js';
import { consoleClient } from '../console/helpers.js';

// The site root (docs/http.md): a browser that opens http://127.0.0.1:3000/ lands on the console;
// an API client keeps the JSON 404 (Interface A's error shape) it always got there.

const h = await setupApp();

const BROWSERS = [
  'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8', // Chromium, Firefox
  'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8', // Safari
  'TEXT/HTML', // media types are case-insensitive
  'application/json;q=0.5, text/html',
];
const API_CLIENTS = [
  undefined, // no Accept: a script's fetch
  '*/*', // curl
  'application/json',
  'application/json, text/plain, */*', // axios
  'text/html;q=0, */*',
  'text/html, application/json', // equal weights: JSON
  'text/*',
  'image/png',
  'not a media type',
];

describe('GET /', () => {
  it.each(BROWSERS)('a browser (Accept: %s) is sent to the console at /app', async (accept) => {
    const res = await h.app.inject({ method: 'GET', url: '/', headers: { accept } });
    expect(res.statusCode).toBe(302);
    expect(res.headers.location).toBe('/app');
    expect(res.headers.vary).toMatch(/accept/i);
  });

  it.each(API_CLIENTS)('an API client (Accept: %s) gets the JSON 404', async (accept) => {
    const res = await h.app.inject({ method: 'GET', url: '/', headers: accept === undefined ? {} : { accept } });
    expect(res.statusCode).toBe(404);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.headers.location).toBeUndefined();
    expect(res.headers.vary).toMatch(/accept/i);
    expect(res.json()).toMatchObject({ code: 'not_found', message: 'No route GET /.' });
  });

  it('HEAD follows GET; another method is a 405 naming GET, in the same JSON shape', async () => {
    const head = await h.app.inject({ method: 'HEAD', url: '/', headers: { accept: BROWSERS[0] } });
    expect(head.statusCode).toBe(302);
    expect(head.headers.location).toBe('/app');
    const post = await h.app.inject({ method: 'POST', url: '/', headers: { accept: BROWSERS[0], 'content-type': 'application/json' }, payload: '{}' });
    expect(post.statusCode).toBe(405);
    expect(post.headers.allow).toContain('GET');
    expect(post.json()).toMatchObject({ code: 'method_not_allowed' });
  });

  it('a query string changes nothing, and the redirect is not the OpenAPI document\'s', async () => {
    const res = await h.app.inject({ method: 'GET', url: '/?utm_source=x', headers: { accept: BROWSERS[0] } });
    expect(res.statusCode).toBe(302);
    expect(res.headers.location).toBe('/app');
    const doc = (await h.app.inject({ url: '/openapi.json' })).json() as { paths: Record<string, unknown> };
    expect(Object.keys(doc.paths)).not.toContain('/');
  });

  it('the redirect lands on the sign-in page, whose footer links to the API reference at /docs', async () => {
    const browser = consoleClient(h);
    const app = await browser.get('/app');
    expect(app.statusCode).toBe(303);
    const signIn = await browser.get(String(app.headers.location));
    expect(signIn.statusCode).toBe(200);
    expect(signIn.body).toMatch(/<footer class="foot">[\s\S]*<a href="\/docs">API reference<\/a>/);
    expect((await h.app.inject({ url: '/docs' })).statusCode).toBeLessThan(400);
  });

  it('prefersHtml: only a request naming text/html above JSON', () => {
    for (const accept of BROWSERS) expect(prefersHtml(accept), accept).toBe(true);
    for (const accept of API_CLIENTS) expect(prefersHtml(accept), String(accept)).toBe(false);
  });
});
