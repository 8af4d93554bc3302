import { describe, expect, it } from 'vitest';
import { GroupCommit, type JobResult } from '../../src/db/group-commit.js';

const tick = () => new Promise((resolve) => setImmediate(resolve));

// A job is 'lane:name' (its identity is the whole string); 'n:alone…' always runs alone, and a
// job's weight is the number after a '*' in its name (1 without).
function groups(
  opts: {
    inFlight?: number;
    staggerMs?: number;
    maxWeight?: number;
    maxWaitMs?: number;
    fail?: (jobs: string[], mode: 'group' | 'alone') => boolean;
    retryAlone?: boolean;
    hold?: (jobs: string[], mode: 'group' | 'alone') => Promise<void> | undefined;
  } = {},
) {
  const ran: string[][] = [];
  let running = 0;
  let most = 0;
  const g = new GroupCommit<string, string>({
    inFlight: opts.inFlight ?? 1,
    staggerMs: opts.staggerMs ?? 0,
    maxWeight: opts.maxWeight ?? 10,
    weightOf: (job) => Number(job.split('*')[1] ?? 1),
    maxWaitMs: opts.maxWaitMs ?? 10_000,
    timedOut: () => new Error('waited too long'),
    laneOf: (job) => Number(job.split(':')[0]),
    identityOf: (job) => job,
    identityInUse: () => new Error('in use'),
    alone: (job) => job.includes(':alone'),
    retryAlone: () => opts.retryAlone ?? true,
    run: async (jobs, mode) => {
      running++;
      most = Math.max(most, running);
      ran.push(mode === 'alone' ? jobs.map((j) => `${j} (alone)`) : jobs);
      await (opts.hold?.(jobs, mode) ?? tick());
      running--;
      if (opts.fail?.(jobs, mode)) throw new Error('group failed');
      return jobs.map((j): JobResult<string> => (j.includes('bad') ? { ok: false, error: new Error(`no ${j}`) } : { ok: true, value: `done ${j}` }));
    },
  });
  return { g, ran, most: () => most };
}

