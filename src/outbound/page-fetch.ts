import http, { type IncomingHttpHeaders } from 'node:http';
import https from 'node:https';
import { type Readable, Transform, type TransformCallback } from 'node:stream';
import zlib from 'node:zlib';
import { refuseUrl } from './address-policy.js';
import { getBOMEncoding, legacyHookDecode, normalizeEncoding } from '@exodus/bytes/encoding.js';
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
  /**
   * Waits for the host's turn before each request, redirects included (the link checker's pacing
   * of the hosts it actually fetches). The first request's wait comes before the deadline starts.
   */
  pace?: (host: string) => Promise<void>;
}

/**
 * A fetched page, whatever its status (a 404 is an answer), or why none could be read. `finalUrl`
 * is the last URL requested; `redirects` the URLs redirected to, in order.
 */
export type PageResult =
  | {
      ok: true;
      status: number;
      finalUrl: string;
      /** Each header once; a repeated one joined with ", ". */
      headers: Record<string, string>;
      /** Each header's values as sent, a repeated header's apart (X-Robots-Tag is judged per header). */
      headersDistinct?: Record<string, string[]>;
      body: string;
      redirects: string[];
    }
  | {
      ok: false;
      reason: PageFailure;
      detail: string;
      status?: number;
      finalUrl: string;
      redirects: string[];
      /** The system error's code of a network failure (ECONNREFUSED, EHOSTUNREACH…). */
      code?: string;
      /** When the fetch failed, from its start. */
      elapsedMs?: number;
    };

