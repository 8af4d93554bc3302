import http from 'node:http';
import https from 'node:https';
import type { OutboundPolicy } from './address-policy.js';
import { createAgents, type OutboundAgents } from './agents.js';
import { getPage, type PageFetcher } from './page-fetch.js';

export interface OutboundResult {
  /** The reply's status, when one arrived in time. */
  status: number | null;
  durationMs: number;
  /** Why no (complete) reply arrived: a timeout, a refused address, a network error. */
  error: string | null;
}

export interface OutboundClient extends PageFetcher {
  post(url: string, body: string, headers: Record<string, string>, timeoutMs: number): Promise<OutboundResult>;
  close(): void;
}

/** Reply bodies are read up to this and then dropped: only the status matters. */
const MAX_REPLY_BYTES = 4096;

/**
 * HTTP requests to user-supplied URLs, through the address-checking agents (./agents.ts). A
 * webhook post follows no redirect (node's http does not), so a 3xx is just an unsuccessful
 * reply; a page fetch follows them itself, each hop through the same agents (./page-fetch.ts).
 */
export function createOutboundClient(policy: OutboundPolicy): OutboundClient {
  const agents = createAgents(policy);
  return {
    post: (url, body, headers, timeoutMs) => post(agents, url, body, headers, timeoutMs),
    get: (url, options) => getPage(agents, url, options),
    close() {
      agents.http.destroy();
      agents.https.destroy();
    },
  };
}

function post(
  agents: OutboundAgents,
  url: string,
  body: string,
  headers: Record<string, string>,
  timeoutMs: number,
): Promise<OutboundResult> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  return new Promise((resolve) => {
    let settled = false;
    const finish = (status: number | null, error: string | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ status, durationMs: elapsed(), error });
    };
    const secure = url.startsWith('https:');
    const request = (secure ? https : http).request(url, {
      method: 'POST',
      agent: secure ? agents.https : agents.http,
      headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), ...headers },
    });
    // One deadline for connecting, sending and the whole reply.
    const timer = setTimeout(() => {
      finish(null, `no reply within ${timeoutMs} ms`);
      request.destroy();
    }, timeoutMs);
    request.on('response', (response) => {
      let read = 0;
      response.on('data', (chunk: Buffer) => {
        read += chunk.length;
        if (read > MAX_REPLY_BYTES) {
          finish(response.statusCode ?? null, null);
          response.destroy();
        }
      });
      response.on('end', () => finish(response.statusCode ?? null, null));
      response.on('error', () => finish(response.statusCode ?? null, null));
    });
    request.on('error', (err) => finish(null, describe(err)));
    request.end(body);
  });
}

function describe(err: Error & { code?: string }): string {
  if (/is not allowed/.test(err.message)) return 'refused: the host resolves to a private, loopback, link-local or metadata address';
  return err.code ? `${err.code}: ${err.message}`.slice(0, 300) : err.message.slice(0, 300);
}
