/** Each job's own result of a group, in the group's order. */
export type JobResult<R> = { ok: true; value: R } | { ok: false; error: unknown };

export interface GroupCommitOptions<J, R> {
  /** Groups running at once. Jobs running alone do not count. */
  inFlight: number;
  /**
   * While a group runs, the next may start only once the youngest running group has run this
   * long (0: as soon as there is room). Each group's statements cost about the same whatever its
   * size, so groups started the moment a slot frees hold one or two jobs each; a short wait lets
   * the jobs arriving meanwhile go together, and a group stuck on a lock still holds up the others
   * no longer than this.
   */
  staggerMs?: number;
  /** The most a group may weigh; a group always takes its first job, whatever it weighs. */
  maxWeight: number;
  weightOf: (job: J) => number;
  /** A job waiting longer than this in all is given up with `timedOut()`'s error. */
  maxWaitMs: number;
  timedOut: () => Error;
  /** Jobs of one lane run in arrival order, never two at once (a group counts as one). */
  laneOf: (job: J) => number;
  /** A job whose identity is that of a job waiting or running here gets `identityInUse()`'s error at once. */
  identityOf: (job: J) => string;
  identityInUse: () => Error;
  /** A job that always runs alone. */
  alone: (job: J) => boolean;
  /** Runs the jobs, as a group or (one job) alone, answering each job in its order. */
  run: (jobs: J[], mode: 'group' | 'alone') => Promise<Array<JobResult<R>>>;
  /**
   * Whether the jobs of a group that failed with this error run again, each alone; otherwise each
   * gets the error.
   */
  retryAlone: (error: unknown) => boolean;
}

interface Waiting<J, R> {
  job: J;
  alone: boolean;
  /** When its wait is up, all waits counted. */
  deadline: number;
  timer: NodeJS.Timeout | undefined;
  resolve: (value: R) => void;
  reject: (error: unknown) => void;
}

/**
 * Group commit: jobs that arrive while `inFlight` groups run wait here (holding nothing: no
 * database connection, no row lock), and the next group takes as many of them as may go
 * together, oldest first. Two jobs of one identity are never here at once. A lane (a workspace)
 * has at most one group or lone job running, so groups never wait for each other here and a
 * lane's jobs keep their arrival order: a job that must wait holds back the later jobs of its
 * lane. A group that fails as a whole puts its jobs back at the head of the line, each to run
 * alone; lone jobs do not take a group's place, so a job stuck on its own lock holds up no other
 * lane (it does hold whatever the job holds, such as a connection).
 */
export class GroupCommit<J, R> {
  private readonly waiting: Array<Waiting<J, R>> = [];
  /** Lanes with jobs running, and how many. */
  private readonly busyLanes = new Map<number, number>();
  private running = 0;
  /** When the youngest running group started (performance.now()). */
  private lastStart = 0;
  /** Set while jobs wait for the stagger (`staggerMs`) to let another group start. */
  private staggered: NodeJS.Timeout | undefined;
  private alive = 0;
  /** Identities of the jobs waiting or running. */
  private readonly identities = new Set<string>();

  constructor(private readonly options: GroupCommitOptions<J, R>) {}

  run(job: J): Promise<R> {
    const identity = this.options.identityOf(job);
    if (this.identities.has(identity)) return Promise.reject(this.options.identityInUse());
    this.identities.add(identity);
    this.alive++;
    const result = new Promise<R>((resolve, reject) => {
      const entry: Waiting<J, R> = { job, alone: this.options.alone(job), deadline: Date.now() + this.options.maxWaitMs, timer: undefined, resolve, reject };
      this.enqueue(entry, this.waiting.length);
    });
    this.pump();
    return result;
  }

  private enqueue(entry: Waiting<J, R>, at: number): void {
    this.waiting.splice(at, 0, entry);
    entry.timer = setTimeout(() => {
      this.waiting.splice(this.waiting.indexOf(entry), 1);
      this.gone(entry.job);
      entry.reject(this.options.timedOut());
    }, Math.max(0, entry.deadline - Date.now()));
  }

