import Fastify from 'fastify';
import { validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { BODY_LIMITS, JSON_LIMITS } from '../../src/http/body-limits.js';
import { errorHandling } from '../../src/http/plugins/errors.js';
import { jsonBody } from '../../src/http/plugins/json-body.js';
import { genReqId } from '../../src/http/plugins/request-id.js';

// The body plugins exactly as the app registers them, on a probe route, until the POST routes
// of later features exercise them end to end.
const app = Fastify({ genReqId, requestIdHeader: false, bodyLimit: BODY_LIMITS.standard }).withTypeProvider<ZodTypeProvider>();
app.setValidatorCompiler(validatorCompiler);
await app.register(errorHandling);
await app.register(jsonBody);
app.post('/probe', { schema: { body: z.object({ goal: z.string().min(3), budget_usd: z.number().positive() }) } }, async (req) => ({ data: req.body }));
app.post('/bodyless', async (req) => ({ data: req.body ?? null }));
await app.ready();
afterAll(() => app.close());

describe('Every JSON route (test routes /probe and /strict): bad JSON bodies — errors', () => {
  it('unparseable JSON is 400 bad_request', async () => {
    const res = await app.inject({ method: 'POST', url: '/probe', headers: { 'content-type': 'application/json' }, payload: '{"goal": ' });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 'bad_request', request_id: expect.any(String) });
    expect(res.json().message).not.toMatch(/Unexpected|position/);
  });

  it('bytes that are not UTF-8, or another charset, are 400 bad_request rather than stored as U+FFFD', async () => {
    const bad = Buffer.concat([Buffer.from('{"goal":"bad '), Buffer.from([0xff, 0xfe, 0xed, 0xa0, 0x80]), Buffer.from('","budget_usd":1}')]);
    const latin1 = Buffer.from('{"goal":"caf\xe9","budget_usd":1}', 'latin1');
    for (const [payload, type] of [[bad, 'application/json'], [latin1, 'application/json; charset=iso-8859-1'], [Buffer.from('{}'), 'application/json; charset=utf-16']] as const) {
      const res = await app.inject({ method: 'POST', url: '/probe', headers: { 'content-type': type }, payload });
      expect(res.statusCode, type).toBe(400);
      expect(res.json()).toMatchObject({ code: 'bad_request', message: expect.stringContaining('UTF-8') });
    }
    // UTF-8, declared or not, with or without a byte order mark.
    for (const [payload, type] of [
      [Buffer.from('{"goal":"café","budget_usd":1}'), 'application/json; charset=UTF-8'],
      [Buffer.from('{"goal":"café","budget_usd":1}'), 'application/json;charset="utf-8"'],
      [Buffer.from('{"goal":"cafe","budget_usd":1}'), 'application/json; charset=us-ascii'],
      [Buffer.from('{"goal":"café","budget_usd":1}'), 'application/json; charset='],
      [Buffer.from('\ufeff{"goal":"café","budget_usd":1}'), 'application/json'],
    ] as const) {
      const res = await app.inject({ method: 'POST', url: '/probe', headers: { 'content-type': type }, payload });
      expect(res.statusCode, type).toBe(200);
      expect(res.json().data.goal).toMatch(/^caf[eé]$/);
    }
  });

  it('a wrong Content-Type is 400 bad_request', async () => {
    for (const type of ['text/plain', 'application/xml', 'application/x-www-form-urlencoded']) {
      const res = await app.inject({ method: 'POST', url: '/probe', headers: { 'content-type': type }, payload: 'goal=abc' });
      expect(res.statusCode, type).toBe(400);
      expect(res.json().code).toBe('bad_request');
    }
  });

  it("a body over the route's limit is 413 payload_too_large, saying the limit", async () => {
    const res = await app.inject({
      method: 'POST',
      url: '/probe',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ goal: 'x'.repeat(BODY_LIMITS.standard) }),
    });
    expect(res.statusCode).toBe(413);
    expect(res.json()).toMatchObject({ code: 'payload_too_large', message: expect.stringContaining('64 KB') });
  });

  it('a body nested too deep or holding too many values is a 400 before it is parsed', async () => {
    const deep = '['.repeat(30_000) + ']'.repeat(30_000);
    const many = JSON.stringify({ goal: Array.from({ length: JSON_LIMITS.maxValues + 1 }, () => 0) });
    for (const [payload, words] of [
      [deep, 'levels deep'],
      ['{"goal":' + '{"a":'.repeat(JSON_LIMITS.maxDepth) + '1' + '}'.repeat(JSON_LIMITS.maxDepth) + ',"budget_usd":1}', 'levels deep'],
      [many, 'members and array elements'],
    ] as const) {
      const res = await app.inject({ method: 'POST', url: '/probe', headers: { 'content-type': 'application/json' }, payload });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ code: 'bad_request', message: expect.stringContaining(words) });
    }
    // At the limits, the body is read (and then validated).
    const atDepth = '{"goal":' + '{"a":'.repeat(JSON_LIMITS.maxDepth - 1) + '1' + '}'.repeat(JSON_LIMITS.maxDepth - 1) + ',"budget_usd":1}';
    const res = await app.inject({ method: 'POST', url: '/probe', headers: { 'content-type': 'application/json' }, payload: atDepth });
    expect(res.statusCode).toBe(422);
  });

  it('a 422 names at most 20 fields and counts the others in errors_omitted', async () => {
    const strict = Fastify({ genReqId, requestIdHeader: false }).withTypeProvider<ZodTypeProvider>();
    strict.setValidatorCompiler(validatorCompiler);
    await strict.register(errorHandling);
    await strict.register(jsonBody);
    strict.post('/strict', { schema: { body: z.strictObject({ goal: z.string() }) } }, async () => ({}));
    const body = Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`unknown_${i}`, 1]));
    const res = await strict.inject({ method: 'POST', url: '/strict', payload: { goal: 'x', ...body } });
    await strict.close();
    expect(res.statusCode).toBe(422);
    expect(Object.keys(res.json().errors)).toHaveLength(20);
    expect(res.json().errors_omitted).toBe(4980);
    expect(res.body.length).toBeLessThan(4000);
  });

  it('validation failures are 422 naming each field', async () => {
    const res = await app.inject({ method: 'POST', url: '/probe', payload: { goal: 'x', budget_usd: -1 } });
    expect(res.statusCode).toBe(422);
    expect(Object.keys(res.json().errors).sort()).toEqual(['budget_usd', 'goal']);
  });

  it('an empty JSON body counts as {} and is validated as such', async () => {
    const res = await app.inject({ method: 'POST', url: '/probe', headers: { 'content-type': 'application/json' }, payload: '' });
    expect(res.statusCode).toBe(422);
    expect(Object.keys(res.json().errors).sort()).toEqual(['budget_usd', 'goal']);
  });

  it('a JSON body that is not an object is 422 on the body', async () => {
    const res = await app.inject({ method: 'POST', url: '/probe', headers: { 'content-type': 'application/json' }, payload: '[1,2]' });
    expect(res.statusCode).toBe(422);
    expect(Object.keys(res.json().errors)).toEqual(['body']);
  });
});

