import http, { type IncomingHttpHeaders } from 'node:http';
import https from 'node:https';
import type { Readable } from 'node:stream';
import zlib from 'node:zlib';
import { refuseUrl } from './address-policy.js';
import type { OutboundAgents } from './agents.js';

/** A page larger than this (after decompression) is not read on. */
export const PAGE_MAX_BYTES = 2 * 1024 * 1024;
export const PAGE_MAX_REDIRECTS = 5;
/** Says who is asking and why, so a publisher reading their logs can tell. */
export const PAGE_USER_AGENT = 'MarketplaceLinkCheck/1.0 (verifies sponsored placements)';

export type PageFailure = 'bad_url' | 'timeout' | 'too_large' | 'refused' | 'network' | 'too_many_redirects' | 'bad_redirect';

export interface PageOptions {
  /** One deadline for the whole fetch: every redirect, and the body. */
  timeoutMs: number;
  maxBytes?: number;
}

/**
 * A fetched page, whatever its status (a 404 is an answer), or why none could be read. `finalUrl`
 * is the last URL requested; `redirects` the URLs redirected to, in order.
 */
export type PageResult =
  | { ok: true; status: number; finalUrl: string; headers: Record<string, string>; body: string; redirects: string[] }
  | { ok: false; reason: PageFailure; detail: string; status?: number; finalUrl: string; redirects: string[] };

export interface PageFetcher {
  get(url: string, options: PageOptions): Promise<PageResult>;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

class PageError extends Error {
  constructor(
    readonly reason: PageFailure,
    detail: string,
    readonly status?: number,
  ) {
    super(detail);
  }
}

interface Reply {
  status: number;
  headers: IncomingHttpHeaders;
  /** null for a redirect, whose body is not read. */
  body: Buffer | null;
}

const isWeb = (url: URL) => url.protocol === 'http:' || url.protocol === 'https:';
const size = (bytes: number) => (bytes % (1024 * 1024) === 0 ? `${bytes / (1024 * 1024)} MB` : `${bytes} bytes`);

/**
 * GET a page as a reader's browser would reach it: redirects followed (at most five, http and
 * https only), each hop a new request through the address-checking agents, so every address
 * connected to is judged.
 */
export async function getPage(agents: OutboundAgents, raw: string, options: PageOptions): Promise<PageResult> {
  const maxBytes = options.maxBytes ?? PAGE_MAX_BYTES;
  const redirects: string[] = [];
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, reason: 'bad_url', detail: `"${raw}" is not an absolute URL.`, finalUrl: raw, redirects };
  }
  if (!isWeb(url)) return { ok: false, reason: 'bad_url', detail: `${url.href} is not an http or https URL.`, finalUrl: url.href, redirects };
  if (url.username !== '' || url.password !== '') {
    return { ok: false, reason: 'bad_url', detail: `A URL with user:password@ (on ${url.host}) is not fetched.`, finalUrl: url.href, redirects };
  }
  // What else webhook targets are judged by (port 0, which Node would turn into the default port).
  const refused = refuseUrl(url);
  if (refused) return { ok: false, reason: 'bad_url', detail: `${url.href} is not fetched: it ${refused}.`, finalUrl: url.href, redirects };
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(), options.timeoutMs);
  try {
    for (;;) {
      const reply = await send(agents, url, deadline.signal, maxBytes, options.timeoutMs);
      if (reply.body !== null) {
        return { ok: true, status: reply.status, finalUrl: url.href, headers: flatten(reply.headers), body: decode(reply.body, reply.headers), redirects };
      }
      const location = reply.headers.location!;
      let next: URL;
      try {
        next = new URL(location, url);
      } catch {
        throw new PageError('bad_redirect', `${url.href} redirects (${reply.status}) to "${location}", which is not a URL.`, reply.status);
      }
      if (!isWeb(next)) throw new PageError('bad_redirect', `${url.href} redirects (${reply.status}) to ${next.href}, which is not an http or https URL.`, reply.status);
      if (redirects.length === PAGE_MAX_REDIRECTS) {
        throw new PageError('too_many_redirects', `More than ${PAGE_MAX_REDIRECTS} redirects: ${url.href} redirects again, to ${next.href}.`, reply.status);
      }
      // Credentials a redirect hands out are not sent on: the page is fetched as a reader sees it.
      next.username = '';
      next.password = '';
      const refusedNext = refuseUrl(next);
      if (refusedNext) throw new PageError('bad_redirect', `${url.href} redirects (${reply.status}) to ${next.href}, which is not fetched: it ${refusedNext}.`, reply.status);
      redirects.push(next.href);
      url = next;
    }
  } catch (err) {
    const e = err instanceof PageError ? err : explain(err as Error & { code?: string }, url);
    return { ok: false, reason: e.reason, detail: e.message, ...(e.status === undefined ? {} : { status: e.status }), finalUrl: url.href, redirects };
  } finally {
    clearTimeout(timer);
  }
}

