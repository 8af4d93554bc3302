import { availableParallelism } from 'node:os';
import { Piscina } from 'piscina';
import type { PageResult } from '../../outbound/page-fetch.js';
import type { LiveCheck, PlacementExpectation } from './live-checks.js';
import { SCAN_BUDGET_MS } from './page-scan.js';
import type { PageTask } from './page-worker.js';

/** Reads fetched pages off the main thread; `close` ends its threads. */
export interface PagePool {
  check(page: PageResult, expected: PlacementExpectation): Promise<LiveCheck[]>;
  close(): Promise<void>;
}

/**
 * A read that outlives its budget by this much is stopped (its thread ended): the budget is
 * checked as the page is read, so only a fault of the parser's gets here.
 */
const HARD_STOP_AFTER_MS = 10_000;

/**
 * The worker's file next to this one: `page-worker.js` in the built server; under tsx or vitest
 * (this module is TypeScript) `page-worker.ts`, loaded through tsx in the worker thread.
 */
function workerFile(): { filename: string; execArgv: string[] } {
  const source = import.meta.url.endsWith('.ts');
  return { filename: new URL(`./page-worker.${source ? 'ts' : 'js'}`, import.meta.url).href, execArgv: source ? ['--import', 'tsx'] : [] };
}

/**
 * The link checks' parsing in a pool of worker threads (piscina): a page built to be slow to read
 * (2 MB of links nested 995 deep) costs a worker thread its budget, never the API's event loop.
 * One thread fewer than the cores (at least one), started when first needed and ended when idle.
 */
export function createPagePool(budgetMs = SCAN_BUDGET_MS): PagePool {
  const pool = new Piscina<PageTask, LiveCheck[]>({
    ...workerFile(),
    minThreads: 0,
    maxThreads: Math.max(1, availableParallelism() - 1),
    idleTimeout: 30_000,
  });
  return {
    async check(page, expected) {
      try {
        // The stop counts from the call, so it allows for the reads queued or running before this
        // one, each within its own budget: a page that waits its turn is not failed for waiting.
        const ahead = pool.queueSize + pool.threads.length;
        return await pool.run({ page, expected, budgetMs }, { signal: AbortSignal.timeout((ahead + 1) * budgetMs + HARD_STOP_AFTER_MS) });
      } catch (err) {
        if ((err as Error).name !== 'AbortError') throw err;
        const url = page.ok ? page.finalUrl : expected.liveUrl;
        return [{ name: 'page', status: 'fail', detail: `${url} answered, but could not be read within ${budgetMs.toLocaleString('en-US')} ms; it was not read.` }];
      }
    },
    close: () => pool.destroy(),
  };
}
