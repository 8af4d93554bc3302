import { execFile } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { createDatabase } from '../../src/db/client.js';
import { embeddedUrl, readEmbeddedInfo } from '../../src/db/embedded.js';
import { createKey } from '../../src/domain/keys/key-service.js';
import { cleanupChildren, describeChild, eventually, portAccepts, type ServerChild, spawnServer, tempDataDir } from '../helpers/child.js';
import { freePort } from '../helpers/pg-server.js';

// `npm start` on the embedded default, as a real process: first start seeds and prints the demo
// keys, signals shut it down cleanly (PostgreSQL included), a restart reuses the data quickly.

const dataDir = tempDataDir();
const pgPort = await freePort();
const env = { DATA_DIR: dataDir, EMBEDDED_PG_PORT: String(pgPort) };
afterAll(cleanupChildren, 30_000);

const KEY_LINE = {
  read: /^ {2}read-only key \(workspace (\d+)\): (mk_[A-Za-z0-9]+)$/gm,
  spend: /^ {2}spending key {2}\(workspace (\d+)\): (mk_[A-Za-z0-9]+)$/gm,
  publisher: /^ {2}publisher key \(publisher (\d+)\): (mk_[A-Za-z0-9]+)$/gm,
};

function only(out: string, re: RegExp): RegExpMatchArray {
  const all = [...out.matchAll(re)];
  expect(all, `exactly one line matching ${re}`).toHaveLength(1);
  return all[0]!;
}

async function me(server: ServerChild, key: string) {
  const res = await fetch(`${server.baseUrl}/api/v1/me`, { headers: { authorization: `Bearer ${key}` } });
  return { status: res.status, body: (await res.json()) as { data?: { balance: number; workspace: { id: number }; key: { can_place_orders: boolean } }; code?: string } };
}

let first: ServerChild;
let readKey = '';
let workspaceId = 0;

