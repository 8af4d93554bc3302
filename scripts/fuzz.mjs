// `npm run fuzz [-- --runs N --seed S]`: the long schema-driven fuzz run (test/fuzz/run.ts, through
// tsx) in its own process; it brings its own PostgreSQL unless TEST_DATABASE_URL or DATABASE_URL
// is set. Exits with the run's code: 0 when no violation was found.
import { spawn } from 'node:child_process';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..');
const child = spawn(process.execPath, ['--import', 'tsx', join(root, 'test', 'fuzz', 'run.ts'), ...process.argv.slice(2)], {
  cwd: root,
  stdio: 'inherit',
});
// Ctrl-C reaches the whole process group; a signal sent to this process alone is passed on, so
// the run can stop its embedded PostgreSQL.
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(signal, () => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
  });
}
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 128 : 1)));
