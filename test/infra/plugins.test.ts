import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, describe, expect, it } from 'vitest';
import { defaultConfig } from '../../src/config.js';
import { infrastructure } from '../../src/infra/index.js';
import { createTestDatabase } from '../helpers/db.js';
import { freePort } from '../helpers/pg-server.js';

// The infrastructure plugins open what the configuration names and close it with the app.

const database = await createTestDatabase();
afterAll(() => database.drop());

async function started(overrides: Parameters<typeof defaultConfig>[0]): Promise<FastifyInstance> {
  const app = Fastify();
  await app.register(infrastructure, { config: defaultConfig({ DATABASE_URL: database.url, ...overrides }) });
  await app.ready();
  return app;
}

describe('infrastructure plugins', () => {
  it('open a migrated pool, and end it when the app closes', async () => {
    const app = await started({});
    const { rows } = await app.database.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM app_secrets WHERE name = 'mcp_confirmation_secret'");
    expect(rows[0]!.n).toBe(1);
    expect(app.embeddedPostgres).toBeUndefined();
    expect(app.redis).toBeUndefined();
    expect(app.metrics).toBeUndefined();
    await app.close();
    expect(app.database.pool.ended).toBe(true);
    await expect(app.database.pool.query('SELECT 1')).rejects.toThrow();
  });

  it('serve /metrics on the loopback port while the app runs, and stop when it closes', async () => {
    const port = await freePort();
    const app = await started({ METRICS_PORT: port });
    expect(app.metrics).toBeDefined();
    const res = await fetch(`http://127.0.0.1:${port}/metrics`);
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('db_pool_connections');
    await app.close();
    await expect(fetch(`http://127.0.0.1:${port}/metrics`)).rejects.toThrow();
  });
});
