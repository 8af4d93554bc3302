import { type ChildProcess, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { configSchema } from '../../src/config.js';
import { embeddedUrl, readEmbeddedInfo } from '../../src/db/embedded.js';
import { DEMO_KEYS_UNSHOWN } from '../../src/demo/seed.js';
import { projectRoot } from '../../src/paths.js';
import { freePort } from './pg-server.js';

// Runs the real server and admin CLI as child processes, from dist/ as `npm start` and
// `npm run admin` do (the suite's global setup builds it when a source changed), with an
// environment built from scratch for the app's own variables so neither the caller's environment
// nor a developer's .env leaks in. From dist/ a child starts in about half the CPU it took through
// tsx, which compiled every module again in each child.

export const SERVER = join(projectRoot, 'dist', 'src', 'server.js');
export const CLI = join(projectRoot, 'dist', 'src', 'cli', 'run.js');

export type Env = Record<string, string>;

/** The inherited environment minus every variable the app reads; empty values shadow a .env file. */
export function childEnv(env: Env): NodeJS.ProcessEnv {
  const base: NodeJS.ProcessEnv = { ...process.env };
  for (const key of Object.keys(configSchema.shape)) delete base[key];
  delete base.NODE_OPTIONS;
  // dotenv never overrides a variable that is present, even when empty.
  return { ...base, DATABASE_URL: '', REDIS_URL: '', PUBLIC_BASE_URL: '', SEED_DEMO: '0', LOG_LEVEL: 'warn', ...env };
}

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface ServerChild {
  proc: ChildProcess;
  pid: number;
  port: number;
  baseUrl: string;
  /** Everything written so far. */
  stdout(): string;
  stderr(): string;
  /** Milliseconds from spawn to the first 200 of /healthz (set by waitHealthy). */
  healthyAfterMs?: number;
  exited: Promise<Exit>;
  hasExited(): boolean;
  waitHealthy(timeoutMs?: number): Promise<number>;
  /** Sends a signal and waits for the exit, failing after timeoutMs. */
  stop(signal?: NodeJS.Signals, timeoutMs?: number): Promise<Exit>;
}

const live = new Set<ChildProcess>();
const dataDirs = new Set<string>();

/** A fresh data directory PostgreSQL (running as the `postgres` user under root) may enter. */
export function tempDataDir(prefix = 'mkt-data-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  chmodSync(dir, 0o755);
  dataDirs.add(dir);
  return dir;
}

export function describeChild(c: { stdout(): string; stderr(): string }): string {
  return `\n--- stdout ---\n${c.stdout().slice(-4000)}\n--- stderr ---\n${c.stderr().slice(-4000)}`;
}

export async function spawnServer(env: Env, opts: { port?: number } = {}): Promise<ServerChild> {
  const port = opts.port ?? (await freePort());
  const started = Date.now();
  const proc = spawn(process.execPath, [SERVER], {
    cwd: projectRoot,
    env: childEnv({ HOST: '127.0.0.1', PORT: String(port), ...env }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  live.add(proc);
  let out = '';
  let err = '';
  proc.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
  proc.stderr!.setEncoding('utf8').on('data', (d: string) => (err += d));
  let done = false;
  // 'close' rather than 'exit': resolves once everything the child wrote has been read.
  const exited = new Promise<Exit>((resolve) => {
    proc.on('close', (code, signal) => {
      done = true;
      live.delete(proc);
      resolve({ code, signal });
    });
  });
  const child: ServerChild = {
    proc,
    pid: proc.pid!,
    port,
    baseUrl: `http://127.0.0.1:${port}`,
    stdout: () => out,
    stderr: () => err,
    exited,
    hasExited: () => done,
    async waitHealthy(timeoutMs = 30_000) {
      const deadline = started + timeoutMs;
      while (Date.now() < deadline) {
        if (done) throw new Error(`server exited before it was healthy${describeChild(child)}`);
        try {
          const res = await fetch(`${child.baseUrl}/healthz`, { signal: AbortSignal.timeout(1000) });
          if (res.status === 200) {
            child.healthyAfterMs = Date.now() - started;
            return child.healthyAfterMs;
          }
        } catch {
          // not listening yet
        }
        await sleep(100);
      }
      throw new Error(`server not healthy within ${timeoutMs} ms${describeChild(child)}`);
    },
    async stop(signal = 'SIGTERM', timeoutMs = 20_000) {
      if (!done) proc.kill(signal);
      const timeout = sleep(timeoutMs).then(() => 'timeout' as const);
      const result = await Promise.race([exited, timeout]);
      if (result === 'timeout') throw new Error(`server did not exit within ${timeoutMs} ms after ${signal}${describeChild(child)}`);
      return result;
    },
  };
  return child;
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `admin <args>` to completion. */
export function runCli(args: string[], env: Env, timeoutMs = 60_000, stdin?: string): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, [CLI, ...args], {
      cwd: projectRoot,
      env: childEnv(env),
      stdio: [stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    });
    if (stdin !== undefined) proc.stdin!.end(stdin);
    live.add(proc);
    let stdout = '';
    let stderr = '';
    proc.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    proc.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => {
      proc.kill('SIGKILL');
      reject(new Error(`admin ${args.join(' ')} did not finish within ${timeoutMs} ms\n${stdout}\n${stderr}`));
    }, timeoutMs);
    proc.on('error', reject);
    proc.on('close', (code) => {
      clearTimeout(timer);
      live.delete(proc);
      resolve({ code, stdout, stderr });
    });
  });
}

/** Parses the CLI's single JSON line, failing with its output otherwise. */
export function cliJson(r: CliResult): Record<string, unknown> {
  const lines = r.stdout.split('\n').filter((l) => l !== '');
  if (r.code !== 0 || lines.length !== 1 || r.stderr !== '') {
    throw new Error(`expected one JSON line and exit 0, got exit ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
  }
  return JSON.parse(lines[0]!) as Record<string, unknown>;
}

/**
 * Waits until a start on the embedded default has finished with the demo: its keys printed and
 * recorded as shown (a start killed before that replaces them on the next start).
 */
export async function demoShown(dataDir: string): Promise<void> {
  const info = readEmbeddedInfo(dataDir);
  if (!info) throw new Error(`no pg.json in ${dataDir}`);
  await eventually(async () => {
    const c = new pg.Client({ connectionString: embeddedUrl(info) });
    await c.connect();
    try {
      const { rowCount } = await c.query('SELECT 1 FROM app_secrets WHERE name = $1', [DEMO_KEYS_UNSHOWN]);
      return rowCount === 0;
    } finally {
      await c.end();
    }
  }, 'demo keys recorded as shown');
}

/** Whether anything accepts TCP connections on 127.0.0.1:port. */
export function portAccepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.setTimeout(1000);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(false));
  });
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** Polls `check` every intervalMs until it returns a truthy value or the deadline passes. */
export async function eventually<T>(check: () => Promise<T>, what: string, timeoutMs = 15_000, intervalMs = 100): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const v = await check();
      if (v) return v as NonNullable<T>;
    } catch (err) {
      last = err;
    }
    await sleep(intervalMs);
  }
  throw new Error(`${what} not reached within ${timeoutMs} ms${last ? `: ${String(last)}` : ''}`);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Stops a PostgreSQL left running in `<dataDir>/pg` (e.g. its parent was killed). */
async function stopOrphanPostgres(dataDir: string): Promise<void> {
  const pidFile = join(dataDir, 'pg', 'postmaster.pid');
  if (!existsSync(pidFile)) return;
  const pid = Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
  if (!Number.isInteger(pid) || pid <= 0 || !alive(pid)) return;
  try {
    process.kill(pid, 'SIGQUIT'); // immediate shutdown; the data is thrown away anyway
  } catch {
    return;
  }
  const deadline = Date.now() + 5000;
  while (alive(pid) && Date.now() < deadline) await sleep(50);
  if (alive(pid)) process.kill(pid, 'SIGKILL');
}

/**
 * For afterAll: every child still running gets SIGTERM, then SIGKILL after a grace period; any
 * PostgreSQL they leave behind is stopped and the temporary data directories are removed.
 */
export async function cleanupChildren(): Promise<void> {
  const procs = [...live];
  await Promise.all(
    procs.map(async (p) => {
      if (p.exitCode !== null || p.signalCode !== null) return;
      const gone = new Promise<void>((r) => p.once('exit', () => r()));
      p.kill('SIGTERM');
      const result = await Promise.race([gone.then(() => 'gone' as const), sleep(8000).then(() => 'slow' as const)]);
      if (result === 'slow') {
        p.kill('SIGKILL');
        await Promise.race([gone, sleep(2000)]);
      }
    }),
  );
  for (const dir of dataDirs) {
    await stopOrphanPostgres(dir).catch(() => {});
    rmSync(dir, { recursive: true, force: true });
    dataDirs.delete(dir);
  }
}
