import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import { documentAs } from './param-docs.js';

/** A positive integer query parameter given as digits, with a range and a default. */
export function intQuery(min: number, max: number, fallback: number, what: string) {
  const parsed = z
    .string()
    .regex(/^\d{1,10}$/, `${what} must be an integer between ${min} and ${max}`)
    .transform(Number)
    .refine((n) => n >= min && n <= max, `${what} must be an integer between ${min} and ${max}`)
    .optional()
    .transform((n) => n ?? fallback);
  return documentAs(parsed, { type: 'integer', minimum: min, maximum: max, default: fallback });
}

export const pageQuery = {
  page: intQuery(1, 1_000_000, 1, 'page').describe('1-based page number, 1..1000000 (default 1).'),
  per_page: intQuery(1, 100, 15, 'per_page').describe('Items per page, 1..100 (default 15).'),
};

export const paginationLinks = z
  .object({
    first: z.string().nullable(),
    last: z.string().nullable(),
    prev: z.string().nullable(),
    next: z.string().nullable(),
  })
  .meta({ id: 'PaginationLinks' });

export const paginationMeta = z.object({
  current_page: z.number().int(),
  from: z.number().int().nullable(),
  last_page: z.number().int(),
  links: z.array(z.object({ url: z.string().nullable(), label: z.string(), active: z.boolean() })),
  path: z.string(),
  per_page: z.number().int(),
  to: z.number().int().nullable(),
  total: z.number().int(),
}).meta({ id: 'PaginationMeta' });

export function paginated<T extends z.ZodType>(item: T) {
  return z.object({ data: z.array(item), links: paginationLinks, meta: paginationMeta });
}

function baseUrl(request: FastifyRequest, publicBaseUrl: string | undefined): string {
  if (publicBaseUrl) return publicBaseUrl.replace(/\/$/, '');
  return `${request.protocol}://${request.host}`;
}

const range = (from: number, to: number) => Array.from({ length: Math.max(0, to - from + 1) }, (_, i) => from + i);

/**
 * The page numbers `meta.links` lists, as Laravel's UrlWindow picks them (three on each side of
 * the current page): every page while there are fewer than 14, else the first two, a window
 * around the current page and the last two, with '...' between.
 */
export function pageWindow(current: number, last: number, onEachSide = 3): Array<number | '...'> {
  if (last < onEachSide * 2 + 8) return range(1, last);
  const window = onEachSide + 4;
  if (current <= window) return [...range(1, window + onEachSide), '...', last - 1, last];
  if (current > last - window) return [1, 2, '...', ...range(last - (window + onEachSide - 1), last)];
  return [1, 2, '...', ...range(current - onEachSide, current + onEachSide), '...', last - 1, last];
}

/**
 * Laravel's paginator `links` and `meta` (the seed's list shape). Every query parameter the
 * caller sent, filters included, is kept in the page links; only `page` changes.
 */
export function pageEnvelope(
  request: FastifyRequest,
  publicBaseUrl: string | undefined,
  p: { page: number; perPage: number; total: number; count: number },
) {
  const path = baseUrl(request, publicBaseUrl) + (request.url.split('?')[0] ?? '');
  const params = new URLSearchParams(request.url.includes('?') ? request.url.slice(request.url.indexOf('?') + 1) : '');
  const lastPage = Math.max(1, Math.ceil(p.total / p.perPage));
  const url = (page: number) => {
    params.set('page', String(page));
    return `${path}?${params.toString()}`;
  };
  const from = p.count > 0 ? (p.page - 1) * p.perPage + 1 : null;
  const pageLinks = pageWindow(p.page, lastPage).map((i) =>
    i === '...' ? { url: null, label: '...', active: false } : { url: url(i), label: String(i), active: i === p.page },
  );
  return {
    links: {
      first: url(1),
      last: url(lastPage),
      prev: p.page > 1 ? url(Math.min(p.page - 1, lastPage)) : null,
      next: p.page < lastPage ? url(p.page + 1) : null,
    },
    meta: {
      current_page: p.page,
      from,
      last_page: lastPage,
      links: [
        { url: p.page > 1 ? url(Math.min(p.page - 1, lastPage)) : null, label: '&laquo; Previous', active: false },
        ...pageLinks,
        { url: p.page < lastPage ? url(p.page + 1) : null, label: 'Next &raquo;', active: false },
      ],
      path,
      per_page: p.perPage,
      to: from === null ? null : from + p.count - 1,
      total: p.total,
    },
  };
}
