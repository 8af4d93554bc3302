import { describe, expect, it } from 'vitest';
import { BatchByKey, type JobResult } from '../../src/http/batch-by-key.js';

const tick = () => new Promise((resolve) => setImmediate(resolve));

/** Jobs are strings; a job 'x!' may not share a batch with another job 'x!' (same name). */
function batcher(opts: { inFlight?: number; maxJobs?: number; maxWaitMs?: number; fail?: (jobs: string[]) => boolean } = {}) {
  const batches: string[][] = [];
  let running = 0;
  let most = 0;
  const b = new BatchByKey<number, string, string>({
    inFlight: opts.inFlight ?? 1,
    maxWaitMs: opts.maxWaitMs ?? 10_000,
    timedOut: () => new Error('waited too long'),
    maxJobs: opts.maxJobs ?? 10,
    canJoin: (batch, job) => job !== 'alone' && !batch.includes('alone') && !batch.includes(job),
    run: async (jobs) => {
      running++;
      most = Math.max(most, running);
      batches.push(jobs);
      await tick();
      running--;
      if (opts.fail?.(jobs)) throw new Error('batch failed');
      return jobs.map((j): JobResult<string> => (j.startsWith('bad') ? { ok: false, error: new Error(`no ${j}`) } : { ok: true, value: `done ${j}` }));
    },
  });
  return { b, batches, most: () => most };
}

describe('BatchByKey', () => {
  it('runs the first job at once and groups those that wait, in arrival order, each answered with its own result', async () => {
    const { b, batches } = batcher();
    const results = await Promise.all(['a', 'b', 'c', 'd'].map((j) => b.run(1, j)));
    expect(results).toEqual(['done a', 'done b', 'done c', 'done d']);
    expect(batches).toEqual([['a'], ['b', 'c', 'd']]);
    expect(b.size).toBe(0);
  });

  it('stops a batch at the first job that may not join it, and at maxJobs', async () => {
    const { b, batches } = batcher({ maxJobs: 2 });
    await Promise.all(['a', 'b', 'b', 'c', 'alone', 'd', 'e', 'f'].map((j) => b.run(1, j)));
    expect(batches).toEqual([['a'], ['b'], ['b', 'c'], ['alone'], ['d', 'e'], ['f']]);
  });

  it('keeps at most inFlight batches of one key running; other keys run alongside', async () => {
    const two = batcher({ inFlight: 2 });
    await Promise.all(['a', 'b', 'c', 'd', 'e'].map((j) => two.b.run(1, j)));
    expect(two.most()).toBe(2);
    expect(two.batches).toEqual([['a'], ['b'], ['c', 'd', 'e']]);

    const one = batcher({ inFlight: 1 });
    await Promise.all([one.b.run(1, 'a'), one.b.run(2, 'a'), one.b.run(1, 'b'), one.b.run(2, 'b')]);
    expect(one.most()).toBe(2);
    expect(one.batches).toEqual([['a'], ['a'], ['b'], ['b']]);
  });

  it("passes a job's own failure to its caller only, and a batch's failure to each of its jobs", async () => {
    const { b } = batcher({ fail: (jobs) => jobs.includes('sinks') });
    const [first, bad, good] = await Promise.allSettled(['a', 'bad-1', 'b'].map((j) => b.run(1, j)));
    expect(first).toEqual({ status: 'fulfilled', value: 'done a' });
    expect(bad).toMatchObject({ status: 'rejected', reason: new Error('no bad-1') });
    expect(good).toEqual({ status: 'fulfilled', value: 'done b' });

    const settled = await Promise.allSettled(['x', 'y', 'sinks', 'z'].map((j) => b.run(1, j)));
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'rejected', 'rejected', 'rejected']);
    expect(await b.run(1, 'after')).toBe('done after');
    await tick(); // the slot is handed back just after the jobs are answered
    expect(b.size).toBe(0);
  });

  it('gives up a job that waited too long without running it, and keeps the others going', async () => {
    const batches: string[][] = [];
    let release!: () => void;
    const b = new BatchByKey<number, string, string>({
      inFlight: 1,
      maxWaitMs: 20,
      timedOut: () => new Error('waited too long'),
      maxJobs: 10,
      canJoin: () => true,
      run: async (jobs) => {
        batches.push(jobs);
        if (jobs[0] === 'slow') await new Promise<void>((resolve) => (release = resolve));
        return jobs.map((j) => ({ ok: true, value: j }));
      },
    });
    const slow = b.run(1, 'slow');
    const late = b.run(1, 'late');
    await expect(late).rejects.toThrow('waited too long');
    const after = b.run(1, 'after');
    release();
    expect(await slow).toBe('slow');
    expect(await after).toBe('after');
    expect(batches).toEqual([['slow'], ['after']]);
    await tick();
    expect(b.size).toBe(0);
  });
});
