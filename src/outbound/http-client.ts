import http from 'node:http';
import https from 'node:https';
import { type OutboundPolicy, refuseUrl } from './address-policy.js';
import { createAgents, type OutboundAgents, RefusedAddress } from './agents.js';
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
  raw: string,
  body: string,
  headers: Record<string, string>,
  timeoutMs: number,
): Promise<OutboundResult> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return Promise.resolve({ status: null, durationMs: 0, error: 'refused: must be an absolute URL' });
  }
  // The scheme as the WHATWG parser reads it (`HTTPS:` is https), judged like at creation.
  const bad = refuseUrl(url);
  if (bad) return Promise.resolve({ status: null, durationMs: 0, error: `refused: ${bad}` });
  return new Promise((resolve) => {
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    const finish = (status: number | null, error: string | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ status, durationMs: elapsed(), error });
    };
    const secure = url.protocol === 'https:';
    let request: http.ClientRequest;
    try {
      request = (secure ? https : http).request(url, {
        method: 'POST',
        agent: secure ? agents.https : agents.http,
        headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), ...headers },
      });
    } catch (err) {
      // A request Node refuses to make (an invalid header value, say) is an attempt that failed.
      return finish(null, describe(err as Error));
    }
    // One deadline for connecting, sending and the whole reply.
    timer = setTimeout(() => {
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
  if (err instanceof RefusedAddress) {
    const hint = err.range === 'loopback' ? ' (loopback is allowed only when the server runs with OUTBOUND_ALLOW_LOOPBACK=true)' : '';
    return `refused: ${err.address} is a ${err.range} address; webhooks go to public addresses only${hint}`;
  }
  return err.code ? `${err.code}: ${err.message}`.slice(0, 300) : err.message.slice(0, 300);
}
