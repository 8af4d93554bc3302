import { afterAll, describe, expect, it } from 'vitest';
import { topUp } from '../../src/domain/ledger/ledger-service.js';
import { setupApp } from '../helpers/app.js';
import { createTestDatabase } from '../helpers/db.js';
import { expectLedgerInvariants } from '../helpers/ledger-invariants.js';
import { checkResponse, failed, type FuzzRequest, formatReport, ledgerFingerprint, type Response, runFuzz } from './fuzzer.js';
import { FUZZ_LIMITS, fuzzSeed, serverErrorLines } from './options.js';
import { seedWorld } from './world.js';

// The short fuzz run of `npm test` (the long one is `npm run fuzz`): requests generated from the
// OpenAPI document and the MCP tools' schemas against a seeded database. FUZZ_SEED repeats a run,
// FUZZ_RUNS changes its length.

const runs = Number(process.env.FUZZ_RUNS ?? 2500);
// In CI (which gates what lands) the seed is fixed, so a run is the same on every try; elsewhere
// each run explores a fresh one, printed with its report, as `npm run fuzz` does.
const seed = fuzzSeed(process.env.FUZZ_SEED ?? (process.env.CI ? '1' : undefined));
// A small pool: each connection sees more of the statements it prepares (and their name clashes).
const database = await createTestDatabase({ max: 3 });
afterAll(() => database.drop());
const h = await setupApp(FUZZ_LIMITS, { database });

describe('the oracle', () => {
  const req = (over: Partial<FuzzRequest> = {}): FuzzRequest => ({ op: 'test', method: 'GET', url: '/api/v1/me', headers: {}, key: 'read', note: '', ...over });
  const res = (statusCode: number, body: unknown, headers: Response['headers'] = {}): Response => ({
    statusCode,
    headers: { 'x-request-id': 'r1', 'content-type': 'application/json; charset=utf-8', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const aError = (status: number, code: string, extra: object = {}) => res(status, { message: 'No.', code, request_id: 'r1', ...extra }, status === 401 ? { 'www-authenticate': 'Bearer' } : {});

  it('accepts answers in each surface shape', () => {
    expect(checkResponse(req(), res(200, { data: {} })).violations).toEqual([]);
    expect(checkResponse(req(), aError(401, 'unauthenticated')).violations).toEqual([]);
    expect(checkResponse(req({ url: '/api/items/all' }), res(401, { status: 'error', msg: 'Invalid request' })).violations).toEqual([]);
    expect(checkResponse(req({ url: '/mcp', method: 'POST' }), res(400, { jsonrpc: '2.0', error: { code: -32700, message: 'Parse error' }, id: null })).violations).toEqual([]);
  });

  it('lets through data the fuzzer itself stored earlier, however it looks', () => {
    const stored = res(200, { data: [{ content: { title: '1; SELECT pg_sleep(5)' } }] });
    expect(checkResponse(req(), stored).violations.join(' | ')).toMatch(/database error/);
    expect(checkResponse(req(), stored, ['{"title":"1; SELECT pg_sleep(5)"}']).violations).toEqual([]);
  });

  it('catches 5xx, wrong shapes, leaks, missing request ids, auth precedence and other tenants', () => {
    const one = (r: FuzzRequest, x: Response) => checkResponse(r, x).violations.join(' | ');
    expect(one(req(), aError(500, 'internal_error'))).toMatch(/500 answer/);
    expect(one(req({ url: '/api/items/all' }), aError(404, 'not_found'))).toMatch(/Interface B error is not/);
    expect(one(req({ url: '/api/items/all' }), res(404, { status: 'error', msg: 'Item Not Found', extra: 1 }))).toMatch(/Interface B error is not/);
    expect(one(req({ url: '/api/items/all' }), res(401, { status: 'error', msg: 'Not found' }))).toMatch(/with status 401/);
    expect(one(req(), res(400, { status: 'error', msg: 'Invalid request' }))).toMatch(/snake_case/);
    expect(one(req(), aError(404, 'conflict', { status: 'writing' }))).toMatch(/code conflict answered with 404/);
    expect(one(req(), res(401, { message: 'x', code: 'unauthenticated', request_id: 'r1' }))).toMatch(/WWW-Authenticate/);
    expect(one(req(), aError(422, 'invalid_input'))).toMatch(/invalid_input without errors/);
    expect(one(req(), aError(400, 'bad_request', { detail: 'at Object.<anonymous> (/work/main/src/app.ts:1:2)' }))).toMatch(/stack trace|internal path/);
    expect(one(req(), aError(400, 'bad_request', { detail: 'syntax error at or near "x"' }))).toMatch(/SQL/);
    expect(one(req({ body: "' OR 1=1 --" }), aError(400, 'bad_request', { echo: 'SELECT id FROM orders' }))).toMatch(/SQL/);
    expect(one(req(), { ...aError(404, 'not_found'), headers: { 'content-type': 'application/json' } })).toMatch(/no X-Request-Id/);
    expect(one(req({ headers: { 'x-request-id': 'mine' } }), res(200, { data: {} }))).toMatch(/instead of the caller's/);
    expect(one(req({ expectStatus: { statuses: [401], why: 'no key' } }), aError(422, 'invalid_input', { errors: { a: ['b'] } }))).toMatch(/expected 401/);
    expect(one(req({ crossTenant: 'order 1 of workspace 2' }), res(200, { data: {} }))).toMatch(/another tenant/);
    const toolError = (code: string) => ({ jsonrpc: '2.0', id: 1, result: { isError: true, content: [{ type: 'text', text: JSON.stringify({ code, message: 'x' }) }] } });
    expect(one(req({ url: '/mcp', method: 'POST' }), res(200, toolError('internal_error')))).toMatch(/internal_error/);
    expect(one(req({ url: '/mcp', method: 'POST' }), res(200, { jsonrpc: '2.0', id: 1, error: { code: -32603, message: 'boom' } }))).toMatch(/internal error/);
    expect(one(req({ url: '/mcp', method: 'POST', crossTenant: 'order 9' }), res(200, { jsonrpc: '2.0', id: 1, result: { content: [], structuredContent: {} } }))).toMatch(/another tenant/);
  });

  it('sees any ledger or balance change', async () => {
    const world = await seedWorld(h.app, h.database);
    const before = await ledgerFingerprint(h.database.pool);
    await topUp(h.database.pool, world.workspaces.a, 1);
    expect(await ledgerFingerprint(h.database.pool)).not.toBe(before);
  });
});

it(`answers ${runs} generated requests without a 5xx, in each surface's shape, moving no money it should not (seed ${seed})`, async () => {
  const world = await seedWorld(h.app, h.database);
  const logsBefore = h.logs.length;
  const report = await runFuzz({ app: h.app, pool: h.database.pool, clock: h.clock }, world, { numRuns: runs, seed });
  const errors = serverErrorLines(h.logs.slice(logsBefore));
  if (errors.length) report.finalChecks.push(`${errors.length} error-level log lines, e.g. ${errors[0]!.slice(0, 600)}`);
  const text = formatReport(report, world);
  console.log(text);
  if (!report.mcp.available) console.warn(`MCP was not fuzzed: ${report.mcp.reason}`);
  expect(failed(report), text).toBe(false);
  expect(report.sent).toBeGreaterThan(runs * 0.9);
  await expectLedgerInvariants(h.database);
}, 180_000);
