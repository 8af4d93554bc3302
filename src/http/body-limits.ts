/**
 * How much of a request body each kind of route reads. Fastify refuses a larger body with 413 from
 * its Content-Length (or as soon as a chunked body passes the limit), before parsing anything, so
 * the most a hostile body costs is bounded by the route it is sent to.
 */
export const BODY_LIMITS = {
  /** Routes that take an article (200,000 characters of Markdown): POST /orders, content, drafts, /mcp. */
  content: 1024 * 1024,
  /** Every other buyer API route: its largest field is a few thousand characters. */
  standard: 64 * 1024,
  /** The seller API: three scalar parameters (api_key, item_id, purchase_code). */
  catalog: 8 * 1024,
} as const;

/**
 * Limits on a JSON body's shape, checked in one pass before it is parsed (json-scan.ts). The
 * deepest legal body (a JSON-RPC batch of tool calls) nests six levels; the largest list is 50
 * offer ids.
 */
export const JSON_LIMITS = { maxDepth: 32, maxValues: 10_000 } as const;

const kib = (bytes: number) => `${bytes / 1024} KB`;

/** "1024 KB" reads worse than "1 MB". */
export function describeLimit(bytes: number): string {
  return bytes >= 1024 * 1024 && bytes % (1024 * 1024) === 0 ? `${bytes / 1024 / 1024} MB` : kib(bytes);
}
