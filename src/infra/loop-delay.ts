import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { monitorEventLoopDelay } from 'node:perf_hooks';

// How long the event loop was held up, logged once per interval when EVENT_LOOP_DELAY_LOG_MS is
// set (off by default). Work that runs on the loop for long (a sort over every outlet, a
// collector's pause) holds up every request at once, /healthz too, which a latency percentile of
// one route hides among the others: this line names it. The benchmark reads it (bench/README.md).

/** The histogram's timer: it fires every this many ms, and its lateness is the loop's delay. */
const RESOLUTION_MS = 10;

const ms = (ns: number) => Math.round(ns / 1e4) / 100;

/**
 * One line per interval, `event loop delay`, with how late the loop ran a 10 ms timer: at most
 * (`loop_delay_max_ms`), at the 99th percentile and on average; 0 when it was never late. The
 * histogram counts the whole time between two runs of the timer, its own 10 ms included, which
 * is taken off here.
 */
export const loopDelayLog = fp(
  async function loopDelayLog(app: FastifyInstance, { intervalMs }: { intervalMs: number }) {
    const histogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
    histogram.enable();
    const late = (ns: number) => Math.max(0, ms(ns) - RESOLUTION_MS);
    const report = () => {
      if (histogram.count === 0) return;
      app.log.info(
        { loop_delay_max_ms: late(histogram.max), loop_delay_p99_ms: late(histogram.percentile(99)), loop_delay_mean_ms: late(histogram.mean) },
        'event loop delay',
      );
      histogram.reset();
    };
    // Read once the timers due now have run: after a holdup this interval may come before the
    // histogram's own timer, and a reset then would forget the gap that timer is about to record
    // (a reset forgets when the timer last ran).
    const timer = setInterval(() => setImmediate(report), intervalMs);
    timer.unref();
    app.addHook('onClose', async () => {
      clearInterval(timer);
      histogram.disable();
    });
  },
  { name: 'loop-delay-log' },
);
