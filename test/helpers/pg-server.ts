import { chmodSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
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

export async function freePort(): Promise<number> {
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
