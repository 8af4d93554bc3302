import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, describe, expect, it } from 'vitest';
import { defaultConfig } from '../../src/config.js';
import { infrastructure } from '../../src/infra/index.js';
import { createTestDatabase } from '../helpers/db.js';
import { freePort } from '../helpers/pg-server.js';

// The infrastructure plugins open what the configuration names and close it with the app.

const database = await createTestDatabase();
afterAll(() => database.drop());

async function started(overrides: Parameters<typeof defaultConfig>[0], lines?: string[]): Promise<FastifyInstance> {
  const app = Fastify(lines ? { logger: { level: 'info', stream: { write: (line: string) => void lines.push(line) } } } : {});
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

  it('log how long the event loop was held up, once per interval, only when asked', async () => {
    const lines: string[] = [];
    const delays = () => lines.map((l) => JSON.parse(l) as { msg: string; loop_delay_max_ms?: number }).filter((l) => l.msg === 'event loop delay');
    const quiet = await started({}, lines);
    await new Promise((r) => setTimeout(r, 300));
    await quiet.close();
    expect(delays()).toEqual([]);

    const app = await started({ EVENT_LOOP_DELAY_LOG_MS: 100 }, lines);
    // Work that holds the loop for 400 ms: a line reports a holdup of that order. Not "at least
    // 390": on a loaded 2-core machine the histogram was seen to record 137 ms of a 200 ms holdup
    // (why was not found), so the bar is half,
    // still twice the logging interval and far above any delay of an idle loop.
    await new Promise((r) => setTimeout(r, 150));
    const until = Date.now() + 400;
    while (Date.now() < until);
    await expect.poll(() => Math.max(...delays().map((d) => d.loop_delay_max_ms!)), { timeout: 5_000 }).toBeGreaterThanOrEqual(200);
    await app.close();
    const after = delays().length;
    await new Promise((r) => setTimeout(r, 300));
    expect(delays().length).toBe(after);
  });

  it('refuse an interval under 100 ms for the event loop delay line', async () => {
    const { loadConfig } = await import('../../src/config.js');
    expect(() => loadConfig({ EVENT_LOOP_DELAY_LOG_MS: '50' })).toThrow(/EVENT_LOOP_DELAY_LOG_MS/);
    expect(loadConfig({ EVENT_LOOP_DELAY_LOG_MS: '' }).EVENT_LOOP_DELAY_LOG_MS).toBe(0);
  });
});
