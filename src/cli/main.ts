import { existsSync } from 'node:fs';
import { loadConfig } from '../config.js';
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

const commands: Commands = { ...workspaceCommands, ...keyCommands, ...settingsCommands, ...outletCommands, ...orderCommands };
Object.assign(commands, (await import('./commands/items.js')).itemCommands, (await import('./commands/purchases.js')).purchaseCommands);

function usage(): string {
  return `usage: npm run -s admin -- <command> [--flags]; commands: ${Object.keys(commands).sort().join(', ')}`;
}

/** The server's database: DATABASE_URL, else the running server's embedded instance, else our own. */
async function connect(): Promise<{ url: string; embedded?: EmbeddedHandle }> {
  const config = loadConfig();
  if (config.DATABASE_URL) return { url: config.DATABASE_URL };
  const info = readEmbeddedInfo(config.DATA_DIR);
  if (info && isProcessAlive(info.pid)) return { url: embeddedUrl(info) };
  const embedded = await startEmbedded({ dataDir: config.DATA_DIR, port: config.EMBEDDED_PG_PORT });
  return { url: embedded.url, embedded };
}

async function run(argv: string[]): Promise<unknown> {
  const [a, b, ...rest] = argv;
  const name = `${a ?? ''} ${b ?? ''}`;
  const command = commands[name];
  if (!command) throw new CliError(a ? `unknown command "${name.trim()}"; ${usage()}` : usage());
  const flags = parseFlags(rest);
  const { url, embedded } = await connect();
  const database = createDatabase({ url, max: 2 });
  try {
    await prepareDatabase(database.pool);
    return await command({ db: database.db, pool: database.pool, config: loadConfig() }, flags);
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

if (existsSync('.env')) (await import('dotenv')).config({ quiet: true });
try {
  const result = await run(process.argv.slice(2));
  process.stdout.write(JSON.stringify(result) + '\n');
  process.exit(0);
} catch (err) {
  process.stderr.write(oneLine(err).replace(/\s+/g, ' ') + '\n');
  process.exit(1);
}
