import pino, { type DestinationStream, type Logger } from 'pino';

/**
 * Paths pino redacts from any object logged (headers and bodies carrying secrets). A PostgreSQL
 * error's `detail` quotes the row it refused (an idempotency key, a purchase code), so it goes too.
 */
const redactPaths = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["idempotency-key"]',
  'headers.authorization',
  'headers["idempotency-key"]',
  'authorization',
  'api_key',
  '*.api_key',
  'body.api_key',
  'query.api_key',
  'purchase_code',
  '*.purchase_code',
  'confirmation_token',
  '*.confirmation_token',
  // Console forms and cookies (docs/console.md): passwords, CSRF tokens, session ids.
  'password',
  '*.password',
  '_csrf',
  '*._csrf',
  'headers.cookie',
  'headers["set-cookie"]',
  'res.headers["set-cookie"]',
  // OAuth (docs/oauth.md): tokens, codes, verifiers and client secrets, wherever an object holds them.
  'access_token',
  '*.access_token',
  'refresh_token',
  '*.refresh_token',
  'id_token',
  '*.id_token',
  'code',
  'body.code',
  'code_verifier',
  '*.code_verifier',
  'client_secret',
  '*.client_secret',
  'registration_access_token',
  '*.registration_access_token',
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
