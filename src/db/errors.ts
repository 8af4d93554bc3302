// Errors meaning "the database cannot be reached right now" rather than "this query is wrong":
// they become 503 unavailable, never a 500 with driver text.
const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENOTFOUND',
  'EPIPE',
  '57P01', // admin_shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now
  '08000',
  '08001',
  '08003',
  '08004',
  '08006',
  '53300', // too_many_connections
]);

const UNAVAILABLE_MESSAGES = [
  'timeout exceeded when trying to connect',
  'Connection terminated',
  'connection timeout',
  'Client has encountered a connection error',
  'the database system is',
];

export function isDatabaseUnavailable(err: unknown): boolean {
  let e: unknown = err;
  for (let depth = 0; e && depth < 4; depth++) {
    const { code, message } = e as { code?: unknown; message?: unknown };
    if (typeof code === 'string' && UNAVAILABLE_CODES.has(code)) return true;
    if (typeof message === 'string' && UNAVAILABLE_MESSAGES.some((m) => message.includes(m))) return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}

/** The first value `pick` finds on a driver error or the errors it wraps (Drizzle wraps pg's). */
function findInCauses(err: unknown, pick: (e: Record<string, unknown>) => string | undefined): string | undefined {
  let e: unknown = err;
  for (let depth = 0; e && typeof e === 'object' && depth < 4; depth++) {
    const found = pick(e as Record<string, unknown>);
    if (found !== undefined) return found;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

/** PostgreSQL error code of a driver error (possibly wrapped by Drizzle), if any. */
export function pgErrorCode(err: unknown): string | undefined {
  return findInCauses(err, ({ code }) => (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined));
}

/** The constraint a driver error names (possibly wrapped by Drizzle), if any. */
export function constraintOf(err: unknown): string | undefined {
  return findInCauses(err, ({ constraint }) => (typeof constraint === 'string' ? constraint : undefined));
}
