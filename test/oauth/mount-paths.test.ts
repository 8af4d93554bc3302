import type { IncomingMessage, ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { mayReachMount } from '../../src/http/oauth/mount.js';
import { setupApp } from '../helpers/app.js';
import { listen } from '../mcp/helpers.js';
import { PUBLIC } from './helpers.js';

// The OAuth server is mounted at /oauth and /.well-known/oauth-authorization-server/oauth and
// matched by @fastify/middie's matcher (in any case, percent-decoded, absolute-form targets too);
// requests that cannot match skip the matcher (mount.ts). Both halves: the shortcut never skips a
// target the matcher would take, and the running app answers every spelling as the library.

type Engine = {
  use(path: string, fn: (req: IncomingMessage, res: ServerResponse, next: () => void) => void): void;
  run(req: unknown, res: unknown, next: (err?: unknown) => void): void;
};
const engineOf = createRequire(import.meta.url)('@fastify/middie/lib/engine.js') as (
  complete: (err: unknown, req: unknown, res: unknown, next: (err?: unknown) => void) => void,
  options: object,
) => Engine;

/** What the matcher does with a target: hands it to a mount, refuses it, or passes it on. */
function matcherSays(url: string): 'mounted' | 'refused' | 'passed' {
  let said: 'mounted' | 'refused' | 'passed' = 'passed';
  const engine = engineOf((err, _req, _res, next) => next(err), { ignoreTrailingSlash: true });
  engine.use('/oauth', () => (said = 'mounted'));
  engine.use('/.well-known/oauth-authorization-server/oauth', () => (said = 'mounted'));
  engine.run({ url, method: 'GET' }, { finished: false, writableEnded: false }, (err) => {
    if (err) said = 'refused';
  });
  return said;
}

const prefixes = ['/oauth', '/OAUTH', '/oAuTh', '/%6Fauth', '/%6fauth', '/%4Fauth', '/o%61uth', '/%256Fauth', '//oauth', '/./oauth', '/x/../oauth', '/oauthx', '/oauth;x',
  '/oauth%2F', '/%zz', '/oauth%zz', '/%C0%AFoauth', '/\u017Fauth', 'http://127.0.0.1/oauth', 'HTTPS://evil.example/OAUTH', '*', 'oauth', '/mcp', '/MCP', '/%6Dcp', '/mcp/oauth',
  '/api/purchases/validation', '/.well-known/oauth-authorization-server/oauth', '/.WELL-KNOWN/OAUTH-AUTHORIZATION-SERVER/OAUTH', '/%2Ewell-known/oauth-authorization-server/oauth',
  '/.well-known/oauth-authorization-server/%6Fauth', '/.well-known/oauth-protected-resource/mcp/oauth', '/'];
const suffixes = ['', '/', '/reg', '/REG/', '/.well-known/openid-configuration', '?x=1', '?x=%6Fauth', '#f', ';x', '/%2E%2E/api/v1/me'];

describe('the shortcut past the OAuth mount', () => {
  it('never skips a target the matcher would hand to the OAuth server or refuse', () => {
    const targets = prefixes.flatMap((p) => suffixes.map((s) => p + s));
    // And targets made at random from the characters that matter.
    const chars = ['/', '/', 'o', 'O', 'a', 'A', 'u', 'U', 't', 'h', 'H', '.', '%', '6', 'F', 'f', '2', '5', 'E', '?', '#', ';', 'x', ':', 'w', '-', 'k'];
    let seed = 56;
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    for (let i = 0; i < 20_000; i++) {
      let t = Math.random() < 0.9 ? '/' : '';
      for (let n = Math.floor(random() * 14); n > 0; n--) t += chars[Math.floor(random() * chars.length)];
      targets.push(t);
    }
    const skippedButTaken = targets.filter((t) => !mayReachMount(t) && matcherSays(t) !== 'passed');
    expect(skippedButTaken).toEqual([]);
    // The shortcut does skip what the seller API, the buyer API and MCP are sent.
    for (const t of ['/api/purchases/validation', '/api/v1/me', '/api/v1/orders?page=2', '/mcp', '/mcp/oauth', '/app/w/1', '/healthz']) expect(mayReachMount(t), t).toBe(false);
    // Among the targets it lets through, the matcher takes these (the set is not empty by mistake).
    expect(['/OAUTH/reg', '/%6Fauth/reg', 'http://x/oauth/reg', '/oAuTh/'].map(matcherSays)).toEqual(['mounted', 'mounted', 'mounted', 'mounted']);
  });
});

describe('the OAuth server in the running app, however its paths are spelled', async () => {
  const h = await setupApp({ PUBLIC_BASE_URL: PUBLIC });
  const base = new URL(await listen(h));
  /** A request with exactly this target on the wire (no client normalises it). */
  const send = (method: string, target: string) =>
    new Promise<{ status: number; body: string; headers: string }>((resolve, reject) => {
      const socket = connect(Number(base.port), base.hostname);
      let data = '';
      socket.on('data', (d) => (data += d.toString('latin1')));
      socket.on('error', reject);
      socket.on('end', () => {
        const [head = '', ...rest] = data.split('\r\n\r\n');
        resolve({ status: Number(head.split(' ')[1]), headers: head.toLowerCase(), body: rest.join('\r\n\r\n') });
      });
      socket.write(`${method} ${target} HTTP/1.1\r\nHost: ${base.host}\r\nConnection: close\r\n\r\n`);
    });
  const issuer = `${PUBLIC}/oauth`;

  it('answers its metadata at every spelling of /oauth the library is handed today', async () => {
    for (const prefix of ['/oauth', '/OAUTH', '/oAuth', '/%6Fauth', '/%4F%41%55%54%48', '/o%61uth', `http://${base.host}/oauth`, 'HTTP://evil.example/OAUTH']) {
      for (const suffix of ['/.well-known/openid-configuration', '/.well-known/openid-configuration/', '/.WELL-KNOWN/openid-configuration']) {
        const res = await send('GET', prefix + suffix);
        expect(res.status, prefix + suffix).toBe(200);
        expect(JSON.parse(res.body).issuer, prefix + suffix).toBe(issuer);
      }
    }
  });

  it('answers RFC 8414 metadata at the well-known path in any case, escaped, with a trailing slash or a query', async () => {
    for (const url of ['/.well-known/oauth-authorization-server/oauth', '/.WELL-KNOWN/OAUTH-AUTHORIZATION-SERVER/OAUTH', '/.well-known/oauth-authorization-server/oauth/',
      '/.well-known/oauth-authorization-server/oauth?x=1', '/%2Ewell-known/oauth-authorization-server/oauth', '/.well-known/oauth-authorization-server/%6Fauth']) {
      const res = await send('GET', url);
      expect(res.status, url).toBe(200);
      expect(JSON.parse(res.body).issuer, url).toBe(issuer);
    }
  });

  it('leaves other paths to the app: look-alikes, /mcp and its resource metadata', async () => {
    for (const url of ['/oauthx/.well-known/openid-configuration', '//oauth/.well-known/openid-configuration', '/.well-known/oauth-authorization-server/oauthx',
      '/.well-known/oauth-authorization-server', '/.well-known/openid-configuration', '/mcp/oauth/.well-known/openid-configuration', '/MCP/.well-known/openid-configuration']) {
      const res = await send('GET', url);
      expect(res.status, url).toBe(404);
      expect(res.body, url).not.toContain(issuer);
    }
    const resource = await send('GET', '/.well-known/oauth-protected-resource/mcp/oauth');
    expect(resource.status).toBe(200);
    expect(JSON.parse(resource.body).authorization_servers).toEqual([issuer]);
    // /mcp itself is MCP's: a key is asked for, as without OAuth mounted.
    const mcp = await send('POST', '/mcp');
    expect(mcp.status).toBe(401);
    expect(mcp.headers).toContain('www-authenticate');
  });

  it('refuses a malformed escape under /oauth as before (the matcher refuses what it cannot decode)', async () => {
    const res = await send('GET', '/oauth%zz/jwks');
    expect(res.status).toBe(400);
  });
});
