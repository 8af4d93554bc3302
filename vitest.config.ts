import { defineConfig } from 'vitest/config';
import { SlowFilesFirst } from './test/helpers/sequencer.js';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/helpers/global-setup.ts'],
    // Before each file: the tests' password cost (test/helpers/password-cost.ts).
    setupFiles: ['test/helpers/setup-file.ts'],
    pool: 'forks',
    // Files share each worker's loaded modules: evaluating the app's module graph (the MCP SDK, the
    // OAuth server, the routes) took about 3 s per file when each file loaded it again, more than
    // most files' tests. Nothing in the tests relies on a fresh module: every file builds its own
    // app, pool and database, and no module is mocked.
    isolate: false,
    // Each file gets its own database cloned from a migrated template, so files run in parallel.
    fileParallelism: true,
    maxWorkers: 3,
    sequence: { sequencer: SlowFilesFirst },
    testTimeout: 30_000,
    hookTimeout: 60_000,
    reporters: process.env.CI ? ['default', ['json', { outputFile: '.vitest-results.json' }]] : ['default'],
  },
});
