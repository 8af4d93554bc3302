import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import openapiTS, { astToString } from 'openapi-typescript';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { seedDemoIfEmpty } from '../../src/demo/seed.js';
import { projectRoot } from '../../src/paths.js';
import { setupApp } from '../helpers/app.js';

// The check that keeps generated clients working: types generated from /openapi.json with
// openapi-typescript, a small openapi-fetch script (flow.ts) type-checked against them, then run
// against the app (through app.inject) to search, plan, place an order and read it back.

const h = await setupApp();
const dir = join(projectRoot, 'test', 'client');
const generated = join(dir, '.generated', 'api.d.ts');

type Order = { id: number; status: string; price: number };
type SearchPlanOrder = (opts: { baseUrl: string; key: string; fetch: (request: Request) => Promise<Response> }) => Promise<{
  outlet: { offers: unknown[] };
  plan: { offer_ids: number[] };
  placed: Order;
  readBack: Order;
  ledger: { kind: string; order_id: number | null }[];
}>;

/** openapi-fetch's fetch, answered by app.inject instead of a socket. */
async function injectFetch(request: Request): Promise<Response> {
  const url = new URL(request.url);
  const body = request.method === 'GET' || request.method === 'HEAD' ? undefined : await request.text();
  const res = await h.app.inject({
    method: request.method as 'GET' | 'POST',
    url: url.pathname + url.search,
    headers: Object.fromEntries(request.headers.entries()),
    ...(body ? { payload: body } : {}),
  });
  return new Response(res.statusCode === 204 ? null : res.body, {
    status: res.statusCode,
    headers: Object.entries(res.headers).flatMap(([k, v]) => (v === undefined ? [] : (Array.isArray(v) ? v : [String(v)]).map((x) => [k, x] as [string, string]))),
  });
}

function typeErrors(file: string): string[] {
  const { config } = ts.readConfigFile(join(projectRoot, 'tsconfig.json'), ts.sys.readFile);
  const { options } = ts.parseJsonConfigFileContent(config, ts.sys, projectRoot);
  const program = ts.createProgram([file], { ...options, noEmit: true });
  return ts.getPreEmitDiagnostics(program).map((d) => {
    const where = d.file && d.start !== undefined ? `${d.file.fileName}:${d.file.getLineAndCharacterOfPosition(d.start).line + 1}: ` : '';
    return where + ts.flattenDiagnosticMessageText(d.messageText, '\n');
  });
}

describe('a client generated from /openapi.json', () => {
  it('type-checks a script that searches, plans, places an order and reads it back', async () => {
    const res = await h.app.inject({ method: 'GET', url: '/openapi.json' });
    expect(res.statusCode).toBe(200);
    const types = astToString(await openapiTS(res.json()));
    mkdirSync(join(dir, '.generated'), { recursive: true });
    writeFileSync(generated, types);
    expect(typeErrors(join(dir, 'flow.ts'))).toEqual([]);
  }, 60_000);

  it('runs that script against the API', async () => {
    const demo = (await seedDemoIfEmpty(h.database, 0.2))!;
    const flowFile = join(dir, 'flow.ts');
    // Imported by path: flow.ts compiles only once its types are generated (see tsconfig.json).
    const { searchPlanOrder } = (await import(flowFile)) as { searchPlanOrder: SearchPlanOrder };
    const result = await searchPlanOrder({ baseUrl: 'http://localhost', key: demo.spendingKey, fetch: injectFetch });
    expect(result.outlet.offers.length).toBeGreaterThan(0);
    expect(result.plan.offer_ids.length).toBeGreaterThan(0);
    expect(result.placed.status).toBe('awaiting_content');
    expect(result.readBack).toMatchObject({ id: result.placed.id, status: 'awaiting_content', price: result.placed.price });
    expect(result.ledger.some((e) => e.kind === 'order_placed' && e.order_id === result.placed.id)).toBe(true);
  });
});
