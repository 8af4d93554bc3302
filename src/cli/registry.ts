import type pg from 'pg';
import type { Config } from '../config.js';
import type { Db } from '../db/handle.js';
import type { RawFlags } from './args.js';
import type { ProgressFactory } from './progress.js';
import type { LineSource } from './stdin.js';

export interface CliContext {
  db: Db;
  /** The same pool as `db`, for the calls that need the pool itself (outlet upserts). */
  pool: pg.Pool;
  config: Config;
  /** Progress of a long command on stderr (a no-op unless stderr is a terminal). */
  progress: ProgressFactory;
  /** The first line of standard input, without its newline (`--password-stdin`). */
  readLine: LineSource;
}

export type Command = (ctx: CliContext, flags: RawFlags) => Promise<unknown>;
export type Commands = Record<string, Command>;
