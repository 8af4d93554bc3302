import { describe, expect, it } from 'vitest';
import { redactUrl } from '../../src/http/plugins/logging.js';
import { setupApp } from '../helpers/app.js';
import { bearer, workspaceWithKeys } from '../helpers/fixtures.js';

// Secrets sent in spellings no parser reads as the parameter (a `;` before it, an encoded `=`,
// a path segment) are still secrets the client meant to send: the log holds none of them.

const S = (n: number) => `s3cr3t${n}x${'q'.repeat(12)}`;
const spellings: Array<[string, string]> = [
  [`/api/v1/me;api_key=${S(1)}`, S(1)],
  [`/api/items/all;api_key=${S(2)}?page=1`, S(2)],
  [`/api/items/all?api_key%3D${S(3)}`, S(3)],
  [`/api/purchases/validation?id=1;purchase_code=${S(4)}`, S(4)],
  [`/api/items/all?api_key%253D${S(5)}`, S(5)],
  [`/api/items/all?%61pi%5fkey=${S(6)}`, S(6)],
  [`/api/items/all/api_key=${S(7)}`, S(7)],
  [`/api/items/all?x=1&API_KEY=${S(8)}#frag`, S(8)],
  [`/api/items/all?q=a%26api_key%3D${S(9)}`, S(9)],
  [`/api/items/all?api_key%5B%5D=${S(10)}`, S(10)],
  [`/api/items/all?api_key+=${S(11)}`, S(11)],
  [`/api/items/all?purchase%2Dcode=${S(12)}&purchase_code%20=${S(13)}`, S(13)],
  [`/api/v1/outlets?q=x;Purchase_Code%3d${S(14)}`, S(14)],
  [`/api/v1/me/%2561pi_key=${S(15)}`, S(15)],
];

describe("Every route's log line (redactUrl): every spelling of a secret parameter — security", () => {
  it('redacts every spelling of a secret parameter, in the path and the query', () => {
    for (const [url, secret] of spellings) {
      const out = redactUrl(url);
      expect(out, url).not.toContain(secret);
      expect(out, url).toContain('[REDACTED]');
    }
  });

  it('keeps what is not a secret, and the ordinary spellings as they were', () => {
    expect(redactUrl('/api/v1/outlets?q=travel&page=2')).toBe('/api/v1/outlets?q=travel&page=2');
    expect(redactUrl('/api/v1/orders/12;x=1')).toBe('/api/v1/orders/12;x=1');
    expect(redactUrl(`/api/items/all?api_key=${S(1)}&page=2`)).toBe('/api/items/all?api_key=[REDACTED]&page=2');
    expect(redactUrl(`/x?PURCHASE%5FCODE=${S(1)}#top`)).toBe('/x?PURCHASE%5FCODE=[REDACTED]#top');
    // Names the logger redacts in objects, in any case and separator; a key wherever it stands.
    expect(redactUrl('/app/sign-in?Password=a&current_password=b&x=1')).toBe('/app/sign-in?Password=[REDACTED]&current_password=[REDACTED]&x=1');
    expect(redactUrl('/x?idempotency%2Dkey=a&_csrf=b&authorization=c&Cookie=d')).toBe('/x?idempotency%2Dkey=[REDACTED]&_csrf=[REDACTED]&authorization=[REDACTED]&Cookie=[REDACTED]');
    const key = `mk_${'Ab3'.repeat(10)}Zz`;
    expect(redactUrl(`/api/v1/orders/${key}/messages?page=2`)).toBe('/api/v1/orders/[REDACTED]/messages?page=2');
    expect(redactUrl(`/api/v1/outlets?q=see+${key}+here`)).toBe('/api/v1/outlets?q=see+[REDACTED]+here');
    expect(redactUrl(`/api/v1/orders/mk%5F${key.slice(3)}`)).toBe('/api/v1/orders/[REDACTED]');
    // Words that only look like one stay: route words (`api-keys`) and a console path passed as `next`.
    for (const url of [
      '/app/w/1/settings/api-keys/5',
      '/app/w/1/settings/api-keys/5/revoke',
      '/app/p/2/settings/api-keys',
      '/app/w/1/settings/api-access',
      '/app/sign-in?next=%2Fapp%2Fw%2F1%2Fsettings%2Fapi-keys%2F5',
      '/x/api_key/purchase-codes',
    ]) {
      expect(redactUrl(url), url).toBe(url);
    }
    // The same words with a value after them are still secrets.
    expect(redactUrl(`/app/w/1/settings/api-keys=${S(1)}`)).toBe('/app/w/1/settings/api-keys=[REDACTED]');
    expect(redactUrl(`/app/w/1/settings/api-keys%20${S(1)}`)).toBe('/app/w/1/settings/[REDACTED]');
    expect(redactUrl(`/app/sign-in?next=%2Fapp%2Fapi_key%3D${S(1)}`)).toBe('/app/sign-in?next=[REDACTED]');
    expect(redactUrl('/api/v1/outlets?q=password+managers&type=blog')).toBe('/api/v1/outlets?q=password+managers&type=blog');
    expect(redactUrl('/api/v1/orders/mk_short')).toBe('/api/v1/orders/mk_short');
  });
});

describe('Every route: logs of refused requests — security', async () => {
  const h = await setupApp({ LOG_LEVEL: 'debug' });

  it('hold none of the secrets, whatever each request was answered', async () => {
    const ws = await workspaceWithKeys(h.database.pool);
    const statuses: number[] = [];
    for (const [url] of spellings) {
      for (const method of ['GET', 'POST'] as const) {
        statuses.push((await h.app.inject({ method, url, headers: bearer(ws.readKey) })).statusCode);
        statuses.push((await h.app.inject({ method, url })).statusCode);
      }
    }
    expect(statuses.some((s) => s === 404)).toBe(true);
    expect(statuses.some((s) => s === 401)).toBe(true);
    expect(statuses.every((s) => s < 500)).toBe(true);
    const written = h.logs.join('');
    expect(written).toContain('"msg":"request"');
    for (const [, secret] of spellings) expect(written, secret).not.toContain(secret);
  });
});
