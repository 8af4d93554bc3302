import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import fp from 'fastify-plugin';
import sjson from 'secure-json-parse';
import { DomainError } from '../../domain/errors.js';
import { JSON_LIMITS } from '../body-limits.js';
import { scanJson } from './json-scan.js';

/**
 * JSON bodies: an empty body counts as `{}` (body-less POSTs may still send a JSON Content-Type),
 * unparseable JSON is a 400, and so are bytes that are not UTF-8 and a `__proto__` or
 * `constructor.prototype` key anywhere in it.
 */
const FORBIDDEN_KEY = 'The request body holds a "__proto__" or "constructor": {"prototype": …} key, which no request takes.';

const NOT_UTF8 = 'Send the request body as JSON in UTF-8: it holds bytes that are not UTF-8, or names another charset.';
const TOO_DEEP = `The request body nests objects and arrays more than ${JSON_LIMITS.maxDepth} levels deep, which no request does.`;
const TOO_MANY = `The request body holds more than ${JSON_LIMITS.maxValues.toLocaleString('en-US')} members and array elements, which no request does.`;
const CHARSET = /;\s*charset\s*=\s*([^;\s]*)/i;
const utf8 = new TextDecoder('utf-8', { fatal: true });

function missingBodyAsEmpty(request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction): void {
  if (request.body === undefined || request.body === null) request.body = {};
  done();
}

export const jsonBody = fp(
  async function jsonBody(app: FastifyInstance) {
    // The buyer API speaks JSON only: other media types answer 400 instead of reaching validation.
    app.removeContentTypeParser(['application/json', 'text/plain']);
    // ...but a body of zero bytes in another type is no body (`curl -X POST -d ''` sends a form
    // type): Fastify then parses nothing (docs/http.md: body-less POSTs accept an empty
    // body; the seller API reads an empty body of any type as none, as it does on GET).
    app.addHook('preParsing', async (request) => {
      const { headers } = request;
      const length = headers['content-length'];
      const empty = (length === undefined || length === '0') && headers['transfer-encoding'] === undefined;
      // An empty JSON body stays: the parsers read it as {}.
      if (empty && !/^\s*application\/json\s*(?:;|$)/i.test(headers['content-type'] ?? '')) delete headers['content-type'];
    });
    // No body (or JSON null) where a buyer API route takes one reads as {}, so the answer names
    // the fields that are missing ("reason: is required") rather than the body as a whole.
    // The seller API keeps its own reading of a missing body.
    app.addHook('onRoute', (route) => {
      if (!route.schema?.body || !route.url.startsWith('/api/v1/')) return;
      const own = route.preValidation ? [route.preValidation].flat() : [];
      route.preValidation = [missingBodyAsEmpty, ...own];
    });
    app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
      // JSON is UTF-8 (RFC 8259): bytes that are not, or another declared charset, would be stored
      // with U+FFFD in place of what was sent. US-ASCII is a subset, and an empty charset says nothing.
      const charset = CHARSET.exec(request.headers['content-type'] ?? '')?.[1];
      if (charset !== undefined && !/^"?(utf-?8|us-ascii)?"?$/i.test(charset)) return done(new DomainError('bad_request', NOT_UTF8), undefined);
      let text: string;
      try {
        text = utf8.decode(body as Buffer).trim();
      } catch {
        return done(new DomainError('bad_request', NOT_UTF8), undefined);
      }
      if (text === '') return done(null, {});
      // Depth and size are checked before parsing: a megabyte of `[` must not cost a parse.
      const scan = scanJson(text, JSON_LIMITS);
      if (scan.over) return done(new DomainError('bad_request', scan.over === 'depth' ? TOO_DEEP : TOO_MANY), undefined);
      try {
        const parsed: unknown = sjson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' });
        const twice = parsed !== null && typeof parsed === 'object' ? scan.duplicate : undefined;
        if (twice !== undefined) return done(new DomainError('bad_request', `The request body names "${twice}" twice; send each field once.`), undefined);
        done(null, parsed);
      } catch (err) {
        // Dropping such a key would act on a body other than the one sent (as an unknown field
        // would), and keeping it invites prototype pollution: it is refused.
        const forbidden = /forbidden (prototype|constructor) property/.test((err as Error).message);
        done(new DomainError('bad_request', forbidden ? FORBIDDEN_KEY : 'The request body is not valid JSON.'), undefined);
      }
    });
  },
  { name: 'json-body' },
);
