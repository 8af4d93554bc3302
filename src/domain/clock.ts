import { LRUCache } from 'lru-cache';

/** Injectable time, so caches, deadlines and expiries are tested without sleeping. */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/**
 * A bounded cache (least recently used out first) whose entries expire `ttl` ms after they are set,
 * measured on `clock`: lru-cache's own expiry, read from the injected clock so a test that moves
 * time sees entries expire without sleeping. `ttlResolution: 0` reads the clock at every check
 * instead of arming a timer to reuse a reading, which costs more than the read. A `set` may pass
 * a shorter `ttl` of its own (a key that expires sooner).
 */
export function expiringCache<K extends {}, V extends {}>(clock: Clock, options: { max: number; ttl: number }): LRUCache<K, V> {
  return new LRUCache<K, V>({ max: options.max, ttl: options.ttl, perf: clock, ttlResolution: 0 });
}
