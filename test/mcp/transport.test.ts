import { describe, expect, it } from 'vitest';
import { generateRawKey } from '../../src/domain/keys/key-format.js';
import { INSTRUCTIONS } from '../../src/mcp/server.js';
import { setupApp } from '../helpers/app.js';
import { publisherWithOutlet } from '../helpers/catalog.js';
import { bearer, workspaceWithKeys } from '../helpers/fixtures.js';
import { mcpHeaders, rpc } from './helpers.js';

// A small per-key limit so the shared bucket can be exhausted; each test uses its own keys.
const h = await setupApp({ RATE_LIMIT_PER_MINUTE: 5, UNKNOWN_KEY_RATE_LIMIT_PER_MINUTE: 1000 });
const post = (payload: unknown, headers: Record<string, string>) =>
  h.app.inject({ method: 'POST', url: '/mcp', headers, payload: typeof payload === 'string' ? payload : JSON.stringify(payload) });

describe('POST /mcp: authentication before any MCP work — security', () => {
  const cases: [string, () => Promise<Record<string, string>>][] = [
    ['no key', async () => mcpHeaders()],
    ['an unknown key', async () => mcpHeaders(generateRawKey())],
    ['a malformed header', async () => ({ ...mcpHeaders(), authorization: 'Basic abc' })],
    ['a publisher key', async () => mcpHeaders((await publisherWithOutlet(h.database)).publisherKey)],
  ];
  for (const [name, headers] of cases) {
    it(`answers ${name} with 401 in Interface A's shape`, async () => {
      const res = await post(rpc('tools/list'), await headers());
      expect(res.statusCode).toBe(401);
      expect(res.headers['www-authenticate']).toBe('Bearer');
      expect(res.headers['x-request-id']).toBeTruthy();
      expect(res.json()).toMatchObject({ code: 'unauthenticated', request_id: res.headers['x-request-id'] });
      expect(typeof res.json().message).toBe('string');
    });
  }

  it('refuses a publisher key on GET too, and a publisher key never reaches a tool', async () => {
    const p = await publisherWithOutlet(h.database);
    const res = await h.app.inject({ method: 'GET', url: '/mcp', headers: bearer(p.publisherKey) });
    expect(res.statusCode).toBe(401);
  });
});

