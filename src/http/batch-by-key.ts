/** Each job's own result of a batch, in the batch's order. */
export type JobResult<R> = { ok: true; value: R } | { ok: false; error: unknown };

export interface BatchByKeyOptions<J, R> {
  /** Batches of one key in flight at once; the others wait here, in arrival order. */
  inFlight: number;
  /** A job waiting longer than this is given up with `timedOut()`'s error, never run. */
  maxWaitMs: number;
  timedOut: () => Error;
  /** The most jobs in one batch. */
  maxJobs: number;
  /** Whether `job` may join `batch` (which holds at least the first waiting job). */
  canJoin: (batch: readonly J[], job: J) => boolean;
  /** Runs one batch, answering each job in its order; a throw fails every job of the batch. */
  run: (jobs: J[]) => Promise<Array<JobResult<R>>>;
}

interface Waiting<J, R> {
  job: J;
  resolve: (value: R) => void;
  reject: (error: unknown) => void;
  timer: NodeJS.Timeout;
}

/**
 * Group commit per key: jobs of one key that arrive while `inFlight` batches of it run wait
 * here and then go together, as one batch, when a batch ends. A waiting job holds nothing: no
 * database connection, no row lock. Keys do not wait on each other. The queue stays in arrival
 * order: a batch takes the first waiting job and those behind it that may join, and stops at the
 * first that may not.
 */
export class BatchByKey<K, J, R> {
  private readonly keys = new Map<K, { running: number; waiting: Array<Waiting<J, R>> }>();

  constructor(private readonly options: BatchByKeyOptions<J, R>) {}

  run(key: K, job: J): Promise<R> {
    let state = this.keys.get(key);
    if (!state) {
      state = { running: 0, waiting: [] };
      this.keys.set(key, state);
    }
    const queue = state.waiting;
    const result = new Promise<R>((resolve, reject) => {
      const entry: Waiting<J, R> = {
        job,
        resolve,
        reject,
        timer: setTimeout(() => {
          queue.splice(queue.indexOf(entry), 1);
          reject(this.options.timedOut());
        }, this.options.maxWaitMs),
      };
      queue.push(entry);
    });
    this.pump(key, state);
    return result;
  }

  private pump(key: K, state: { running: number; waiting: Array<Waiting<J, R>> }): void {
    while (state.running < this.options.inFlight && state.waiting.length > 0) {
      const taken = [state.waiting[0]!];
      const jobs = [taken[0]!.job];
      for (let i = 1; i < state.waiting.length && jobs.length < this.options.maxJobs; i++) {
        const next = state.waiting[i]!;
        if (!this.options.canJoin(jobs, next.job)) break;
        taken.push(next);
        jobs.push(next.job);
      }
      state.waiting.splice(0, taken.length);
      for (const t of taken) clearTimeout(t.timer);
      state.running++;
      void this.runBatch(taken).finally(() => {
        state.running--;
        if (state.running === 0 && state.waiting.length === 0) this.keys.delete(key);
        else this.pump(key, state);
      });
    }
  }

  private async runBatch(taken: Array<Waiting<J, R>>): Promise<void> {
    try {
      const results = await this.options.run(taken.map((t) => t.job));
      taken.forEach((t, i) => {
        const r = results[i];
        if (!r) t.reject(new Error('a batch answered fewer jobs than it was given'));
        else if (r.ok) t.resolve(r.value);
        else t.reject(r.error);
      });
    } catch (err) {
      for (const t of taken) t.reject(err);
    }
  }

  /** Keys with a batch running or a job waiting (for tests). */
  get size(): number {
    return this.keys.size;
  }
}
