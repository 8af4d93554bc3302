import { describe, expect, it } from 'vitest';
import { LimitByKey } from '../../src/http/limit-by-key.js';

const tick = () => new Promise((resolve) => setImmediate(resolve));
const limiter = <K>(limit: number, maxWaitMs = 10_000) => new LimitByKey<K>(limit, maxWaitMs, () => new Error('waited too long'));

describe('LimitByKey', () => {
  it('runs at most `limit` tasks at a time per key, the rest in arrival order, other keys alongside', async () => {
    const log: string[] = [];
    let running = 0;
    let most = 0;
    const task = (name: string) => async () => {
      running++;
      most = Math.max(most, running);
      log.push(`${name} start`);
      await tick();
      log.push(`${name} end`);
      running--;
      return name;
    };
    const one = limiter<number>(1);
    expect(await Promise.all([one.run(1, task('a')), one.run(1, task('b')), one.run(1, task('c'))])).toEqual(['a', 'b', 'c']);
    expect(log).toEqual(['a start', 'a end', 'b start', 'b end', 'c start', 'c end']);
    expect(most).toBe(1);

    most = 0;
    await Promise.all([one.run(1, task('x')), one.run(2, task('y'))]);
    expect(most).toBe(2);

    most = 0;
    log.length = 0;
    const two = limiter<number>(2);
    await Promise.all(['p', 'q', 'r', 's', 't'].map((n) => two.run(1, task(n))));
    expect(most).toBe(2);
    expect(log.filter((l) => l.endsWith('start'))).toEqual(['p start', 'q start', 'r start', 's start', 't start']);
  });

  it('goes on after a task fails, passing the failure to its own caller only', async () => {
    const one = limiter<string>(1);
    const failing = one.run('k', async () => {
      await tick();
      throw new Error('boom');
    });
    const next = one.run('k', async () => 'next');
    await expect(failing).rejects.toThrow('boom');
    await expect(next).resolves.toBe('next');
  });

  it('gives up a task that waited too long without running it, and keeps the others going', async () => {
    const one = limiter<number>(1, 20);
    let release!: () => void;
    const slow = one.run(1, () => new Promise<string>((resolve) => (release = () => resolve('slow'))));
    let ran = false;
    const late = one.run(1, async () => {
      ran = true;
    });
    await expect(late).rejects.toThrow('waited too long');
    expect(ran).toBe(false);
    const after = one.run(1, async () => 'after');
    release();
    await expect(slow).resolves.toBe('slow');
    await expect(after).resolves.toBe('after');
  });

  it('forgets a key once nothing runs or waits for it', async () => {
    const one = limiter<number>(1);
    await Promise.all([one.run(7, async () => 1), one.run(7, async () => 2), one.run(8, async () => 3)]);
    expect(one.size).toBe(0);
  });
});
