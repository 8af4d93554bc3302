import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type pg from 'pg';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { ledgerTotalsByKind, orderCountsByStatus } from '../domain/stats.js';

/** The service's Prometheus metrics; served on the loopback-only METRICS_PORT (`metricsListener`). */
export function createMetrics(pool: pg.Pool) {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const requests = new Counter({
    name: 'http_requests_total',
    help: 'HTTP requests by route, method and status.',
    labelNames: ['route', 'method', 'status'] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request latency by route and status.',
    labelNames: ['route', 'method', 'status'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [registry],
  });
  const rateLimited = new Counter({ name: 'rate_limit_hits_total', help: 'Requests answered 429.', registers: [registry] });
  new Gauge({
    name: 'db_pool_connections',
    help: 'Database pool connections by state.',
    labelNames: ['state'] as const,
    registers: [registry],
    collect() {
      this.set({ state: 'total' }, pool.totalCount);
      this.set({ state: 'idle' }, pool.idleCount);
      this.set({ state: 'waiting' }, pool.waitingCount);
    },
  });
  // Business gauges are read from the database at scrape time.
  new Gauge({
    name: 'orders',
    help: 'Orders by status.',
    labelNames: ['status'] as const,
    registers: [registry],
    async collect() {
      const rows = await orderCountsByStatus(pool);
      this.reset();
      for (const r of rows) this.set({ status: r.status }, r.n);
    },
  });
  new Gauge({
    name: 'ledger_balance_cents',
    help: 'Sum of ledger balances by account kind (US cents).',
    labelNames: ['kind'] as const,
    registers: [registry],
    async collect() {
      const rows = await ledgerTotalsByKind(pool);
      this.reset();
      for (const r of rows) this.set({ kind: r.kind }, r.total);
    },
  });
  return { registry, requests, duration, rateLimited };
}

export type Metrics = ReturnType<typeof createMetrics>;

/**
 * The metrics listener: its own HTTP server bound to 127.0.0.1, never the public port, so scrapes
 * need no key and expose nothing to the outside.
 */
export async function startMetricsServer(metrics: Metrics, port: number): Promise<{ port: number; close(): Promise<void> }> {
  const { createServer } = await import('node:http');
  const server = createServer((req, res) => {
    if (req.method !== 'GET' || req.url?.split('?')[0] !== '/metrics') {
      res.writeHead(404).end();
      return;
    }
    metrics.registry
      .metrics()
      .then((body) => res.writeHead(200, { 'content-type': metrics.registry.contentType }).end(body))
      .catch(() => res.writeHead(503).end());
  });
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, '127.0.0.1', resolve));
  const address = server.address();
  return {
    port: typeof address === 'object' && address ? address.port : port,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The registry and counters; absent without METRICS_PORT. */
    metrics?: Metrics;
  }
}

/**
 * The metrics and their loopback listener, on `port`; closed with the app. Needs the database
 * plugin (the pool gauge and the business gauges read it).
 */
export const metricsListener = fp(
  async function metricsListener(app: FastifyInstance, { port }: { port: number }) {
    const metrics = createMetrics(app.database.pool);
    const server = await startMetricsServer(metrics, port);
    app.addHook('onClose', () => server.close());
    app.log.info({ port: server.port }, 'metrics on 127.0.0.1 /metrics');
    app.decorate('metrics', metrics);
  },
  { name: 'metrics-listener', dependencies: ['database'] },
);