describe('POST /mcp: transport — happy', () => {
  it('initializes with the instructions and sends the request id and rate-limit headers on the hijacked reply', async () => {
    const ws = await workspaceWithKeys(h.database.pool);
    const res = await post(
      rpc('initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } }),
      { ...mcpHeaders(ws.readKey), 'x-request-id': 'mcp-req-1' },
    );
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/application\/json/);
    expect(res.headers['x-request-id']).toBe('mcp-req-1');
    expect(res.headers['x-ratelimit-limit']).toBe('5');
    expect(res.headers['x-ratelimit-remaining']).toBe('4');
    const result = res.json().result;
    expect(result.serverInfo.name).toBe('marketplace');
    expect(result.capabilities.tools).toBeDefined();
    expect(result.instructions).toBe(INSTRUCTIONS);
    expect(result.instructions).toMatch(/US cents/);
    expect(result.instructions).toMatch(/fees/);
    expect(result.instructions).toMatch(/explicit confirmation/);
    expect(result.instructions).toMatch(/quote/);
  });

  it('is left out of the OpenAPI document', async () => {
    const doc = (await h.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    expect(Object.keys(doc.paths)).not.toContain('/mcp');
  });
});

describe('POST /mcp: transport refusals — errors', () => {
  it('answers GET, HEAD, DELETE, PUT, PATCH and OPTIONS with 405 and Allow: POST', async () => {
    const ws = await workspaceWithKeys(h.database.pool);
    for (const method of ['GET', 'DELETE', 'PUT', 'PATCH', 'OPTIONS'] as const) {
      const res = await h.app.inject({ method, url: '/mcp', headers: { ...bearer(ws.readKey), accept: 'text/event-stream' } });
      expect(res.statusCode, method).toBe(405);
      expect(res.headers.allow).toBe('POST');
      expect(res.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32000 } });
    }
    const other = await workspaceWithKeys(h.database.pool); // the first key's bucket is used up
    const head = await h.app.inject({ method: 'HEAD', url: '/mcp', headers: bearer(other.readKey) });
    expect(head.statusCode).toBe(405);
    expect(head.headers.allow).toBe('POST');
    // Without a key, the same 401 as every other method.
    expect((await h.app.inject({ method: 'OPTIONS', url: '/mcp' })).statusCode).toBe(401);
  });

  it('answers a body that is not JSON with a JSON-RPC parse error', async () => {
    const ws = await workspaceWithKeys(h.database.pool);
    const res = await post('{"jsonrpc": ', mcpHeaders(ws.readKey));
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32700 }, id: null });
    // A __proto__ key in a tool's arguments is refused the same way, not dropped before the tool runs.
    const proto = await post(
      '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get-balance","arguments":{"__proto__":{"x":1}}}}',
      mcpHeaders(ws.readKey),
    );
    expect(proto.statusCode).toBe(400);
    expect(proto.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32700, message: expect.stringContaining('__proto__') }, id: null });
  });

  it('leaves the Accept check to the SDK (406)', async () => {
    const ws = await workspaceWithKeys(h.database.pool);
    const res = await post(rpc('tools/list'), { ...mcpHeaders(ws.readKey), accept: 'application/json' });
    expect(res.statusCode).toBe(406);
  });

  it('answers an unknown tool with a JSON-RPC invalid-params error', async () => {
    const ws = await workspaceWithKeys(h.database.pool);
    const res = await post(rpc('tools/call', { name: 'no-such-tool', arguments: {} }), mcpHeaders(ws.readKey));
    expect(res.statusCode).toBe(200);
    // The message as written: clients add their own "MCP error -32602:" prefix.
    expect(res.json().error).toEqual({ code: -32602, message: 'Unknown tool "no-such-tool"; tools/list names them.' });
  });

  it('answers malformed tools/call params with -32602 naming the problem, not an internal error', async () => {
    const ws = await workspaceWithKeys(h.database.pool);
    const bodies = [
      { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'get-balance', arguments: null } },
      { jsonrpc: '2.0', id: 8, method: 'tools/call', params: { name: 'get-balance', arguments: [] } },
      { jsonrpc: '2.0', id: 9, method: 'tools/call', params: { arguments: {} } },
      { jsonrpc: '2.0', id: 10, method: 'tools/call' },
    ];
    for (const body of bodies) {
      const res = await post(body, mcpHeaders(ws.readKey));
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({ jsonrpc: '2.0', id: body.id, error: { code: -32602, message: expect.stringMatching(/^Invalid params/) } });
    }
  });

  it('answers malformed params of the other methods with -32602 naming the field, not an internal error', async () => {
    const ws = await workspaceWithKeys(h.database.pool);
    const cases: Array<[object, RegExp]> = [
      [{ jsonrpc: '2.0', id: 11, method: 'initialize' }, /^Invalid params: params: /],
      [{ jsonrpc: '2.0', id: 12, method: 'initialize', params: { capabilities: {}, clientInfo: { name: 'x', version: '1' } } }, /^Invalid params: params\.protocolVersion: /],
      [{ jsonrpc: '2.0', id: 13, method: 'tools/list', params: { cursor: 5 } }, /^Invalid params: params\.cursor: /],
      [{ jsonrpc: '2.0', id: 14, method: 'ping', params: [] }, /^Invalid params: params: /],
    ];
    for (const [body, message] of cases) {
      const res = await post(body, mcpHeaders(ws.readKey));
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({ jsonrpc: '2.0', id: (body as { id: number }).id, error: { code: -32602, message: expect.stringMatching(message) } });
    }
    // Well-formed ones still reach the SDK.
    const ok = await post({ jsonrpc: '2.0', id: 15, method: 'tools/list', params: {} }, mcpHeaders(ws.readKey));
    expect(ok.json().result.tools.length).toBeGreaterThan(0);
  });

  it('answers the malformed requests of a batch with -32602 and hands the others to the SDK', async () => {
    const ws = await workspaceWithKeys(h.database.pool);
    const mixed = await post([{ jsonrpc: '2.0', id: 21, method: 'tools/list', params: {} }, { jsonrpc: '2.0', id: 22, method: 'initialize' }], mcpHeaders(ws.readKey));
    expect(mixed.statusCode).toBe(200);
    const answers = mixed.json() as Array<{ id: number; result?: { tools: unknown[] }; error?: { code: number } }>;
    expect(answers.map((a) => a.id).sort()).toEqual([21, 22]);
    expect(answers.find((a) => a.id === 21)?.result?.tools.length).toBeGreaterThan(0);
    expect(answers.find((a) => a.id === 22)?.error?.code).toBe(-32602);
    const allBad = await post([{ jsonrpc: '2.0', id: 23, method: 'initialize' }], mcpHeaders(ws.readKey));
    expect(allBad.json()).toEqual([expect.objectContaining({ id: 23, error: expect.objectContaining({ code: -32602 }) })]);
  });

  it('answers a malformed _meta alone, on any method, without refusing the rest of the batch', async () => {
    const ws = await workspaceWithKeys(h.database.pool);
    // The transport checks _meta on every request and refused the whole body (a 400 parse error)
    // when one was malformed: the valid ping went unanswered.
    const batch = await post(
      [
        { jsonrpc: '2.0', id: 31, method: 'ping' },
        { jsonrpc: '2.0', id: 32, method: 'tools/call', params: { name: 'get-balance', _meta: { progressToken: true } } },
        { jsonrpc: '2.0', id: 33, method: 'no/such-method', params: { _meta: 5 } },
      ],
      mcpHeaders(ws.readKey),
    );
    expect(batch.statusCode).toBe(200);
    const answers = batch.json() as Array<{ id: number; result?: object; error?: { code: number; message: string } }>;
    expect(answers.map((a) => a.id).sort()).toEqual([31, 32, 33]);
    expect(answers.find((a) => a.id === 31)?.result).toEqual({});
    expect(answers.find((a) => a.id === 32)?.error).toMatchObject({ code: -32602, message: expect.stringMatching(/^Invalid params: params\._meta\.progressToken: /) });
    expect(answers.find((a) => a.id === 33)?.error).toMatchObject({ code: -32602, message: expect.stringMatching(/^Invalid params: params\._meta: /) });
    // A well-formed _meta still reaches the tool.
    const withMeta = await post({ jsonrpc: '2.0', id: 34, method: 'tools/call', params: { name: 'get-balance', _meta: { progressToken: 'p1' } } }, mcpHeaders(ws.readKey));
    expect(withMeta.json().result.structuredContent).toBeDefined();
  });
});