  private take(i: number): Waiting<J, R> {
    const [w] = this.waiting.splice(i, 1);
    clearTimeout(w!.timer);
    this.laneBusy(w!.job, 1);
    return w!;
  }

  private pump(): void {
    const o = this.options;
    const stagger = o.staggerMs ?? 0;
    for (;;) {
      const wait = this.running === 0 ? 0 : stagger - (performance.now() - this.lastStart);
      const mayStart = this.running < o.inFlight && wait <= 0;
      const held = new Set(this.busyLanes.keys());
      const grouped = new Set<number>();
      const group: Array<Waiting<J, R>> = [];
      let weight = 0;
      for (let i = 0; i < this.waiting.length; ) {
        const w = this.waiting[i]!;
        const lane = o.laneOf(w.job);
        if (held.has(lane)) {
          i++;
        } else if (w.alone) {
          held.add(lane);
          if (grouped.has(lane)) i++;
          else void this.runAlone(this.take(i));
        } else if (mayStart && (group.length === 0 || weight + o.weightOf(w.job) <= o.maxWeight)) {
          group.push(this.take(i));
          grouped.add(lane);
          weight += o.weightOf(w.job);
        } else {
          held.add(lane);
          i++;
        }
      }
      if (group.length === 0) {
        // Jobs that could go in a group once the stagger is up: look again then (a group ending
        // first looks again too).
        if (this.running < o.inFlight && wait > 0 && this.waiting.some((w) => !w.alone) && !this.staggered) {
          this.staggered = setTimeout(() => {
            this.staggered = undefined;
            this.pump();
          }, Math.ceil(wait));
          this.staggered.unref();
        }
        return;
      }
      this.running++;
      this.lastStart = performance.now();
      void this.runGroup(group).finally(() => {
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

  private async runGroup(taken: Array<Waiting<J, R>>): Promise<void> {
    let results: Array<JobResult<R>>;
    try {
      results = await this.options.run(
        taken.map((t) => t.job),
        'group',
      );
    } catch (error) {
      if (!this.options.retryAlone(error)) results = taken.map(() => ({ ok: false, error }));
      else {
        // Back at the head of the line, in their order, each to run alone in its lane's turn.
        taken.forEach((t, i) => {
          this.laneBusy(t.job, -1);
          t.alone = true;
          this.enqueue(t, i);
        });
        return;
      }
    }
    // The lanes are free now, so the next group may take their next jobs; the jobs are answered
    // on the event loop's next turn, so that the next group, when one may start, sends its first
    // statement first. Answering
    // sets off each request's reply (its JSON written, its log line), and all of that would run
    // first: the next group's connection is handed over on `process.nextTick`, which waits until
    // every pending promise callback has run. Groups run one after another under a steady load,
    // so that wait, about 0.4 ms a group, came off every group's time (bench/RESULTS.md).
    for (const t of taken) this.laneBusy(t.job, -1);
    setImmediate(() => {
      taken.forEach((t, i) => this.answer(t, results[i] ?? { ok: false, error: new Error('a group answered fewer jobs than it was given') }));
    });
  }

  private async runAlone(t: Waiting<J, R>): Promise<void> {
    let result: JobResult<R>;
    try {
      result = (await this.options.run([t.job], 'alone'))[0] ?? { ok: false, error: new Error('a lone job was not answered') };
    } catch (error) {
      result = { ok: false, error };
    }
    // As a group's (above): the lane is free and the next job may start before this one is answered.
    this.laneBusy(t.job, -1);
    this.pump();
    setImmediate(() => this.answer(t, result));
  }

  private gone(job: J): void {
    this.alive--;
    this.identities.delete(this.options.identityOf(job));
  }

  private answer(t: Waiting<J, R>, result: JobResult<R>): void {
    this.gone(t.job);
    if (result.ok) t.resolve(result.value);
    else t.reject(result.error);
  }

  /** Jobs running or waiting, for tests: 0 once everything is answered. */
  get pending(): number {
    return this.alive;
  }
}
