import { afterAll, describe, expect, it } from 'vitest';
import { cleanupChildren, demoShown, describeChild, eventually, spawnServer, tempDataDir } from '../helpers/child.js';
import { freePort } from '../helpers/pg-server.js';

afterAll(cleanupChildren, 30_000);

describe('a server killed with SIGKILL', () => {
  it('leaves an embedded PostgreSQL that the next start stops and replaces', async () => {
    const dataDir = tempDataDir();
    const env = { DATA_DIR: dataDir, EMBEDDED_PG_PORT: String(await freePort()) };
    const first = await spawnServer(env);
    await first.waitHealthy(100_000);
    // The keys are printed right after listen, so /healthz can answer before the pipe delivers them.
    const key = await eventually(async () => /read-only key \(workspace \d+\): (mk_\w+)/.exec(first.stdout())?.[1], 'demo keys printed').catch((err) => {
      throw new Error(`${(err as Error).message}${describeChild(first)}`);
    });
    await demoShown(dataDir);
    first.proc.kill('SIGKILL');
    await first.exited;

    const second = await spawnServer(env);
    await second.waitHealthy(60_000).catch((err) => {
      throw new Error(`${(err as Error).message}${describeChild(second)}`);
    });
    const me = await fetch(`${second.baseUrl}/api/v1/me`, { headers: { authorization: `Bearer ${key}` } });
    expect(me.status).toBe(200);
    expect((await second.stop('SIGTERM')).code).toBe(0);
  }, 200_000);
});
