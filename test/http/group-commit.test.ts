import { describe, expect, it } from 'vitest';
import { GroupCommit, type JobResult } from '../../src/http/group-commit.js';

const tick = () => new Promise((resolve) => setImmediate(resolve));

// A job is 'lane:name'; its identity is the whole string, and 'n:alone' runs in a group of its own.
function groups(opts: { inFlight?: number; maxJobs?: number; maxWaitMs?: number; fail?: (jobs: string[]) => boolean; hold?: (jobs: string[]) => Promise<void> } = {}) {
  const ran: string[][] = [];
  let running = 0;
  let most = 0;
  const g = new GroupCommit<string, string>({
    inFlight: opts.inFlight ?? 1,
    maxJobs: opts.maxJobs ?? 10,
    maxWaitMs: opts.maxWaitMs ?? 10_000,
    timedOut: () => new Error('waited too long'),
    laneOf: (job) => Number(job.split(':')[0]),
    identityOf: (job) => job,
    alone: (job) => job.endsWith(':alone'),
    run: async (jobs) => {
      running++;
      most = Math.max(most, running);
      ran.push(jobs);
      await (opts.hold?.(jobs) ?? tick());
      running--;
      if (opts.fail?.(jobs)) throw new Error('group failed');
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

  it('keeps a lane out of two running groups, and its jobs in arrival order; other lanes go by', async () => {
    const { g, ran, most } = groups({ inFlight: 3 });
    await Promise.all(['1:a', '1:b', '2:c', '1:d', '3:e'].map((j) => g.run(j)));
    // 1:b waits for lane 1's group; 2:c and 3:e start their own groups; 1:d stays behind 1:b.
    expect(ran).toEqual([['1:a'], ['2:c'], ['3:e'], ['1:b', '1:d']]);
    expect(most()).toBe(3);
  });

  it('leaves out of a group a second job of one identity and one that runs alone, with the later jobs of their lanes', async () => {
    const { g, ran } = groups({ maxJobs: 3 });
    await Promise.all(['9:first', '1:a', '2:b', '1:a', '1:c', '3:d', '4:alone', '4:e', '5:f', '6:g'].map((j) => g.run(j)));
    expect(ran).toEqual([
      ['9:first'],
      ['1:a', '2:b', '3:d'], // the second 1:a and 1:c behind it wait; maxJobs stops it
      ['1:a', '1:c', '5:f'], // 4:alone cannot join a group, and 4:e waits behind it
      ['4:alone'],
      ['4:e', '6:g'],
    ]);
  });

  it("passes a job's own failure to its caller only; a group that fails runs each of its jobs again alone", async () => {
    const { g, ran } = groups({ fail: (jobs) => jobs.includes('1:sinks') });
    const [first, bad, good] = await Promise.allSettled(['1:a', '2:bad', '3:b'].map((j) => g.run(j)));
    expect(first).toEqual({ status: 'fulfilled', value: 'done 1:a' });
    expect(bad).toMatchObject({ status: 'rejected', reason: new Error('no 2:bad') });
    expect(good).toEqual({ status: 'fulfilled', value: 'done 3:b' });

    ran.length = 0;
    const settled = await Promise.allSettled(['1:x', '2:y', '1:sinks', '3:z'].map((j) => g.run(j)));
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
    expect(ran).toEqual([['1:x'], ['2:y', '1:sinks', '3:z'], ['2:y'], ['1:sinks'], ['3:z']]);
    expect(await g.run('1:after')).toBe('done 1:after');
    await tick();
    expect(g.pending).toBe(0);
  });

  it("answers each job of a failed group when its own run ends, and frees the group's slot at once", async () => {
    const releases = new Map<string, () => void>();
    const { g, ran } = groups({
      inFlight: 1,
      fail: (jobs) => jobs.length > 1,
      hold: (jobs) => (jobs.length === 1 && jobs[0] === '1:stuck' ? new Promise<void>((resolve) => releases.set('stuck', resolve)) : tick().then(() => undefined)),
    });
    const head = g.run('9:head');
    const stuck = g.run('1:stuck');
    const other = g.run('2:other');
    expect(await head).toBe('done 9:head');
    expect(await other).toBe('done 2:other');
    // The stuck job still holds its lane: a later job of lane 1 waits, one of lane 3 does not.
    const sameLane = g.run('1:later');
    expect(await g.run('3:free')).toBe('done 3:free');
    expect(ran).toEqual([['9:head'], ['1:stuck', '2:other'], ['1:stuck'], ['2:other'], ['3:free']]);
    releases.get('stuck')!();
    expect(await stuck).toBe('done 1:stuck');
    expect(await sameLane).toBe('done 1:later');
  });

  it('gives up a job that waited too long without running it, and keeps the others going', async () => {
    let release!: () => void;
    const { g, ran } = groups({
      maxWaitMs: 20,
      hold: (jobs) => (jobs[0] === '1:slow' ? new Promise<void>((resolve) => (release = resolve)) : tick().then(() => undefined)),
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
});
