import type { Redis } from 'ioredis';
import type { Clock } from '../clock.js';

/**
 * Brute-force guard for purchase-code validation (docs/interface-b.md): at most `limit` "Invalid
 * purchase code" answers per key per fixed one-minute window; once they are used up, every
 * validation by that key is refused until the window passes, valid codes included, so guessing
 * codes cannot be told apart from using them.
 *
 * Counted in Redis when the app has a client (shared by every process), else in memory. While
 * Redis is unreachable each process falls back to its own count, as the rate limiter does.
 */
export interface CodeGuard {
  /** Whether the key has used up its invalid answers for the current window. */
  check(keyId: number): Promise<GuardState>;
  /** Counts one invalid answer; `blocked` when this one is beyond the limit (concurrent callers). */
  recordInvalid(keyId: number): Promise<GuardState>;
}

export interface GuardState {
  blocked: boolean;
  retryAfterSeconds: number;
}

export const INVALID_CODES_PER_MINUTE = 30;
const WINDOW_MS = 60_000;
const MAX_TRACKED_KEYS = 100_000;

// Returns {count, pttl}; a missing counter is {0, 0}.
const CHECK_SCRIPT = `local c = redis.call('GET', KEYS[1])
if not c then return {0, 0} end
return {tonumber(c), redis.call('PTTL', KEYS[1])}`;

// The first invalid answer of a window starts the window.
const RECORD_SCRIPT = `local c = redis.call('INCR', KEYS[1])
if c == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return {c, redis.call('PTTL', KEYS[1])}`;

const seconds = (ms: number) => Math.max(1, Math.ceil(ms / 1000));

class MemoryGuard implements CodeGuard {
  private readonly windows = new Map<number, { count: number; since: number }>();
  constructor(
    private readonly clock: Clock,
    private readonly limit: number,
  ) {}

  private current(keyId: number) {
    const w = this.windows.get(keyId);
    if (w && this.clock.now() - w.since >= WINDOW_MS) {
      this.windows.delete(keyId);
      return undefined;
    }
    return w;
  }

  private state(count: number, since: number, threshold: number): GuardState {
    return { blocked: count > threshold, retryAfterSeconds: seconds(since + WINDOW_MS - this.clock.now()) };
  }

  checkSync(keyId: number): GuardState {
    const w = this.current(keyId);
    return w ? this.state(w.count, w.since, this.limit - 1) : { blocked: false, retryAfterSeconds: 0 };
  }

  async check(keyId: number): Promise<GuardState> {
    return this.checkSync(keyId);
  }

  async recordInvalid(keyId: number): Promise<GuardState> {
    let w = this.current(keyId);
    if (!w) {
      if (this.windows.size >= MAX_TRACKED_KEYS) this.windows.clear();
      w = { count: 0, since: this.clock.now() };
      this.windows.set(keyId, w);
    }
    w.count++;
    return this.state(w.count, w.since, this.limit);
  }
}

class RedisGuard implements CodeGuard {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly local: MemoryGuard,
    private readonly limit: number,
  ) {}

  private async run(script: string, keyId: number, threshold: number): Promise<GuardState | undefined> {
    if (this.redis.status !== 'ready') return undefined;
    try {
      const [count, pttl] = (await this.redis.eval(script, 1, `${this.prefix}codeguard:${keyId}`, WINDOW_MS)) as [number, number];
      return { blocked: count > threshold, retryAfterSeconds: seconds(pttl > 0 ? pttl : WINDOW_MS) };
    } catch {
      return undefined;
    }
  }

  async check(keyId: number): Promise<GuardState> {
    // Blocked locally (Redis was down, or an earlier answer here) is enough to refuse.
    const local = this.local.checkSync(keyId);
    if (local.blocked) return local;
    return (await this.run(CHECK_SCRIPT, keyId, this.limit - 1)) ?? local;
  }

  async recordInvalid(keyId: number): Promise<GuardState> {
    return (await this.run(RECORD_SCRIPT, keyId, this.limit)) ?? this.local.recordInvalid(keyId);
  }
}

export function createCodeGuard(opts: { clock: Clock; redis?: Redis; prefix?: string; limit?: number }): CodeGuard {
  const limit = opts.limit ?? INVALID_CODES_PER_MINUTE;
  const local = new MemoryGuard(opts.clock, limit);
  return opts.redis ? new RedisGuard(opts.redis, opts.prefix ?? 'mkt:', local, limit) : local;
}