function send(agents: OutboundAgents, url: URL, deadline: AbortSignal, maxBytes: number, timeoutMs: number): Promise<Reply> {
  return new Promise((resolve, reject) => {
    if (deadline.aborted) return reject(late(url, timeoutMs));
    const secure = url.protocol === 'https:';
    const request = (secure ? https : http).request(url, {
      method: 'GET',
      agent: secure ? agents.https : agents.http,
      headers: {
        'user-agent': PAGE_USER_AGENT,
        accept: 'text/html,application/xhtml+xml;q=0.9,*/*;q=0.5',
        'accept-encoding': 'gzip, deflate, br',
      },
    });
    let body: Readable | undefined;
    let settled = false;
    // The first reason wins: destroying the request below makes the reply report its own.
    const stop = (error: Error) => {
      if (settled) return;
      settled = true;
      deadline.removeEventListener('abort', onDeadline);
      reject(error);
      request.destroy();
      body?.destroy();
    };
    const onDeadline = () => stop(late(url, timeoutMs));
    deadline.addEventListener('abort', onDeadline, { once: true });
    request.on('error', (err) => stop(err));
    request.on('response', (response) => {
      const status = response.statusCode ?? 0;
      if (REDIRECTS.has(status) && response.headers.location !== undefined) {
        settled = true;
        deadline.removeEventListener('abort', onDeadline);
        response.destroy();
        return resolve({ status, headers: response.headers, body: null });
      }
      const declared = Number(response.headers['content-length']);
      if (declared > maxBytes) return stop(tooLarge(url, maxBytes, status, `it declares ${declared} bytes`));
      body = decompress(response);
      const chunks: Buffer[] = [];
      let read = 0;
      body.on('data', (chunk: Buffer) => {
        read += chunk.length;
        if (read > maxBytes) stop(tooLarge(url, maxBytes, status, `stopped reading after ${size(maxBytes)}`));
        else chunks.push(chunk);
      });
      const cutShort = () => stop(new PageError('network', `${url.host} closed the connection before the page was complete.`, status));
      response.on('error', cutShort);
      response.on('close', () => response.complete || cutShort());
      if (body !== response) body.on('error', () => stop(new PageError('network', `The page at ${url.href} is compressed (${response.headers['content-encoding']}) but could not be decompressed.`, status)));
      body.on('end', () => {
        if (settled) return;
        settled = true;
        deadline.removeEventListener('abort', onDeadline);
        resolve({ status, headers: response.headers, body: Buffer.concat(chunks) });
      });
    });
    request.end();
  });
}

/** The body as sent, or decompressed when the server compressed it. */
function decompress(response: http.IncomingMessage): Readable {
  const encoding = response.headers['content-encoding']?.trim().toLowerCase();
  const decoder =
    encoding === 'gzip' || encoding === 'x-gzip'
      ? zlib.createGunzip()
      : encoding === 'deflate'
        ? zlib.createInflate()
        : encoding === 'br'
          ? zlib.createBrotliDecompress()
          : undefined;
  return decoder ? response.pipe(decoder) : response;
}

const late = (url: URL, timeoutMs: number) => new PageError('timeout', `No complete answer from ${url.host} within ${timeoutMs} ms (${url.href}).`);

const tooLarge = (url: URL, maxBytes: number, status: number, how: string) =>
  new PageError('too_large', `The page at ${url.href} is larger than ${size(maxBytes)} (${how}).`, status);

const NETWORK: Record<string, string> = {
  ENOTFOUND: 'the host name does not resolve',
  EAI_AGAIN: 'the host name could not be resolved (temporary DNS failure)',
  ECONNREFUSED: 'the connection was refused',
  ECONNRESET: 'the connection was reset',
  EHOSTUNREACH: 'the host is unreachable',
  ENETUNREACH: 'the network is unreachable',
  ETIMEDOUT: 'the connection timed out',
  EPROTO: 'the TLS handshake failed',
  HPE_INVALID_CONSTANT: 'the reply is not valid HTTP',
};

function explain(err: Error & { code?: string }, url: URL): PageError {
  // The agents' refusal (./agents.ts): "DNS lookup 127.0.0.1(family:4, host:…) is not allowed…".
  if (/is not allowed/.test(err.message)) {
    const address = /DNS lookup (\S+?)\(/.exec(err.message)?.[1] ?? 'its address';
    return new PageError('refused', `Refused to connect to ${url.host}: ${address} is a private, loopback, link-local or metadata address, which outbound requests may not reach.`);
  }
  const code = err.code ?? '';
  const why = NETWORK[code] ?? (/CERT|SSL|TLS/.test(code) ? `its TLS certificate was not accepted (${code})` : `${code ? `${code}: ` : ''}${err.message}`.slice(0, 200));
  return new PageError('network', `Could not fetch ${url.href}: ${why}.`);
}

/** Repeated headers (X-Robots-Tag may come twice) as one value, joined as HTTP allows. */
function flatten(headers: IncomingHttpHeaders): Record<string, string> {
  const flat: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) if (value !== undefined) flat[name] = Array.isArray(value) ? value.join(', ') : value;
  return flat;
}

/**
 * Text from the charset the page declares (Content-Type, else a <meta> in its first kilobyte),
 * as TextDecoder knows it; UTF-8 otherwise, with invalid bytes replaced.
 */
function decode(body: Buffer, headers: IncomingHttpHeaders): string {
  const declared =
    /charset\s*=\s*["']?([\w.:-]+)/i.exec(headers['content-type'] ?? '')?.[1] ??
    /<meta[^>]+charset\s*=\s*["']?([\w.:-]+)/i.exec(body.subarray(0, 1024).toString('latin1'))?.[1];
  try {
    return new TextDecoder(declared ?? 'utf-8').decode(body);
  } catch {
    return new TextDecoder('utf-8').decode(body);
  }
}
