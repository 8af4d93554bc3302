import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

const CALLER_ID = /^[A-Za-z0-9._-]{1,128}$/;

/** The caller's X-Request-Id when it is safe to echo back, else a new one (docs/http.md). */
export function genReqId(req: IncomingMessage): string {
  const given = req.headers['x-request-id'];
  return typeof given === 'string' && CALLER_ID.test(given) ? given : randomUUID();
}
