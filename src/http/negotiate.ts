import type { FastifyReply, FastifyRequest } from 'fastify';
import { DomainError } from '../domain/errors.js';
import { csvStream } from '../schemas/csv.js';

/**
 * Content negotiation of the lists that also answer CSV (docs/http.md): JSON stays the default
 * (no Accept, `*∕*`, `application/*`, JSON and CSV at equal weight); `text/csv` preferred gets the
 * CSV export; an Accept that names neither (`image/png`, both at q=0) is a 406.
 */

export type ListFormat = 'json' | 'csv';

const OFFERED = [
  ['application/json', 'json'],
  ['text/csv', 'csv'],
] as const;

interface Range {
  type: string;
  subtype: string;
  q: number;
}

function ranges(accept: string): Range[] {
  return accept.split(',').flatMap((part) => {
    const [media = '', ...params] = part.split(';').map((s) => s.trim().toLowerCase());
    const [type, subtype, extra] = media.split('/');
    if (!type || !subtype || extra !== undefined) return [];
    const qParam = params.find((p) => /^q\s*=/.test(p));
    const q = qParam ? Number(qParam.replace(/^q\s*=\s*/, '')) : 1;
    return Number.isFinite(q) && q >= 0 && q <= 1 ? [{ type, subtype, q }] : [];
  });
}

/** The weight an Accept gives a media type: that of its most specific matching range (RFC 9110 §12.5.1), 0 when none. */
function weightOf(list: Range[], mediaType: string): number {
  const [type, subtype] = mediaType.split('/');
  let best = -1;
  let q = 0;
  for (const r of list) {
    const specificity = r.type === type && r.subtype === subtype ? 2 : r.type === type && r.subtype === '*' ? 1 : r.type === '*' && r.subtype === '*' ? 0 : -1;
    if (specificity > best) {
      best = specificity;
      q = r.q;
    }
  }
  return q;
}

/** Which format a list answers: JSON when there is no Accept or it weighs JSON at least as CSV; else CSV; else 406. */
export function listFormat(request: FastifyRequest): ListFormat {
  const accept = request.headers.accept;
  if (accept === undefined || accept.trim() === '') return 'json';
  const list = ranges(accept);
  let picked: ListFormat | null = null;
  let weight = 0;
  for (const [type, format] of OFFERED) {
    const q = weightOf(list, type);
    if (q > weight) {
      picked = format;
      weight = q;
    }
  }
  if (!picked) {
    throw new DomainError('not_acceptable', `This endpoint answers application/json or text/csv; the Accept header names neither.`);
  }
  return picked;
}

/**
 * Streams `rows` as a CSV download named `filename`: every row the generator yields, read as the
 * client takes them. The status and headers go first; a database failure after that ends the
 * response early (the client sees a truncated download, never a 200 that looks complete and
 * is not: the connection is cut, not ended).
 */
export function sendCsv(reply: FastifyReply, filename: string, columns: string[], rows: AsyncIterable<unknown>) {
  reply
    .header('content-type', 'text/csv; charset=utf-8')
    .header('content-disposition', `attachment; filename="${filename}"`)
    .header('vary', 'Accept');
  return reply.send(csvStream(columns, rows));
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route also answers `Accept: text/csv` with these columns (the OpenAPI document lists them). */
    csv?: readonly string[];
  }
}