describe('POST /mcp: the streamable HTTP checks — errors', () => {
  it('answers notifications alone with 202, and refuses what is not JSON-RPC, oversized batches, a batched initialize and unknown protocol versions', async () => {
    const ws = await workspaceWithKeys(h.database.pool);
    const initialized = { jsonrpc: '2.0', method: 'notifications/initialized' };
    const note = await post(initialized, mcpHeaders(ws.readKey));
    expect(note.statusCode).toBe(202);
    expect(note.body).toBe('');
    const notRpc = await post({ hello: 'world' }, mcpHeaders(ws.readKey));
    expect(notRpc.statusCode).toBe(400);
    expect(notRpc.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32700 }, id: null });
    const many = await post(Array.from({ length: 101 }, () => initialized), mcpHeaders(ws.readKey));
    expect(many.statusCode).toBe(400);
    expect(many.json()).toMatchObject({ error: { code: -32600, message: expect.stringContaining('100') } });

    const other = await workspaceWithKeys(h.database.pool);
    const init = rpc('initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } });
    const batched = await post([init, rpc('ping', {}, 2)], mcpHeaders(other.readKey));
    expect(batched.statusCode).toBe(400);
    expect(batched.json()).toMatchObject({ error: { code: -32600 } });
    const version = await post(rpc('ping'), { ...mcpHeaders(other.readKey), 'mcp-protocol-version': '1999-01-01' });
    expect(version.statusCode).toBe(400);
    expect(version.json()).toMatchObject({ error: { code: -32000, message: expect.stringContaining('1999-01-01') } });
  });

  it('answers an empty batch with one Invalid Request error (JSON-RPC 2.0, section 6)', async () => {
    const ws = await workspaceWithKeys(h.database.pool);
    const res = await post([], mcpHeaders(ws.readKey));
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ jsonrpc: '2.0', error: { code: -32600, message: expect.stringContaining('Invalid Request') }, id: null });
  });

  it('answers a body of another type with a parse error (400), and a POST with no body and no type with 415', async () => {
    const ws = await workspaceWithKeys(h.database.pool);
    const text = await post(JSON.stringify(rpc('ping')), { ...mcpHeaders(ws.readKey), 'content-type': 'text/plain' });
    expect(text.statusCode).toBe(400);
    expect(text.json()).toEqual({ jsonrpc: '2.0', error: { code: -32700, message: 'Parse error: Send the request body as application/json.' }, id: null });
    const none = await h.app.inject({ method: 'POST', url: '/mcp', headers: { accept: 'application/json, text/event-stream', ...bearer(ws.readKey) } });
    expect(none.statusCode).toBe(415);
    expect(none.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32000 }, id: null });
  });
});

