import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import sjson from 'secure-json-parse';
import { DomainError } from '../../domain/errors.js';

/**
 * JSON bodies: an empty body counts as `{}` (body-less POSTs may still send a JSON Content-Type),
 * unparseable JSON is a 400, and `__proto__`/`constructor` keys are dropped rather than trusted.
 */
export const jsonBody = fp(
  async function jsonBody(app: FastifyInstance) {
    // Interface A speaks JSON only: other media types answer 400 instead of reaching validation.
    app.removeContentTypeParser(['application/json', 'text/plain']);
    app.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => {
      const text = (body as string).trim();
      if (text === '') return done(null, {});
      try {
        done(null, sjson.parse(text, undefined, { protoAction: 'remove', constructorAction: 'remove' }));
      } catch {
        done(new DomainError('bad_request', 'The request body is not valid JSON.'), undefined);
      }
    });
  },
  { name: 'json-body' },
);
