import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { JsonRpcReply } from '../../src/mcp/json-transport.js';
import { annotations, callTool, defineTool, type ToolContext } from '../../src/mcp/tool.js';
import { replyJson } from '../../src/mcp/tool-call.js';
import { setupApp } from '../helpers/app.js';
import { workspaceWithKeys } from '../helpers/fixtures.js';
import { mcpHeaders } from './helpers.js';

// A plain tools/call's reply is written by hand (tool-call.ts, `replyJson`) rather than by
// JSON.stringify, reusing the result's text as its structuredContent: these tests hold it to the
// bytes JSON.stringify writes, for awkward data and ids, and to the SDK's own reply.
const h = await setupApp();

const log = { warn() {}, error() {}, info() {}, debug() {}, child: () => log } as unknown as ToolContext['log'];
const caller = { principal: { canPlaceOrders: true } as ToolContext['principal'], requestId: 'req-1', log };
const resultOf = async (data: unknown, fails = false) => {
  const def = defineTool({
    name: 'echo',
    title: 'Echo',
    description: 'Returns its data.',
    input: z.object({}),
    output: z.object({}),
    annotations: annotations.read,
    run: async () => {
      if (fails) throw new Error('boom');
      return data as Record<string, never>;
    },
  });
  return callTool(def, async () => ({}) as ToolContext, caller, {});
};

describe('replyJson: the bytes JSON.stringify writes — happy', () => {
  const data = {
    text: 'quotes " and \\ backslashes, a tab\t, a newline\n, \u2028 \u2029, é, 😀, a lone \ud800 surrogate, </script>',
    nested: { list: [1, -0, 1.5e-7, 2 ** 53, null, true, 'x'], empty: {}, none: [] },
    when: new Date(Date.UTC(2026, 11, 3, 9, 0, 0)),
    dropped: undefined,
  };
  const ids = [0, 1, -7, 2 ** 53 - 1, '', 'abc', 'a "quoted" \\ id\n', '😀'];
  for (const id of ids) {
    it(`writes a tool's result with id ${JSON.stringify(id)} as JSON.stringify does`, async () => {
      const reply: JsonRpcReply = { result: await resultOf(data), jsonrpc: '2.0', id };
      expect(replyJson(reply)).toBe(JSON.stringify(reply));
      expect(JSON.parse(replyJson(reply)).result.structuredContent).toEqual(JSON.parse(JSON.stringify(data)));
    });
  }

  it('stringifies a tool error and a JSON-RPC error whole', async () => {
    const failed: JsonRpcReply = { result: await resultOf({}, true), jsonrpc: '2.0', id: 3 };
    expect(failed.result.isError).toBe(true);
    expect(replyJson(failed)).toBe(JSON.stringify(failed));
    const error: JsonRpcReply = { jsonrpc: '2.0', id: 'x', error: { code: -32602, message: 'Unknown tool "y"; tools/list names them.' } };
    expect(replyJson(error)).toBe(JSON.stringify(error));
  });
});

describe('POST /mcp: a plain tools/call answers the bytes the SDK answers — happy', () => {
  it('sends the same body and content type for get-balance with or without _meta (the SDK path)', async () => {
    const ws = await workspaceWithKeys(h.database.pool, { balanceCents: 12_345 });
    for (const id of [1, 'call "one" \\ é']) {
      const send = (params: object) =>
        h.app.inject({ method: 'POST', url: '/mcp', headers: mcpHeaders(ws.readKey), payload: { jsonrpc: '2.0', id, method: 'tools/call', params } });
      const plain = await send({ name: 'get-balance', arguments: {} });
      const viaSdk = await send({ name: 'get-balance', arguments: {}, _meta: { progressToken: 'p1' } });
      expect(plain.statusCode).toBe(200);
      expect(plain.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(viaSdk.headers['content-type']).toBe(plain.headers['content-type']);
      expect(plain.body).toBe(viaSdk.body);
      const reply = plain.json();
      expect(reply.id).toBe(id);
      expect(reply.result.structuredContent.balance).toBe(12_345);
      expect(JSON.parse(reply.result.content[0].text)).toEqual(reply.result.structuredContent);
    }
  });
});
