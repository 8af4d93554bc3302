import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { DomainError, type ErrorCode, unavailableDatabase } from '../domain/errors.js';
import { page } from './context.js';

/** The console's one mapping of errors to pages: a status, a heading and a sentence; never a stack. */
const pages: Partial<Record<ErrorCode, { status: number; heading: string }>> = {
  not_found: { status: 404, heading: 'Page not found' },
  forbidden: { status: 403, heading: 'Not allowed' },
  approval_required: { status: 403, heading: 'Not allowed' },
  budget_exceeded: { status: 403, heading: 'Over budget' },
  rate_limited: { status: 429, heading: 'Too many attempts' },
  unavailable: { status: 503, heading: 'Unavailable' },
  conflict: { status: 409, heading: 'Already done' },
  invalid_input: { status: 422, heading: 'Check the form' },
  // A body the app's parsers refuse (broken JSON, a duplicate member, an unknown charset).
  bad_request: { status: 400, heading: 'Bad request' },
  payload_too_large: { status: 413, heading: 'Too large' },
  method_not_allowed: { status: 405, heading: 'Not allowed' },
  not_acceptable: { status: 406, heading: 'Not available in that format' },
  request_timeout: { status: 408, heading: 'Too slow' },
};

const CSRF_MESSAGE = 'This form was not sent from this site, or it has expired. Go back, reload the page and send it again.';

export function consoleError(err: unknown): { status: number; heading: string; message: string } {
  const fe = err as Partial<FastifyError>;
  if (typeof fe.code === 'string' && fe.code.startsWith('FST_CSRF_')) return { status: 403, heading: 'Form expired', message: CSRF_MESSAGE };
  if (err instanceof DomainError) {
    const known = pages[err.code];
    if (known) return { ...known, message: err.message };
    if (err.code === 'unauthenticated') return { status: 401, heading: 'Sign in', message: err.message };
  }
  const unavailable = unavailableDatabase(err);
  if (unavailable) return { status: 503, heading: 'Unavailable', message: unavailable.message };
  if (typeof fe.statusCode === 'number' && fe.statusCode >= 400 && fe.statusCode < 500) {
    if (fe.statusCode === 413) return { status: 413, heading: 'Too large', message: 'The form sent more than this page takes.' };
    return { status: 400, heading: 'Bad request', message: 'The request could not be understood.' };
  }
  return { status: 500, heading: 'Something went wrong', message: 'Something went wrong on our side. It has been logged.' };
}

export async function renderConsoleError(err: unknown, request: FastifyRequest, reply: FastifyReply) {
  const { status, heading, message } = consoleError(err);
  if (status >= 500) request.log.error({ err }, 'console request failed');
  reply.code(status).header('cache-control', 'no-store');
  return page(request, reply, 'error', { title: heading, heading, message });
}
