// Preload for scripts/mcp-conformance.sh (`node --import`): the conformance suite sends no custom
// headers, so every fetch it makes gets `Authorization: Bearer $MCP_KEY`.
const key = process.env.MCP_KEY;
if (!key) throw new Error('mcp-auth-fetch.mjs: MCP_KEY is not set');

const fetch = globalThis.fetch;
globalThis.fetch = (input, init = {}) => {
  const headers = new Headers(init.headers ?? (input instanceof Request ? input.headers : undefined));
  if (!headers.has('authorization')) headers.set('authorization', `Bearer ${key}`);
  return fetch(input, { ...init, headers });
};
