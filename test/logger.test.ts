import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../src/logger.js';

// Written out, not imported from src/logger.ts: a name dropped there must fail here.
const SECRET_NAMES = [
  'api_key',
  'purchase_code',
  'confirmation_token',
  'password',
  '_csrf',
  'access_token',
  'refresh_token',
  'id_token',
  'code_verifier',
  'client_secret',
  'registration_access_token',
];

function capture() {
  const lines: string[] = [];
  const log = createLogger('info', new Writable({ write: (c, _e, cb) => (lines.push(String(c)), cb()) })).child({ reqId: 'req-1' });
  return { log, lines };
}

describe('the logger — redaction', () => {
  it('redacts every secret name at the top level of a logged object and inside a logged error', () => {
    const { log, lines } = capture();
    for (const name of SECRET_NAMES) {
      log.info({ [name]: `SECRET-top-${name}` }, 'top');
      log.error({ err: Object.assign(new Error('refused'), { [name]: `SECRET-err-${name}` }) }, 'err');
    }
    expect(lines).toHaveLength(SECRET_NAMES.length * 2);
    expect(lines.join('')).not.toContain('SECRET-');
    expect(lines.filter((l) => l.includes('[REDACTED]'))).toHaveLength(SECRET_NAMES.length * 2);
  });

  it("redacts headers, an OAuth code and a database error's detail, and keeps an error's code and a request line whole", () => {
    const { log, lines } = capture();
    log.info({ req: { headers: { authorization: 'Bearer SECRET-1', cookie: 'SECRET-2', 'idempotency-key': 'SECRET-3' } } }, 'req');
    log.info({ headers: { authorization: 'SECRET-4', 'idempotency-key': 'SECRET-5', cookie: 'SECRET-6', 'set-cookie': 'SECRET-7' } }, 'headers');
    log.info({ res: { headers: { 'set-cookie': 'SECRET-8' } } }, 'res');
    log.info({ authorization: 'SECRET-9', code: 'SECRET-10', body: { code: 'SECRET-11', api_key: 'SECRET-12' }, query: { api_key: 'SECRET-13' } }, 'bits');
    log.error({ err: Object.assign(new Error('duplicate key'), { code: '23505', detail: 'Key (key)=(SECRET-14) exists.', cause: { detail: 'SECRET-15' } }) }, 'db');
    log.info({ method: 'POST', route: '/api/v1/orders', url: '/api/v1/orders', status: 201, duration_ms: 1.5 }, 'request');
    const all = lines.join('');
    expect(all).not.toContain('SECRET-');
    expect(JSON.parse(lines[4]!).err.code).toBe('23505');
    expect(JSON.parse(lines[5]!)).toMatchObject({ reqId: 'req-1', method: 'POST', route: '/api/v1/orders', url: '/api/v1/orders', status: 201, duration_ms: 1.5 });
  });
});
