import { afterAll, describe, expect, it } from 'vitest';
import { createMetrics, startMetricsServer } from '../../src/infra/metrics.js';
import { setupApp } from '../helpers/app.js';
import { createTestDatabase } from '../helpers/db.js';
import { bearer, workspaceWithKeys } from '../helpers/fixtures.js';

const database = await createTestDatabase();
const metrics = createMetrics(database.pool);
const h = await setupApp({ RATE_LIMIT_PER_MINUTE: 2 }, { database, metrics });
const server = await startMetricsServer(metrics, 0);
afterAll(async () => {
  await server.close();
  await database.drop();
});

describe('GET /metrics (Prometheus) — happy', () => {
  it('count requests by route and status, rate-limit hits, pool use and ledger totals, on loopback only', async () => {
    const ws = await workspaceWithKeys(database.pool, { balanceCents: 4_321 });
    for (let i = 0; i < 3; i++) await h.app.inject({ method: 'GET', url: '/api/v1/me', headers: bearer(ws.readKey) });
    await h.app.inject({ method: 'GET', url: '/no/such/path' });
    const res = await fetch(`http://127.0.0.1:${server.port}/metrics`);
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toMatch(/http_requests_total\{route="\/api\/v1\/me",method="GET",status="200"\} 2/);
    expect(text).toMatch(/http_requests_total\{route="\/api\/v1\/me",method="GET",status="429"\} 1/);
    expect(text).toMatch(/http_requests_total\{route="unmatched",method="GET",status="404"\} 1/);
    expect(text).toMatch(/rate_limit_hits_total 1/);
    expect(text).toMatch(/http_request_duration_seconds_bucket\{le="0.001",route="\/api\/v1\/me"/);
    expect(text).toMatch(/db_pool_connections\{state="total"\} \d+/);
    expect(text).toMatch(/ledger_balance_cents\{kind="available"\} 4321/);
    expect(text).toMatch(/ledger_balance_cents\{kind="external"\} -4321/);
    expect(text).not.toContain(ws.readKey);
    const other = await fetch(`http://127.0.0.1:${server.port}/other`);
    expect(other.status).toBe(404);
  });
});
