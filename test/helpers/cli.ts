import { cliMain, type CliOutcome } from '../../src/cli/main.js';
import { quietProgress } from '../../src/cli/progress.js';
import { fixedInput } from '../../src/cli/stdin.js';

/**
 * Runs an admin command in this process, exactly as the CLI entry does but without spawning a
 * process per call, reading only the given variables. `runCli` in child.ts spawns the real
 * entry point where the process itself is under test (exit codes, a running server's database).
 * `stdin` is what the command reads as standard input (`--password-stdin`).
 */
export function runCli(args: string[], env: Record<string, string>, opts: { stdin?: string } = {}): Promise<CliOutcome> {
  return cliMain(args, env, quietProgress, fixedInput(opts.stdin ?? ''));
}
