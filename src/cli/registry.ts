import type { Db } from '../db/client.js';
import type { RawFlags } from './args.js';

export interface CliContext {
  db: Db;
}

export type Command = (ctx: CliContext, flags: RawFlags) => Promise<unknown>;
export type Commands = Record<string, Command>;
