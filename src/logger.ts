import pino, { type DestinationStream, type Logger } from 'pino';

/** Names whose value is a secret, in a logged object or in a logged error (docs/http.md, Logs). */
const SECRET_NAMES = [
  'api_key',
  'purchase_code',
  'confirmation_token',
  // Console forms and cookies (docs/console.md): passwords and CSRF tokens.
  'password',
  '_csrf',
  // OAuth (docs/oauth.md): tokens, verifiers and client secrets.
  'access_token',
  'refresh_token',
  'id_token',
  'code_verifier',
  'client_secret',
  'registration_access_token',
];

/**
 * Paths pino redacts from any object logged (headers and bodies carrying secrets). A PostgreSQL
 * error's `detail` quotes the row it refused (an idempotency key, a purchase code), so it goes too.
 *
 * The secret names are redacted at the top level and inside `err`, the one nested object the
 * server logs (besides the headers below), not under a wildcard (`*.api_key`): pino runs a
 * wildcard's redactor on every value of every line, and with these eleven names that cost about
 * 20 µs a line, on every request (bench/RESULTS.md). A log call that adds another nested object
 * names it here.
 */
const redactPaths = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["idempotency-key"]',
  'headers.authorization',
  'headers["idempotency-key"]',
  'headers.cookie',
  'headers["set-cookie"]',
  'res.headers["set-cookie"]',
  'authorization',
  ...SECRET_NAMES,
  ...SECRET_NAMES.map((name) => `err.${name}`),
  'body.api_key',
  'query.api_key',
  // An OAuth authorization code; `err.code` is an error's code and stays.
  'code',
  'body.code',
  'err.detail',
  'err.cause.detail',
];

/** JSON logs; pretty only when a person is watching a terminal. */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  const options: pino.LoggerOptions = {
    level,
    redact: { paths: redactPaths, censor: '[REDACTED]' },
    base: { service: 'marketplace-api' },
    timestamp: pino.stdTimeFunctions.isoTime,
  };
  if (destination) return pino(options, destination);
  if (process.stdout.isTTY) {
    return pino({ ...options, transport: { target: 'pino-pretty', options: { translateTime: 'SYS:HH:MM:ss' } } });
  }
  return pino(options);
}
