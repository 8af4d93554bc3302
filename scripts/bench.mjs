// `npm run bench -- <scenario…>`: builds dist/ when the sources changed, then runs the benchmark
// orchestrator (bench/run.ts, through tsx) in its own process. See bench/README.md.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { buildIfNeeded } from './build-if-needed.mjs';

const root = join(import.meta.dirname, '..');
try {
  buildIfNeeded();
} catch {
  process.stderr.write('build failed\n');
  process.exit(1);
}

const child = spawn(process.execPath, ['--import', 'tsx', join(root, 'bench', 'run.ts'), ...process.argv.slice(2)], {
  cwd: root,
  stdio: 'inherit',
});
// Ctrl-C reaches the whole process group; a signal sent to this process alone is passed on.
// Either way the orchestrator cleans up, and this process exits with its code.
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(signal, () => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
  });
}
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 128 : 1)));