describe('server process on the embedded default', () => {
  it('a first start whose port is taken fails before seeding, so the next start still prints the keys', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    try {
      const port = (blocker.address() as { port: number }).port;
      const busy = await spawnServer(env, { port });
      const exit = await busy.exited;
      expect(exit.code, describeChild(busy)).toBe(1);
      expect(busy.stderr()).toMatch(/EADDRINUSE/);
      expect(busy.stdout()).not.toMatch(/mk_[A-Za-z0-9]{8}/);
    } finally {
      await new Promise((resolve) => blocker.close(resolve));
    }
    // The embedded PostgreSQL it started was stopped on the way out.
    expect(await portAccepts(pgPort)).toBe(false);
  }, 120_000);

  it('first start: prints the demo keys once with a curl line, answers /healthz, and the keys work', async () => {
    first = await spawnServer(env);
    await first.waitHealthy(100_000); // initdb and the demo seed; slow only on a loaded machine
    // The keys are written right after listen; give the pipe a moment to deliver them.
    const out = await eventually(async () => (/^ {2}curl .*\/api\/v1\/me /m.test(first.stdout()) ? first.stdout() : ''), 'demo keys printed');

    const read = only(out, KEY_LINE.read);
    const spend = only(out, KEY_LINE.spend);
    const publisher = only(out, KEY_LINE.publisher);
    workspaceId = Number(read[1]);
    readKey = read[2]!;
    expect(Number(spend[1])).toBe(workspaceId);
    // The ready-to-paste line for /me (other surfaces may add their own curl lines).
    const curl = only(out, /^ {2}(curl \S+ \S+\/api\/v1\/me .*)$/gm)[1]!;
    expect(curl).toBe(`curl -s ${first.baseUrl}/api/v1/me -H 'Authorization: Bearer ${readKey}'`);

    const r = await me(first, readKey);
    expect(r.status).toBe(200);
    expect(r.body.data!.workspace.id).toBe(workspaceId);
    expect(r.body.data!.balance).toBe(500_000);
    expect(r.body.data!.key.can_place_orders).toBe(false);

    const s = await me(first, spend[2]!);
    expect(s.status).toBe(200);
    expect(s.body.data!.key.can_place_orders).toBe(true);

    // A publisher key is a real key (not 401) that the buyer API refuses.
    const p = await me(first, publisher[2]!);
    expect(p.status).toBe(403);
    expect(p.body.code).toBe('forbidden');

    // The printed curl line works as pasted.
    const pasted = await promisify(execFile)('sh', ['-c', curl], { timeout: 10_000 });
    expect(JSON.parse(pasted.stdout).data.balance).toBe(500_000);

    const info = readEmbeddedInfo(dataDir);
    expect(info).toMatchObject({ host: '127.0.0.1', port: pgPort, user: expect.any(String), database: expect.any(String), pid: first.pid });
    expect(info!.password.length).toBeGreaterThanOrEqual(16);
    expect(statSync(join(dataDir, 'pg.json')).mode & 0o777).toBe(0o600);
  }, 120_000);

  it('SIGTERM lets an in-flight request finish, exits 0 and stops the embedded PostgreSQL', async () => {
    const info = readEmbeddedInfo(dataDir)!;
    const database = createDatabase({ url: embeddedUrl(info), max: 2 });
    const locker = new pg.Client({ connectionString: embeddedUrl(info) });
    locker.on('error', () => {});
    try {
      // A key the server has never seen, so its lookup must query api_keys…
      const fresh = await createKey(database.pool, { workspaceId });
      await locker.connect();
      // …which this lock holds up until we let it go.
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE api_keys IN ACCESS EXCLUSIVE MODE');
      const inFlight = me(first, fresh.key);
      await eventually(async () => {
        const { rows } = await database.pool.query(
          `SELECT 1 FROM pg_stat_activity WHERE application_name = 'marketplace-api' AND wait_event_type = 'Lock'`,
        );
        return rows.length > 0;
      }, 'the request waiting on the lock');

      first.proc.kill('SIGTERM');
      // Shutdown has begun once the listener is closed; the request is still waiting.
      await eventually(async () => !(await portAccepts(first.port)), 'listener closed');
      expect(first.hasExited()).toBe(false);
      await locker.query('COMMIT');

      const r = await inFlight;
      expect(r.status).toBe(200);
      expect(r.body.data!.balance).toBe(500_000);
    } finally {
      await locker.end().catch(() => {});
      await database.close().catch(() => {});
    }

    expect(await first.stop('SIGTERM'), describeChild(first)).toEqual({ code: 0, signal: null });
    expect(await portAccepts(pgPort)).toBe(false);
    expect(existsSync(join(dataDir, 'pg', 'postmaster.pid'))).toBe(false);
    // The running pid is withdrawn, so the CLI knows nobody serves this data directory.
    expect(readEmbeddedInfo(dataDir)!.pid).toBeUndefined();
    // The keys were printed exactly once over the whole run.
    expect(first.stdout().match(/read-only key/g)).toHaveLength(1);
  }, 120_000);

  let second: ServerChild;

  it('a second start on the same data reuses it: healthy, old key works, no new keys', async () => {
    // Should the previous test have failed half-way, the first server must not hold the data dir.
    if (!first.hasExited()) await first.stop('SIGTERM');
    second = await spawnServer(env);
    // How long it took is printed, not judged: the suite asserts no wall-clock speed.
    const ms = await second.waitHealthy(60_000);
    console.info(`second start healthy after ${ms} ms`);

    const r = await me(second, readKey);
    expect(r.status).toBe(200);
    expect(r.body.data!.workspace.id).toBe(workspaceId);
    expect(r.body.data!.balance).toBe(500_000);
    expect(readEmbeddedInfo(dataDir)!.pid).toBe(second.pid);

    const info = readEmbeddedInfo(dataDir)!;
    const c = new pg.Client({ connectionString: embeddedUrl(info) });
    await c.connect();
    try {
      const { rows } = await c.query('SELECT count(*)::int AS n FROM workspaces');
      expect(rows[0].n).toBe(1);
    } finally {
      await c.end();
    }
  }, 120_000);

  it('SIGINT also exits 0, and the restart printed no keys', async () => {
    expect(await second.stop('SIGINT'), describeChild(second)).toEqual({ code: 0, signal: null });
    expect(await portAccepts(pgPort)).toBe(false);
    expect(second.stdout()).not.toMatch(/mk_[A-Za-z0-9]{8}/);
    expect(second.stdout()).not.toContain('Demo data created');
    // …but says how to get another key (the demo workspace is the first one created).
    expect(workspaceId).toBe(1);
    expect(second.stdout()).toContain('npm run -s admin -- key create --workspace 1');
  }, 30_000);
});