describe('POST /mcp: one rate-limit bucket per key with REST — security', () => {
  it('shares one bucket per key between REST and every HTTP request to /mcp', async () => {
    const ws = await workspaceWithKeys(h.database.pool);
    const rest1 = await h.app.inject({ method: 'GET', url: '/api/v1/me', headers: bearer(ws.readKey) });
    expect(rest1.headers['x-ratelimit-remaining']).toBe('4');
    const mcp1 = await post(rpc('tools/list'), mcpHeaders(ws.readKey));
    expect(mcp1.statusCode).toBe(200);
    expect(mcp1.headers['x-ratelimit-remaining']).toBe('3');
    const get = await h.app.inject({ method: 'GET', url: '/mcp', headers: bearer(ws.readKey) });
    expect(get.statusCode).toBe(405);
    expect(get.headers['x-ratelimit-remaining']).toBe('2');
    await h.app.inject({ method: 'GET', url: '/api/v1/me', headers: bearer(ws.readKey) });
    const mcp2 = await post(rpc('tools/call', { name: 'get-balance', arguments: {} }), mcpHeaders(ws.readKey));
    expect(mcp2.statusCode).toBe(200);
    expect(mcp2.headers['x-ratelimit-remaining']).toBe('0');

    const limited = await post(rpc('tools/list'), mcpHeaders(ws.readKey));
    expect(limited.statusCode).toBe(429);
    expect(limited.json()).toMatchObject({ code: 'rate_limited' });
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    const rest = await h.app.inject({ method: 'GET', url: '/api/v1/me', headers: bearer(ws.readKey) });
    expect(rest.statusCode).toBe(429);
    // Another key has its own bucket.
    const other = await workspaceWithKeys(h.database.pool);
    expect((await post(rpc('tools/list'), mcpHeaders(other.readKey))).statusCode).toBe(200);
  });

  it('counts every request of a batch, and refuses a batch the bucket cannot hold before any of it runs', async () => {
    const ws = await workspaceWithKeys(h.database.pool);
    const call = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'get-balance', arguments: {} } });
    const notification = { jsonrpc: '2.0', method: 'notifications/initialized' };
    const three = await post([call(1), call(2), notification, call(3)], mcpHeaders(ws.readKey));
    expect(three.statusCode).toBe(200);
    expect((three.json() as unknown[]).length).toBe(3);
    expect(three.headers['x-ratelimit-remaining']).toBe('2');

    const tooMany = await post([call(4), call(5), call(6)], mcpHeaders(ws.readKey));
    expect(tooMany.statusCode).toBe(429);
    expect(tooMany.json()).toMatchObject({ code: 'rate_limited' });
    expect(Number(tooMany.headers['retry-after'])).toBeGreaterThan(0);
    expect(tooMany.headers['x-ratelimit-remaining']).toBe('0');
  });
});
