import type { Clock } from '../../src/domain/clock.js';

/** A clock that only moves when told to. */
export class ManualClock implements Clock {
  constructor(private t = Date.parse('2026-11-22T10:00:00Z')) {}
  now(): number {
    return this.t;
  }
  advance(ms: number): void {
    this.t += ms;
  }
  set(ms: number): void {
    this.t = ms;
  }
}
