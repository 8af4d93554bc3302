import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, expect } from 'vitest';
import type { Harness } from '../helpers/app.js';

/** The app on a real socket, so the SDK's own client can talk to it over HTTP. */
export async function listen(h: Harness): Promise<URL> {
  if (!h.app.server.listening) await h.app.listen({ port: 0, host: '127.0.0.1' });
  const address = h.app.server.address();
  if (!address || typeof address !== 'object') throw new Error('not listening');
  return new URL(`http://127.0.0.1:${address.port}/mcp`);
}

/** An SDK client connected with `Authorization: Bearer <key>`; closed after the file's tests. */
export async function connect(url: URL, key: string): Promise<Client> {
  const client = new Client({ name: 'mcp-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(url, { requestInit: { headers: { Authorization: `Bearer ${key}` } } });
  await client.connect(transport);
  afterAll(() => client.close());
  return client;
}

export interface ToolErrorBody {
  code: string;
  message: string;
  request_id: string;
  [extra: string]: unknown;
}

/** Calls a tool and returns its structuredContent, failing the test on a tool error. */
export async function ok<T = Record<string, unknown>>(client: Client, name: string, args: Record<string, unknown> = {}): Promise<T> {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  if (result.isError) throw new Error(`${name} failed: ${JSON.stringify(result.content)}`);
  expect(result.structuredContent).toBeTypeOf('object');
  expect(JSON.parse((result.content[0] as { text: string }).text)).toEqual(result.structuredContent);
  return result.structuredContent as T;
}

/** Calls a tool that must fail; checks the error's shape and returns its parsed JSON. */
export async function fails(client: Client, name: string, args: Record<string, unknown>, code: string): Promise<ToolErrorBody> {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  expect(result.isError, JSON.stringify(result.content)).toBe(true);
  expect(result.structuredContent).toBeUndefined();
  expect(result.content).toHaveLength(1);
  const item = result.content[0] as { type: string; text: string };
  expect(item.type).toBe('text');
  const body = JSON.parse(item.text) as ToolErrorBody;
  expect(body).toMatchObject({ code });
  expect(typeof body.message).toBe('string');
  expect(typeof body.request_id).toBe('string');
  expect(item.text).not.toMatch(/stack|SELECT|INSERT|at \w+ \(|node_modules/);
  return body;
}

/** Headers of an MCP POST over inject. */
export const mcpHeaders = (key?: string) => ({
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  ...(key ? { authorization: `Bearer ${key}` } : {}),
});

export const rpc = (method: string, params: Record<string, unknown> = {}, id = 1) => ({ jsonrpc: '2.0', id, method, params });

export const articleFor = (url: string, anchor = 'our product') =>
  `# A useful article\n\n${'Plenty of words here to satisfy the count. '.repeat(10)}\n\nRead about [${anchor}](${url}).`;
