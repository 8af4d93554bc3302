import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmbedded } from '../../src/db/embedded.js';

export interface PgServer {
  /** URL of a maintenance database on the server (used to create and drop databases). */
  adminUrl: string;
  kind: 'env' | 'testcontainers' | 'embedded';
  stop(): Promise<void>;
}

/**
 * A port for a child process to listen on (the embedded PostgreSQL, a spawned server), where the
 * test must name the port before the process binds it. Chosen at random below the kernel's
 * ephemeral range: a port from that range (what listening on 0 hands out) is also the local port
 * of outgoing connections, so under load another test's connection could take it between the
 * check here and the child's bind. Here only another `freePort()` could pick it, at random among
 * thousands, and one bound already is skipped. Wherever the code that listens can take 0 and report
 * its port, prefer that.
 */
export async function freePort(): Promise<number> {
  const [ephemeralLow] = ephemeralRange();
  const low = 20_000;
  const high = Math.max(low + 1_000, ephemeralLow);
  for (let i = 0; i < 200; i++) {
    const port = low + Math.floor(Math.random() * (high - low));
    if (await bindable(port)) return port;
  }
  throw new Error(`no free port found in ${low}-${high - 1}`);
}

function ephemeralRange(): [number, number] {
  try {
    const [a, b] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
    if (a && b) return [a, b];
  } catch {
    // not Linux: the IANA dynamic range
  }
  return [49_152, 65_535];
}

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.unref();
    srv.once('error', () => resolve(false));
    srv.listen({ port, host: '127.0.0.1', exclusive: true }, () => srv.close(() => resolve(true)));
  });
}

async function dockerAnswers(): Promise<boolean> {
  if (!process.env.DOCKER_HOST && !existsSync('/var/run/docker.sock')) return false;
  try {
    const { getContainerRuntimeClient } = await import('testcontainers');
    await Promise.race([
      getContainerRuntimeClient(),
      new Promise((_, reject) => setTimeout(() => reject(new Error('timeout')), 15_000)),
    ]);
    return true;
  } catch {
    return false;
  }
}

/** A PostgreSQL server with a private data directory, in a temporary folder. */
export async function startTempEmbedded(): Promise<{ url: string; adminUrl: string; dataDir: string; port: number; stop(): Promise<void>; start(): Promise<void> }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'mkt-pg-'));
  // PostgreSQL runs as its own user when we are root: it must be able to enter the folder.
  chmodSync(dataDir, 0o755);
  const port = await freePort();
  const flags = ['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off', '-c', 'max_connections=300'];
  let handle = await startEmbedded({ dataDir, port, extraFlags: flags });
  const adminUrl = handle.url.replace(/\/[^/]+$/, '/postgres');
  return {
    url: handle.url,
    adminUrl,
    dataDir,
    port,
    stop: () => handle.stop(),
    start: async () => {
      handle = await startEmbedded({ dataDir, port, extraFlags: flags });
    },
  };
}

/** The test database server, in the order DEVELOPERS.md gives. */
export async function startPgServer(): Promise<PgServer> {
  const fromEnv = process.env.TEST_DATABASE_URL;
  if (fromEnv) return { adminUrl: fromEnv, kind: 'env', stop: async () => {} };

  if (await dockerAnswers()) {
    const { GenericContainer, Wait } = await import('testcontainers');
    const container = await new GenericContainer('postgres:17-alpine')
      .withEnvironment({ POSTGRES_PASSWORD: 'test', POSTGRES_USER: 'test', POSTGRES_DB: 'postgres' })
      .withCommand(['postgres', '-c', 'fsync=off', '-c', 'max_connections=300'])
      .withExposedPorts(5432)
      .withWaitStrategy(Wait.forLogMessage(/database system is ready to accept connections/, 2))
      .start();
    const url = `postgres://test:test@${container.getHost()}:${container.getMappedPort(5432)}/postgres`;
    return { adminUrl: url, kind: 'testcontainers', stop: async () => void (await container.stop()) };
  }

  const embedded = await startTempEmbedded();
  return {
    adminUrl: embedded.adminUrl,
    kind: 'embedded',
    stop: async () => {
      await embedded.stop();
      rmSync(embedded.dataDir, { recursive: true, force: true });
    },
  };
}
