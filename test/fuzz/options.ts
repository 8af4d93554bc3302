import type { Config } from '../../src/config.js';

/** Rate limits out of the way: the fuzzer sends thousands of requests with the same few keys. */
export const FUZZ_LIMITS: Partial<Config> = {
  RATE_LIMIT_PER_MINUTE: 10_000_000,
  UNKNOWN_KEY_RATE_LIMIT_PER_MINUTE: 10_000_000,
  ORDER_SWEEP_INTERVAL_MS: 0,
  LOG_LEVEL: 'info',
};

/** FUZZ_SEED when given (an integer), else a fresh seed that the report prints. */
export function fuzzSeed(given: string | undefined): number {
  if (given !== undefined && given !== '') {
    const n = Number(given);
    if (!Number.isInteger(n)) throw new Error(`FUZZ_SEED must be an integer, got ${given}`);
    return n;
  }
  return (Date.now() ^ (process.pid << 16)) | 0;
}

/** Log lines at level error or fatal (pino: 50, 60), i.e. requests the server failed. */
export function serverErrorLines(lines: string[]): string[] {
  return lines
    .flatMap((chunk) => chunk.split('\n'))
    .filter((l) => {
      if (!l.trim()) return false;
      try {
        return (JSON.parse(l) as { level?: number }).level! >= 50;
      } catch {
        return false;
      }
    });
}
