import type pg from 'pg';
import type { Config } from '../config.js';
import type { Db } from '../db/client.js';
import type { RawFlags } from './args.js';

export interface CliContext {
  db: Db;
  /** The same connections as `db`, for set-based bulk statements (outlet upserts). */
  pool: pg.Pool;
  config: Config;
}

export type Command = (ctx: CliContext, flags: RawFlags) => Promise<unknown>;
export type Commands = Record<string, Command>;
