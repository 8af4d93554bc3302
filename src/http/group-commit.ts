/** Each job's own result of a group, in the group's order. */
export type JobResult<R> = { ok: true; value: R } | { ok: false; error: unknown };

export interface GroupCommitOptions<J, R> {
  /** Groups running at once. */
  inFlight: number;
  /** The most jobs in one group. */
  maxJobs: number;
  /** A job waiting longer than this is given up with `timedOut()`'s error, never run. */
  maxWaitMs: number;
  timedOut: () => Error;
  /** Jobs of one lane run in arrival order, and never in two running groups at once. */
  laneOf: (job: J) => number;
  /** No two jobs of one identity share a group. */
  identityOf: (job: J) => string;
  /** A job that runs in a group of its own. */
  alone: (job: J) => boolean;
  /**
   * Runs one group, answering each job in its order. When a group of several throws, each of its
   * jobs runs again alone, at once, so that one job's failure or wait is its own; a job alone that
   * throws gets that error.
   */
  run: (jobs: J[]) => Promise<Array<JobResult<R>>>;
}

interface Waiting<J, R> {
  job: J;
  resolve: (value: R) => void;
  reject: (error: unknown) => void;
  timer: NodeJS.Timeout;
}

/**
 * Group commit: jobs that arrive while `inFlight` groups run wait here (holding nothing: no
 * database connection, no row lock), and the next group takes as many of them as may go
 * together, oldest first. A lane (a workspace) is in at most one running group, so a group never
 * waits for another group of this process; its jobs keep their arrival order, a job that must wait
 * holding back the later jobs of its lane.
 */
export class GroupCommit<J, R> {
  private readonly waiting: Array<Waiting<J, R>> = [];
  /** Lanes with jobs running, and how many. */
  private readonly busyLanes = new Map<number, number>();
  private running = 0;
  private alive = 0;

  constructor(private readonly options: GroupCommitOptions<J, R>) {}

  run(job: J): Promise<R> {
    const result = new Promise<R>((resolve, reject) => {
      const entry: Waiting<J, R> = {
        job,
        resolve,
        reject,
        timer: setTimeout(() => {
          this.waiting.splice(this.waiting.indexOf(entry), 1);
          this.alive--;
          reject(this.options.timedOut());
        }, this.options.maxWaitMs),
      };
      this.waiting.push(entry);
    });
    this.alive++;
    this.pump();
    return result;
  }

  private pump(): void {
    while (this.running < this.options.inFlight) {
      const taken = this.nextGroup();
      if (taken.length === 0) return;
      for (const t of taken) this.laneBusy(t.job, 1);
      this.running++;
      void this.runGroup(taken).finally(() => {
        this.running--;
        this.pump();
      });
    }
  }

  private laneBusy(job: J, delta: 1 | -1): void {
    const lane = this.options.laneOf(job);
    const n = (this.busyLanes.get(lane) ?? 0) + delta;
    if (n > 0) this.busyLanes.set(lane, n);
    else this.busyLanes.delete(lane);
  }

  /** Takes the next group out of the waiting list (empty when every waiting job must wait on). */
  private nextGroup(): Array<Waiting<J, R>> {
    const o = this.options;
    const taken: Array<Waiting<J, R>> = [];
    const identities = new Set<string>();
    const held = new Set(this.busyLanes.keys());
    for (let i = 0; i < this.waiting.length && taken.length < o.maxJobs; ) {
      const w = this.waiting[i]!;
      const lane = o.laneOf(w.job);
      const solo = o.alone(w.job);
      if (held.has(lane) || identities.has(o.identityOf(w.job)) || (solo && taken.length > 0)) {
        held.add(lane); // the lane's later jobs wait behind this one
        i++;
        continue;
      }
      this.waiting.splice(i, 1);
      clearTimeout(w.timer);
      taken.push(w);
      identities.add(o.identityOf(w.job));
      if (solo) break;
    }
    return taken;
  }

  /** Settles when the group's slot is free again: its jobs may still be running alone. */
  private async runGroup(taken: Array<Waiting<J, R>>): Promise<void> {
    let results: Array<JobResult<R>>;
    try {
      results = await this.options.run(taken.map((t) => t.job));
    } catch (error) {
      if (taken.length === 1) results = [{ ok: false, error }];
      else {
        for (const t of taken) void this.runAlone(t);
        return;
      }
    }
    taken.forEach((t, i) => this.settle(t, results[i] ?? { ok: false, error: new Error('a group answered fewer jobs than it was given') }));
  }

  private async runAlone(t: Waiting<J, R>): Promise<void> {
    let result: JobResult<R>;
    try {
      result = (await this.options.run([t.job]))[0] ?? { ok: false, error: new Error('a group answered no job') };
    } catch (error) {
      result = { ok: false, error };
    }
    this.settle(t, result);
    this.pump();
  }

  private settle(t: Waiting<J, R>, result: JobResult<R>): void {
    this.laneBusy(t.job, -1);
    this.alive--;
    if (result.ok) t.resolve(result.value);
    else t.reject(result.error);
  }

  /** Jobs running or waiting, for tests: 0 once everything is answered. */
  get pending(): number {
    return this.alive;
  }
}
