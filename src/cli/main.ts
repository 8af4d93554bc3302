import { type Config, loadConfig } from '../config.js';
import { createDatabase } from '../db/client.js';
import { embeddedUrl, type EmbeddedHandle, isProcessAlive, readEmbeddedInfo, startEmbedded } from '../db/embedded.js';
import { prepareDatabase } from '../db/migrate.js';
import { DomainError } from '../domain/errors.js';
import { useInputMessages } from '../domain/input-messages.js';
import { CliError, parseFlags, type RawFlags } from './args.js';
import { type ProgressFactory, quietProgress } from './progress.js';
import { keyCommands } from './commands/keys.js';
import { orderCommands } from './commands/orders.js';
import { outletCommands } from './commands/outlets.js';
import { settingsCommands } from './commands/settings.js';
import { webhookCommands } from './commands/webhooks.js';
import { userCommands } from './commands/users.js';
import { workspaceCommands } from './commands/workspace.js';
import { fixedInput, type LineSource } from './stdin.js';
import type { Commands } from './registry.js';
import { HELP_WORDS, helpText, synopses } from './usage.js';

import { itemCommands } from './commands/items.js';
import { purchaseCommands } from './commands/purchases.js';
import { setPasswordCost } from '../domain/users/passwords.js';

const commands: Commands = {
  ...workspaceCommands,
  ...keyCommands,
  ...settingsCommands,
  ...outletCommands,
  ...orderCommands,
  ...itemCommands,
  ...purchaseCommands,
  ...webhookCommands,
  ...userCommands,
};

function usage(): string {
  return 'usage: npm run -s admin -- <command> [--flags]; `npm run -s admin -- help` lists every command with its flags';
}

/** Why `a b` names no command: the commands of group `a` when there is one, else all names. */
function unknownCommand(a: string, b: string | undefined): CliError {
  const group = Object.keys(commands).filter((name) => name.startsWith(`${a} `));
  const said = [a, b].filter(Boolean).join(' ');
  if (group.length) return new CliError(`unknown command "${said}"; ${a} commands: ${group.sort().join(', ')} (add --help to one for its flags)`);
  return new CliError(`unknown command "${said}"; ${usage()}`);
}

/** The server's database: DATABASE_URL, else the running server's embedded instance, else our own. */
async function connect(config: Config): Promise<{ url: string; embedded?: EmbeddedHandle }> {
  if (config.DATABASE_URL) return { url: config.DATABASE_URL };
  const info = readEmbeddedInfo(config.DATA_DIR);
  if (info && isProcessAlive(info.pid)) return { url: embeddedUrl(info) };
  const embedded = await startEmbedded({ dataDir: config.DATA_DIR, port: config.EMBEDDED_PG_PORT });
  return { url: embedded.url, embedded };
}

async function run(argv: string[], config: Config, progress: ProgressFactory, readLine: LineSource): Promise<unknown> {
  const [a, b, ...rest] = argv;
  if (a === undefined) throw new CliError(usage());
  const name = `${a} ${b ?? ''}`;
  const command = commands[name];
  if (!command) throw unknownCommand(a, b);
  const flags = parseFlags(rest);
  setPasswordCost({ memoryKiB: config.PASSWORD_HASH_MEMORY_KIB, passes: config.PASSWORD_HASH_PASSES });
  const { url, embedded } = await connect(config);
  const database = createDatabase({ url, max: 2, statementTimeoutMs: config.DATABASE_STATEMENT_TIMEOUT_MS });
  try {
    await prepareDatabase(database.pool);
    return await command({ db: database.pool, pool: database.pool, config, progress, readLine }, flags);
  } catch (err) {
    if (err instanceof DomainError) throw new CliError(domainLine(err, flags));
    throw err;
  } finally {
    await database.close();
    await embedded?.stop();
  }
}

/**
 * What an unexpected error says, without what the query builder wraps around the driver's
 * message (the SQL and its parameters).
 */
function unexpected(err: unknown): string {
  let e: unknown = err;
  for (let depth = 0; depth < 4 && e instanceof Error && e.cause instanceof Error; depth++) e = e.cause;
  const message = e instanceof Error ? e.message : String(e);
  return `failed: ${/Failed query|\bselect\b|\binsert\b|\bupdate\b|\bdelete\b/i.test(message) ? 'a database statement failed' : message}`;
}

// The flag that names each kind of thing the domain may not find ("Workspace not found.").
const FLAG_OF: Record<string, string> = { workspace: 'workspace', publisher: 'publisher', item: 'item', key: 'id', purchase: 'code', user: 'email' };

/**
 * A domain refusal as one line, in the words the CLI's own checks use: its first field, named as
 * the flag typed when it is one; a thing not found, named by its flag and the value given.
 */
function domainLine(err: DomainError, flags: RawFlags): string {
  const fields = err.details.errors as Record<string, string[]> | undefined;
  const first = fields ? Object.entries(fields)[0] : undefined;
  if (first) {
    const flag = first[0].replaceAll('_', '-');
    return `${flags[flag] !== undefined ? `--${flag}` : first[0]}: ${first[1].join('; ')}`;
  }
  const what = err.code === 'not_found' ? /^(\w+) not found\.$/.exec(err.message)?.[1]?.toLowerCase() : undefined;
  const flag = what ? FLAG_OF[what] : undefined;
  const value = flag ? flags[flag] : undefined;
  return typeof value === 'string' ? `--${flag}: ${what} ${value} not found` : err.message;
}

function oneLine(err: unknown): string {
  if (err instanceof CliError) return err.message;
  if (err instanceof DomainError) return domainLine(err, {});
  return unexpected(err);
}

/** Every command's name, for the help text's own test. */
export const commandNames = (): string[] => Object.keys(commands);

export interface CliOutcome {
  status: 0 | 1;
  stdout: string;
  stderr: string;
}

/**
 * Runs one admin command: JSON on stdout and status 0, or one line on stderr and status 1.
 * `env` is the environment to read the configuration from (src/cli/run.ts passes process.env);
 * `progress` draws long commands' progress (src/cli/run.ts: on stderr when it is a terminal);
 * `readLine` gives the first line of standard input (src/cli/run.ts: the process's own).
 */
export async function cliMain(
  argv: string[],
  env: NodeJS.ProcessEnv,
  progress: ProgressFactory = quietProgress,
  readLine: LineSource = fixedInput(''),
): Promise<CliOutcome> {
  useInputMessages();
  // Help is asked for, not bad input: stdout and exit 0.
  if (argv[0] !== undefined && HELP_WORDS.has(argv[0])) return { status: 0, stdout: helpText(), stderr: '' };
  const name = argv.slice(0, 2).join(' ');
  if (synopses[name] && argv.slice(2).some((a) => a === '--help' || a === '-h')) return { status: 0, stdout: `usage: npm run -s admin -- ${synopses[name]}\n`, stderr: '' };
  try {
    const result = await run(argv, loadConfig(env), progress, readLine);
    return { status: 0, stdout: JSON.stringify(result) + '\n', stderr: '' };
  } catch (err) {
    return { status: 1, stdout: '', stderr: oneLine(err).replace(/\s+/g, ' ') + '\n' };
  }
}