export interface PageFetcher {
  get(url: string, options: PageOptions): Promise<PageResult>;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

class PageError extends Error {
  constructor(
    readonly reason: PageFailure,
    detail: string,
    readonly status?: number,
    readonly code?: string,
  ) {
    super(detail);
  }
}

interface Reply {
  status: number;
  headers: IncomingHttpHeaders;
  headersDistinct: Record<string, string[]>;
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
  await options.pace?.(url.hostname);
  const started = performance.now();
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(), options.timeoutMs);
  try {
    for (;;) {
      const reply = await send(agents, url, deadline.signal, maxBytes, options.timeoutMs);
      if (reply.body !== null) {
        return {
          ok: true,
          status: reply.status,
          finalUrl: url.href,
          headers: flatten(reply.headers),
          headersDistinct: reply.headersDistinct,
          body: decode(reply.body, reply.headers),
          redirects,
        };
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
      await options.pace?.(url.hostname);
    }
  } catch (err) {
    const elapsedMs = Math.round(performance.now() - started);
    const e = err instanceof PageError ? err : explain(err as Error & { code?: string }, url, elapsedMs);
    return {
      ok: false,
      reason: e.reason,
      detail: e.message,
      ...(e.status === undefined ? {} : { status: e.status }),
      finalUrl: url.href,
      redirects,
      ...(e.code === undefined ? {} : { code: e.code }),
      elapsedMs,
    };
  } finally {
    clearTimeout(timer);
  }
}

function send(agents: OutboundAgents, url: URL, deadline: AbortSignal, maxBytes: number, timeoutMs: number): Promise<Reply> {
  return new Promise((resolve, reject) => {
    if (deadline.aborted) return reject(late(url, timeoutMs, 'connecting'));
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
    // How far the request got, for a deadline's message: what happened, not only that time ran out.
    let stage: Stage = 'connecting';
    request.on('socket', (socket) => {
      if (!socket.connecting) stage = 'waiting';
      else socket.once('connect', () => (stage = stage === 'connecting' ? 'waiting' : stage));
    });
    // The first reason wins: destroying the request below makes the reply report its own.
    const stop = (error: Error) => {
      if (settled) return;
      settled = true;
      deadline.removeEventListener('abort', onDeadline);
      reject(error);
      request.destroy();
      body?.destroy();
    };
    const onDeadline = () => stop(late(url, timeoutMs, stage));
    deadline.addEventListener('abort', onDeadline, { once: true });
    request.on('error', (err) => stop(err));
    request.on('response', (response) => {
      stage = 'reading';
      const status = response.statusCode ?? 0;
      if (REDIRECTS.has(status) && response.headers.location !== undefined) {
        settled = true;
        deadline.removeEventListener('abort', onDeadline);
        response.destroy();
        return resolve({ status, headers: response.headers, headersDistinct: distinct(response.headersDistinct), body: null });
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
        resolve({ status, headers: response.headers, headersDistinct: distinct(response.headersDistinct), body: Buffer.concat(chunks) });
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
        ? new Inflate()
        : encoding === 'br'
          ? zlib.createBrotliDecompress()
          : undefined;
  return decoder ? response.pipe(decoder) : response;
}

/**
 * `deflate` as browsers read it: zlib-wrapped as HTTP says, or raw deflate as some servers send
 * it, told apart by the zlib header's check bits in the first two bytes.
 */
class Inflate extends Transform {
  private inner: zlib.Inflate | zlib.InflateRaw | undefined;

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    if (!this.inner) {
      const zlibHeader = chunk.length >= 2 && (chunk[0]! & 0x0f) === 8 && ((chunk[0]! << 8) | chunk[1]!) % 31 === 0;
      this.inner = zlibHeader ? zlib.createInflate() : zlib.createInflateRaw();
      this.inner.on('data', (out: Buffer) => this.push(out));
      this.inner.on('error', (err) => this.destroy(err));
    }
    this.inner.write(chunk, () => done());
  }

  override _flush(done: TransformCallback): void {
    if (!this.inner) return done();
    this.inner.once('end', () => done());
    this.inner.end();
  }

  override _destroy(err: Error | null, done: (err: Error | null) => void): void {
    this.inner?.destroy();
    done(err);
  }
}

type Stage = 'connecting' | 'waiting' | 'reading';
const STAGES: Record<Stage, string> = {
  connecting: 'the connection was never established',
  waiting: 'connected, but no reply began',
  reading: 'the reply began but did not finish',
};

const late = (url: URL, timeoutMs: number, stage: Stage) =>
  new PageError('timeout', `No complete answer from ${url.host} within ${timeoutMs} ms (${url.href}): ${STAGES[stage]}.`);

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

/** What went wrong, when: a network failure is reported as it happened, with its code and time. */
function explain(err: Error & { code?: string }, url: URL, elapsedMs: number): PageError {
  // The agents' refusal (./agents.ts): "DNS lookup 127.0.0.1(family:4, host:…) is not allowed…".
  if (/is not allowed/.test(err.message)) {
    const address = /DNS lookup (\S+?)\(/.exec(err.message)?.[1] ?? 'its address';
    return new PageError('refused', `Refused to connect to ${url.host}: ${address} is a private, loopback, link-local or metadata address, which outbound requests may not reach.`);
  }
  const code = err.code ?? '';
  const known = NETWORK[code] ?? (/CERT|SSL|TLS/.test(code) ? 'its TLS certificate was not accepted' : undefined);
  const why = known !== undefined ? `${known} (${code} after ${elapsedMs} ms)` : `${`${code ? `${code}: ` : ''}${err.message}`.slice(0, 200)} (after ${elapsedMs} ms)`;
  return new PageError('network', `Could not fetch ${url.href}: ${why}.`, undefined, code || undefined);
}

const distinct = (headers: NodeJS.Dict<string[]>): Record<string, string[]> =>
  Object.fromEntries(Object.entries(headers).filter((e): e is [string, string[]] => e[1] !== undefined));

/** Repeated headers (X-Robots-Tag may come twice) as one value, joined as HTTP allows. */
function flatten(headers: IncomingHttpHeaders): Record<string, string> {
  const flat: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) if (value !== undefined) flat[name] = Array.isArray(value) ? value.join(', ') : value;
  return flat;
}

/**
 * Text as a browser decodes it (the WHATWG encoding sniffing order): a byte-order mark wins
 * (UTF-8, UTF-16LE, UTF-16BE); else the charset in Content-Type; else a <meta> charset in the
 * first kilobyte (a UTF-16 one read as UTF-8, as the HTML standard says); else UTF-8. Labels and
 * decoders are the WHATWG Encoding Standard's (@exodus/bytes); an unknown label is ignored.
 */
function decode(body: Buffer, headers: IncomingHttpHeaders): string {
  const label = (value: string | undefined) => (value === undefined ? null : normalizeEncoding(value));
  const fromHeader = label(/charset\s*=\s*["']?([^"';\s]+)/i.exec(headers['content-type'] ?? '')?.[1]);
  let fromMeta: string | null = null;
  if (fromHeader === null && getBOMEncoding(body) === null) {
    fromMeta = label(/<meta[^>]+charset\s*=\s*["']?([^"'\s;/>]+)/i.exec(body.subarray(0, 1024).toString('latin1'))?.[1]);
    if (fromMeta === 'utf-16le' || fromMeta === 'utf-16be') fromMeta = 'utf-8';
    else if (fromMeta === 'x-user-defined') fromMeta = 'windows-1252';
  }
  return legacyHookDecode(body, fromHeader ?? fromMeta ?? 'utf-8');
}
