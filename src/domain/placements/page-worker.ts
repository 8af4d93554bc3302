import type { PageResult } from '../../outbound/page-fetch.js';
import { type LiveCheck, liveChecks, type PlacementExpectation } from './live-checks.js';

export interface PageTask {
  page: PageResult;
  expected: PlacementExpectation;
  budgetMs: number;
}

/** Runs in a worker thread of the page pool (./page-pool.ts): the checks of one fetched page. */
export default function checkPage(task: PageTask): LiveCheck[] {
  return liveChecks(task.page, task.expected, task.budgetMs);
}
