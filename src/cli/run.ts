import { existsSync } from 'node:fs';
import { cliMain } from './main.js';
import { terminalProgress } from './progress.js';
import { firstLine } from './stdin.js';

// The admin CLI's process entry: `npm run -s admin -- <command> [--flags]`.
if (existsSync('.env')) (await import('dotenv')).config({ quiet: true });
const outcome = await cliMain(process.argv.slice(2), process.env, terminalProgress(process.stderr), firstLine(process.stdin));
process.stdout.write(outcome.stdout);
process.stderr.write(outcome.stderr);
process.exit(outcome.status);