describe('GroupCommit', () => {
  it('runs the first job at once and groups those that wait, across lanes, each answered with its own result', async () => {
    const { g, ran } = groups();
    const results = await Promise.all(['1:a', '1:b', '2:c', '3:d'].map((j) => g.run(j)));
    expect(results).toEqual(['done 1:a', 'done 1:b', 'done 2:c', 'done 3:d']);
    expect(ran).toEqual([['1:a'], ['1:b', '2:c', '3:d']]);
    await tick(); // the group's slot is handed back just after its jobs are answered
    expect(g.pending).toBe(0);
  });

  it("starts the next group (its lanes free again) before it answers a group's jobs", async () => {
    const events: string[] = [];
    const { g, ran } = groups({
      hold: (jobs) => {
        events.push(`run ${jobs.join(' ')}`);
        return undefined;
      },
    });
    const answered = ['1:a', '1:b', '2:c'].map((j) => g.run(j).then((v) => events.push(v)));
    await Promise.all(answered);
    expect(ran).toEqual([['1:a'], ['1:b', '2:c']]);
    // 1:b, of 1:a's lane, goes as soon as 1:a's group has run, and before 1:a is answered.
    expect(events).toEqual(['run 1:a', 'run 1:b 2:c', 'done 1:a', 'done 1:b', 'done 2:c']);
  });

  it("starts a lane's next job before it answers a lone job", async () => {
    const events: string[] = [];
    // A job starts on the next tick, as a pooled connection is handed over (pg-pool uses
    // process.nextTick): a job answered first would have its callbacks run before that.
    const { g, ran } = groups({
      hold: (jobs) =>
        new Promise<void>((resolve) =>
          process.nextTick(() => {
            events.push(`run ${jobs.join(' ')}`);
            resolve();
          }),
        ),
    });
    const answered = ['1:alone', '1:b'].map((j) => g.run(j).then((v) => events.push(v)));
    await Promise.all(answered);
    expect(ran).toEqual([['1:alone (alone)'], ['1:b']]);
    expect(events).toEqual(['run 1:alone', 'run 1:b', 'done 1:alone', 'done 1:b']);
    await tick();
    expect(g.pending).toBe(0);
  });

  it('keeps a lane out of two running groups, and its jobs in arrival order; other lanes go by', async () => {
    const { g, ran, most } = groups({ inFlight: 3 });
    await Promise.all(['1:a', '1:b', '2:c', '1:d', '3:e'].map((j) => g.run(j)));
    // 1:b waits for lane 1's group; 2:c and 3:e start their own groups; 1:d stays behind 1:b.
    expect(ran).toEqual([['1:a'], ['2:c'], ['3:e'], ['1:b', '1:d']]);
    expect(most()).toBe(3);
  });

  it('refuses at once a job whose identity is waiting or running; leaves out of a group one that runs alone and one over the weight, with the later jobs of their lanes', async () => {
    const { g, ran } = groups({ maxWeight: 4 });
    const settled = await Promise.allSettled(['9:first', '1:a', '2:b', '1:a', '1:c', '3:d*2', '4:alone', '4:e', '5:f*3', '6:g', '7:h*9'].map((j) => g.run(j)));
    expect(settled[3]).toMatchObject({ status: 'rejected', reason: new Error('in use') });
    expect(settled.filter((s) => s.status === 'fulfilled')).toHaveLength(10);
    expect(ran).toEqual([
      ['9:first'],
      ['4:alone (alone)'], // a lone job takes no group's place: it starts at once
      // 3:d is over the weight (6:g is not), and 4:e waits behind 4:alone.
      ['1:a', '2:b', '1:c', '6:g'],
      ['3:d*2', '4:e'],
      ['5:f*3'],
      ['7:h*9'], // heavier than a group may be, alone in its group
    ]);
    // Once answered, an identity may come again.
    expect(await g.run('1:a')).toBe('done 1:a');
  });

  it("passes a job's own failure to its caller only; a failed group's jobs run again alone, a lane's one after another", async () => {
    const { g, ran, most } = groups({ inFlight: 1, fail: (jobs, mode) => mode === 'group' && jobs.includes('1:sinks') });
    const [first, bad, good] = await Promise.allSettled(['1:a', '2:bad', '3:b'].map((j) => g.run(j)));
    expect(first).toEqual({ status: 'fulfilled', value: 'done 1:a' });
    expect(bad).toMatchObject({ status: 'rejected', reason: new Error('no 2:bad') });
    expect(good).toEqual({ status: 'fulfilled', value: 'done 3:b' });

    ran.length = 0;
    const settled = await Promise.allSettled(['1:x', '2:y', '1:sinks', '1:z', '2:bad'].map((j) => g.run(j)));
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled', 'fulfilled', 'rejected']);
    expect(ran).toEqual([
      ['1:x'],
      ['2:y', '1:sinks', '1:z', '2:bad'],
      ['2:y (alone)'],
      ['1:sinks (alone)'],
      ['2:bad (alone)'],
      ['1:z (alone)'],
    ]);
    expect(most()).toBe(2); // lone runs of two lanes at once, whatever inFlight says
    await tick();
    expect(g.pending).toBe(0);
  });

  it("answers every job of a failed group with the group's error when it is not to be retried", async () => {
    const { g, ran } = groups({ fail: (_jobs, mode) => mode === 'group', retryAlone: false });
    const settled = await Promise.allSettled(['1:a', '2:b'].map((j) => g.run(j)));
    expect(settled).toMatchObject([
      { status: 'rejected', reason: new Error('group failed') },
      { status: 'rejected', reason: new Error('group failed') },
    ]);
    expect(ran).toEqual([['1:a'], ['2:b']]);
  });

  it('a lone job stuck on its lane holds up neither the groups nor the other lanes', async () => {
    const releases: Array<() => void> = [];
    const { g, ran } = groups({
      inFlight: 1,
      fail: (jobs, mode) => mode === 'group' && jobs.includes('1:stuck'),
      hold: (jobs, mode) => (mode === 'alone' && jobs[0] === '1:stuck' ? new Promise<void>((resolve) => releases.push(resolve)) : undefined),
    });
    const head = g.run('9:head');
    const stuck = g.run('1:stuck');
    const other = g.run('2:other');
    expect(await head).toBe('done 9:head');
    expect(await other).toBe('done 2:other');
    // 1:stuck still runs alone: a later job of lane 1 waits, groups of other lanes go on.
    const sameLane = g.run('1:later');
    expect(await Promise.all([g.run('3:free'), g.run('4:free')])).toEqual(['done 3:free', 'done 4:free']);
    expect(ran).toEqual([['9:head'], ['1:stuck', '2:other'], ['1:stuck (alone)'], ['2:other (alone)'], ['3:free'], ['4:free']]);
    releases[0]!();
    expect(await stuck).toBe('done 1:stuck');
    expect(await sameLane).toBe('done 1:later');
  });

  it('gives up a job that waited too long in all without running it, and keeps the others going', async () => {
    let release!: () => void;
    const { g, ran } = groups({
      maxWaitMs: 20,
      hold: (jobs) => (jobs[0] === '1:slow' ? new Promise<void>((resolve) => (release = resolve)) : undefined),
    });
    const slow = g.run('1:slow');
    const late = g.run('2:late');
    await expect(late).rejects.toThrow('waited too long');
    const after = g.run('2:after');
    release();
    expect(await slow).toBe('done 1:slow');
    expect(await after).toBe('done 2:after');
    expect(ran).toEqual([['1:slow'], ['2:after']]);
    await tick();
    expect(g.pending).toBe(0);
  });

  it('with a stagger, jobs arriving while a group runs wait for it and go together; a stuck group holds the others up no longer than the stagger', async () => {
    const releases = new Map<string, () => void>();
    const { g, ran, most } = groups({
      inFlight: 3,
      staggerMs: 200,
      // The first job of a group holds it until released.
      hold: (jobs) => new Promise<void>((resolve) => releases.set(jobs[0]!, resolve)),
    });
    const started = performance.now();
    const first = g.run('1:stuck');
    const later = ['2:a', '3:b', '4:c'].map((j) => g.run(j));
    await tick();
    // Without the stagger each would have started a group of its own at once (inFlight 3).
    expect(ran).toEqual([['1:stuck']]);
    // 1:stuck is still running when the stagger is up: the waiting jobs start one group.
    await expect.poll(() => ran.length, { timeout: 2_000, interval: 5 }).toBe(2);
    expect(performance.now() - started).toBeGreaterThanOrEqual(199);
    expect(ran[1]).toEqual(['2:a', '3:b', '4:c']);
    releases.get('2:a')!();
    expect(await Promise.all(later)).toEqual(['done 2:a', 'done 3:b', 'done 4:c']);
    releases.get('1:stuck')!();
    expect(await first).toBe('done 1:stuck');
    expect(most()).toBe(2);
    await tick();
    expect(g.pending).toBe(0);
  });

  it('with a stagger, a job arriving when nothing runs starts at once', async () => {
    const { g, ran } = groups({ inFlight: 2, staggerMs: 10_000 });
    expect(await g.run('1:a')).toBe('done 1:a');
    await tick();
    expect(await g.run('2:b')).toBe('done 2:b');
    expect(ran).toEqual([['1:a'], ['2:b']]);
  });
});
