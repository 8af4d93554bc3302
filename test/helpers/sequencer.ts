import { BaseSequencer, type TestSpecification } from 'vitest/node';

// Files that run real processes (servers, the CLI, killed children) or long races take most of
// the suite's time. Started first, they overlap with the many short files instead of leaving one
// worker busy at the end; a clean clone has no timing cache for vitest to order by.
const SLOW = /\/test\/(process|cli|faults|scale)\/|\/orders-races|\/docs-run|\/fuzz\/|\/client\//;

export class SlowFilesFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const slow = (f: TestSpecification) => (SLOW.test(f.moduleId) ? 0 : 1);
    return sorted.map((f, i) => ({ f, i })).sort((a, b) => slow(a.f) - slow(b.f) || a.i - b.i).map(({ f }) => f);
  }
}
