import pino, { type DestinationStream, type Logger } from 'pino';
import { redactPaths } from './http/plugins/logging.js';

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
