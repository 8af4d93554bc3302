import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Counter, Histogram } from 'prom-client';

type RequestLabels = 'route' | 'method' | 'status';

/** The counters a response moves (the registry behind them is infrastructure's). */
export interface RequestCounters {
  requests: Counter<RequestLabels>;
  duration: Histogram<RequestLabels>;
  rateLimited: Counter;
}

/** Counts every response of the app; unknown routes are labelled `unmatched`, never by raw URL. */
export const requestMetrics = fp(
  async function requestMetrics(app: FastifyInstance, { metrics }: { metrics: RequestCounters }) {
    app.addHook('onResponse', async (request, reply) => {
      const labels = { route: request.routeOptions.url ?? 'unmatched', method: request.method, status: String(reply.statusCode) };
      metrics.requests.inc(labels);
      metrics.duration.observe(labels, reply.elapsedTime / 1000);
      if (reply.statusCode === 429) metrics.rateLimited.inc();
    });
  },
  { name: 'request-metrics' },
);
