import { cliMain, type CliOutcome } from '../../src/cli/main.js';

/**
 * Runs an admin command in this process, exactly as the CLI entry does but without spawning a
 * process per call, reading only the given variables. `runCli` in child.ts spawns the real
 * entry point where the process itself is under test (exit codes, a running server's database).
 */
export function runCli(args: string[], env: Record<string, string>): Promise<CliOutcome> {
  return cliMain(args, env);
}
