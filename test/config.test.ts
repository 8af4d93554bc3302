import { availableParallelism } from 'node:os';
import { describe, expect, it } from 'vitest';
import { isLoopbackHost, loadConfig, mailFrom, oauthBase } from '../src/config.js';

describe('configuration', () => {
  it('treats empty values as unset, so a copied .env.example starts', () => {
    const config = loadConfig({ PORT: '', MCP_CONFIRMATION_SECRET: '', METRICS_PORT: ' ', DATABASE_URL: '', SEED_DEMO: '' });
    expect(config.PORT).toBe(3000);
    expect(config.MCP_CONFIRMATION_SECRET).toBeUndefined();
    expect(config.METRICS_PORT).toBeUndefined();
    expect(config.DATABASE_URL).toBeUndefined();
    expect(config.SEED_DEMO).toBe(false);
  });

  it('takes PUBLIC_URL as another name for PUBLIC_BASE_URL, and refuses the two disagreeing', () => {
    expect(loadConfig({ PUBLIC_URL: 'https://market.example' }).PUBLIC_BASE_URL).toBe('https://market.example');
    expect(loadConfig({ PUBLIC_URL: 'https://market.example', PUBLIC_BASE_URL: 'https://market.example' }).PUBLIC_BASE_URL).toBe('https://market.example');
    expect(() => loadConfig({ PUBLIC_URL: 'https://a.example', PUBLIC_BASE_URL: 'https://b.example' })).toThrow(/PUBLIC_URL/);
    expect(() => loadConfig({ PUBLIC_URL: 'not a url' })).toThrow(/PUBLIC_BASE_URL/);
    // A scheme is case-insensitive: HTTPS:// must count as https (Secure cookies, HSTS, the issuer).
    expect(loadConfig({ PUBLIC_BASE_URL: 'HTTPS://Market.example/Path' }).PUBLIC_BASE_URL).toBe('https://Market.example/Path');
  });

  it('names the bad variable', () => {
    expect(() => loadConfig({ PORT: 'abc' })).toThrow(/PORT/);
    expect(() => loadConfig({ MCP_CONFIRMATION_SECRET: 'short' })).toThrow(/MCP_CONFIRMATION_SECRET/);
    expect(() => loadConfig({ LOG_LEVEL: 'loud' })).toThrow(/LOG_LEVEL/);
  });

  it('reads the top-up limits and the payment instructions (docs/billing.md), refusing limits upside down and instructions without {reference}', () => {
    const config = loadConfig({ TOPUP_MIN_CENTS: '500', TOPUP_MAX_CENTS: '', BILLING_INSTRUCTIONS: '' });
    expect(config).toMatchObject({ TOPUP_MIN_CENTS: 500, TOPUP_MAX_CENTS: 10_000_000 });
    expect(config.BILLING_INSTRUCTIONS).toContain('{reference}');
    expect(() => loadConfig({ TOPUP_MIN_CENTS: '5000', TOPUP_MAX_CENTS: '4999' })).toThrow(/TOPUP_MAX_CENTS: must be at least TOPUP_MIN_CENTS/);
    expect(() => loadConfig({ TOPUP_MIN_CENTS: '0' })).toThrow(/TOPUP_MIN_CENTS/);
    expect(() => loadConfig({ BILLING_INSTRUCTIONS: 'Pay us.' })).toThrow(/BILLING_INSTRUCTIONS: must contain \{reference\}/);
  });

  it('reads the smallest payout (docs/billing.md, "Payouts"): $50 unless set, a positive number of cents', () => {
    expect(loadConfig({}).PAYOUT_MIN_CENTS).toBe(5_000);
    expect(loadConfig({ PAYOUT_MIN_CENTS: '100' }).PAYOUT_MIN_CENTS).toBe(100);
    expect(() => loadConfig({ PAYOUT_MIN_CENTS: '0' })).toThrow(/PAYOUT_MIN_CENTS/);
    expect(() => loadConfig({ PAYOUT_MIN_CENTS: 'fifty' })).toThrow(/PAYOUT_MIN_CENTS/);
  });

  it('parses booleans and numbers', () => {
    const config = loadConfig({ SEED_DEMO: '1', RATE_LIMIT_PER_MINUTE: '500', FEE_RATE: '0.15' });
    expect(config).toMatchObject({ SEED_DEMO: true, RATE_LIMIT_PER_MINUTE: 500, FEE_RATE: 0.15 });
  });

  it('sizes the database pool from the CPU cores unless told', () => {
    expect(loadConfig({ DATABASE_POOL_MAX: '' }).DATABASE_POOL_MAX).toBe(2 * availableParallelism() + 1);
    expect(loadConfig({ DATABASE_POOL_MAX: '12' }).DATABASE_POOL_MAX).toBe(12);
  });

  it('reads TRUST_PROXY as Fastify does: false, true, or addresses and ranges', () => {
    expect(loadConfig({}).TRUST_PROXY).toBe(false);
    expect(loadConfig({ TRUST_PROXY: 'true' }).TRUST_PROXY).toBe(true);
    expect(() => loadConfig({ TRUST_PROXY: '1' })).toThrow(/TRUST_PROXY/); // a hop count makes Fastify trust no proxy
    expect(loadConfig({ TRUST_PROXY: '10.0.0.0/8, loopback' }).TRUST_PROXY).toBe('10.0.0.0/8, loopback');
    expect(() => loadConfig({ TRUST_PROXY: 'everyone' })).toThrow(/TRUST_PROXY/);
  });

  it('turns OAuth on by itself only on a loopback HOST, with http://HOST:PORT; elsewhere PUBLIC_BASE_URL is needed', () => {
    for (const host of ['127.0.0.1', '127.4.5.6', 'localhost', 'LOCALHOST', '::1', '[::1]']) expect(isLoopbackHost(host), host).toBe(true);
    for (const host of ['0.0.0.0', '::', '', '10.0.0.1', '192.168.1.2', '128.0.0.1', 'localhost.example.com', 'example.com']) expect(isLoopbackHost(host), host).toBe(false);
    expect(oauthBase(loadConfig({}))).toEqual({ url: 'http://127.0.0.1:3000' });
    expect(oauthBase(loadConfig({ PORT: '4000' }))).toEqual({ url: 'http://127.0.0.1:4000' });
    expect(oauthBase(loadConfig({ HOST: 'localhost', PORT: '4000' }))).toEqual({ url: 'http://localhost:4000' });
    expect(oauthBase(loadConfig({ HOST: '::1' }))).toEqual({ url: 'http://[::1]:3000' });
    expect(oauthBase(loadConfig({ HOST: '0.0.0.0' }))).toEqual({ off: 'HOST 0.0.0.0 is not a loopback address' });
    expect(oauthBase(loadConfig({ HOST: '10.0.0.7' }))).toEqual({ off: 'HOST 10.0.0.7 is not a loopback address' });
    // The port the system chooses is known only once listening, after the issuer is built.
    expect(oauthBase(loadConfig({ PORT: '0' }))).toMatchObject({ off: expect.stringContaining('PORT is 0') });
    // PUBLIC_BASE_URL wins wherever the server listens, without its trailing slash.
    expect(oauthBase(loadConfig({ HOST: '0.0.0.0', PUBLIC_BASE_URL: 'https://market.example/' }))).toEqual({ url: 'https://market.example' });
    expect(oauthBase(loadConfig({ PUBLIC_BASE_URL: 'https://market.example' }))).toEqual({ url: 'https://market.example' });
  });

  it('reads the mail settings; a bad SMTP_URL is named without its password', () => {
    const config = loadConfig({});
    expect(config.SMTP_URL).toBeUndefined();
    expect(config).toMatchObject({ EMAIL_VERIFICATION: 'required', MAIL_POLL_INTERVAL_MS: 1000, MAIL_GIVE_UP_HOURS: 24 });
    expect(loadConfig({ SMTP_URL: 'smtps://ana:s3cret@mail.example:465' }).SMTP_URL).toBe('smtps://ana:s3cret@mail.example:465');
    for (const bad of ['http://ana:s3cret@mail.example', 'smtp://', 'ana:s3cret']) {
      expect(() => loadConfig({ SMTP_URL: bad })).toThrow(/SMTP_URL/);
      expect(() => loadConfig({ SMTP_URL: bad })).not.toThrow(/s3cret/);
    }
    expect(() => loadConfig({ EMAIL_VERIFICATION: 'sometimes' })).toThrow(/EMAIL_VERIFICATION/);
    expect(() => loadConfig({ MAIL_FROM: 'Ana <ana@example.com>\r\nBcc: x@example.com' })).toThrow(/MAIL_FROM/);
  });

  it('sends from MAIL_FROM, else no-reply at the console\'s host name', () => {
    expect(mailFrom(loadConfig({ MAIL_FROM: 'Acme <hello@acme.example>' }))).toBe('Acme <hello@acme.example>');
    expect(mailFrom(loadConfig({ PUBLIC_BASE_URL: 'https://market.example' }))).toBe('Marketplace <no-reply@market.example>');
    expect(mailFrom(loadConfig({}))).toBe('Marketplace <no-reply@localhost>');
  });
});
