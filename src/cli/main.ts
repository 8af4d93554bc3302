import { type Config, loadConfig } from '../config.js';
import { createDatabase } from '../db/client.js';
import { embeddedUrl, type EmbeddedHandle, isProcessAlive, readEmbeddedInfo, startEmbedded } from '../db/embedded.js';
import { prepareDatabase } from '../db/migrate.js';
import { DomainError } from '../domain/errors.js';
import { CliError, parseFlags } from './args.js';
import { keyCommands } from './commands/keys.js';
import { orderCommands } from './commands/orders.js';
import { outletCommands } from './commands/outlets.js';
import { settingsCommands } from './commands/settings.js';
import { workspaceCommands } from './commands/workspace.js';
import type { Commands } from './registry.js';

import { itemCommands } from './commands/items.js';
import { purchaseCommands } from './commands/purchases.js';

const commands: Commands = {
  ...workspaceCommands,
  ...keyCommands,
  ...settingsCommands,
  ...outletCommands,
  ...orderCommands,
  ...itemCommands,
  ...purchaseCommands,
};

function usage(): string {
  return `usage: npm run -s admin -- <command> [--flags]; commands: ${Object.keys(commands).sort().join(', ')}`;
}

/** The server's database: DATABASE_URL, else the running server's embedded instance, else our own. */
async function connect(config: Config): Promise<{ url: string; embedded?: EmbeddedHandle }> {
  if (config.DATABASE_URL) return { url: config.DATABASE_URL };
  const info = readEmbeddedInfo(config.DATA_DIR);
  if (info && isProcessAlive(info.pid)) return { url: embeddedUrl(info) };
  const embedded = await startEmbedded({ dataDir: config.DATA_DIR, port: config.EMBEDDED_PG_PORT });
  return { url: embedded.url, embedded };
}

async function run(argv: string[], config: Config): Promise<unknown> {
  const [a, b, ...rest] = argv;
  const name = `${a ?? ''} ${b ?? ''}`;
  const command = commands[name];
  if (!command) throw new CliError(a ? `unknown command "${name.trim()}"; ${usage()}` : usage());
  const flags = parseFlags(rest);
  const { url, embedded } = await connect(config);
  const database = createDatabase({ url, max: 2 });
  try {
    await prepareDatabase(database.pool);
    return await command({ db: database.db, pool: database.pool, config }, flags);
  } finally {
    await database.close();
    await embedded?.stop();
  }
}

function oneLine(err: unknown): string {
  if (err instanceof CliError) return err.message;
  if (err instanceof DomainError) {
    const fields = err.details.errors as Record<string, string[]> | undefined;
    const first = fields ? Object.entries(fields)[0] : undefined;
    return first ? `${first[0]}: ${first[1].join('; ')}` : err.message;
  }
  return `failed: ${err instanceof Error ? err.message : String(err)}`;
}

export interface CliOutcome {
  status: 0 | 1;
  stdout: string;
  stderr: string;
}

/**
 * Runs one admin command: JSON on stdout and status 0, or one line on stderr and status 1.
 * `env` is the environment to read the configuration from (src/cli/run.ts passes process.env).
 */
export async function cliMain(argv: string[], env: NodeJS.ProcessEnv): Promise<CliOutcome> {
  try {
    const result = await run(argv, loadConfig(env));
    return { status: 0, stdout: JSON.stringify(result) + '\n', stderr: '' };
  } catch (err) {
    return { status: 1, stdout: '', stderr: oneLine(err).replace(/\s+/g, ' ') + '\n' };
  }
}
