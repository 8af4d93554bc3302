/**
 * Runs at most `limit` tasks at a time per key, the others waiting in arrival order; tasks of
 * other keys run freely. A task waiting here holds nothing: no database connection, no row lock.
 * One that has waited `maxWaitMs` is given up with `timedOut()`'s error, never run.
 */
export class LimitByKey<K> {
  private readonly keys = new Map<K, { running: number; waiting: Array<() => void> }>();

  constructor(
    private readonly limit: number,
    private readonly maxWaitMs: number,
    private readonly timedOut: () => Error,
  ) {}

  async run<T>(key: K, task: () => Promise<T>): Promise<T> {
    let state = this.keys.get(key);
    if (!state) {
      state = { running: 0, waiting: [] };
      this.keys.set(key, state);
    }
    if (state.running < this.limit) state.running++;
    else await this.waitForSlot(state);
    try {
      return await task();
    } finally {
      // The slot passes straight to the next waiter, so the count stays right.
      const next = state.waiting.shift();
      if (next) next();
      else if (--state.running === 0) this.keys.delete(key);
    }
  }

  private waitForSlot(state: { waiting: Array<() => void> }): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const granted = () => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        state.waiting.splice(state.waiting.indexOf(granted), 1);
        reject(this.timedOut());
      }, this.maxWaitMs);
      state.waiting.push(granted);
    });
  }

  /** Keys with a task running or waiting (for tests). */
  get size(): number {
    return this.keys.size;
  }
}
