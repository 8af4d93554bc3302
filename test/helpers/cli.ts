import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { projectRoot } from '../../src/paths.js';
import { childEnv } from './child.js';

/**
 * Runs the admin CLI as a real child process, synchronously, with only the given app variables
 * (see childEnv). The asynchronous twin for long-running cases is `runCli` in child.ts.
 */
export function runCli(args: string[], env: Record<string, string>): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, ['--import', 'tsx', join(projectRoot, 'src/cli/main.ts'), ...args], {
    cwd: projectRoot,
    env: childEnv(env),
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}
