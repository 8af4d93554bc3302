import { buildIfNeeded } from './build-if-needed.mjs';

try {
  buildIfNeeded();
} catch {
  process.stderr.write('build failed\n');
  process.exit(1);
}
await import('../dist/src/cli/run.js');