describe('Every JSON route (test routes /probe and /strict): prototype keys — security', () => {
  it('refuses __proto__ and constructor.prototype keys at any depth, rather than dropping or trusting them', async () => {
    for (const payload of ['{"a":1,"__proto__":{"polluted":true}}', '{"a":{"b":[{"__proto__":{"polluted":true}}]}}', '{"constructor":{"prototype":{"polluted":true}}}']) {
      const res = await app.inject({ method: 'POST', url: '/bodyless', headers: { 'content-type': 'application/json' }, payload });
      expect(res.statusCode, payload).toBe(400);
      expect(res.json()).toMatchObject({ code: 'bad_request', message: expect.stringContaining('__proto__') });
    }
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    // A key merely named constructor is an ordinary (unknown) field.
    const plain = await app.inject({ method: 'POST', url: '/bodyless', headers: { 'content-type': 'application/json' }, payload: '{"constructor":1}' });
    expect(plain.json().data).toEqual({ constructor: 1 });
  });
});

describe('Every body-less POST (test route /bodyless) — happy', () => {
  it('accept no Content-Type, an empty JSON body, or {}', async () => {
    const none = await app.inject({ method: 'POST', url: '/bodyless' });
    expect(none.statusCode).toBe(200);
    const empty = await app.inject({ method: 'POST', url: '/bodyless', headers: { 'content-type': 'application/json' }, payload: '' });
    expect(empty.statusCode).toBe(200);
    const obj = await app.inject({ method: 'POST', url: '/bodyless', payload: {} });
    expect(obj.statusCode).toBe(200);
  });

  it('take zero bytes as no body whatever the Content-Type (curl -X POST -d "")', async () => {
    for (const type of ['application/x-www-form-urlencoded', 'text/plain', 'application/octet-stream']) {
      const res = await app.inject({ method: 'POST', url: '/bodyless', headers: { 'content-type': type }, payload: '' });
      expect(res.statusCode, type).toBe(200);
      expect(res.json().data).toBeNull();
    }
    // One byte is a body, and not JSON.
    const one = await app.inject({ method: 'POST', url: '/bodyless', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: 'a' });
    expect(one.statusCode).toBe(400);
  });
});
