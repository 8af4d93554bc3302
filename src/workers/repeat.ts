import type { FastifyInstance } from 'fastify';

/**
 * Runs `work` every `intervalMs` once the app is ready, one run at a time in this process: a run
 * that outlasts the interval is not joined by the next tick. On close, the ticks stop and the run
 * in progress is awaited; `stopping()` tells a run that loops to end early. A failed run is logged
 * as `${what} failed` and the next tick tries again.
 */
export function repeatInBackground(
  app: FastifyInstance,
  intervalMs: number,
  what: string,
  work: (stopping: () => boolean) => Promise<void>,
): void {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> = Promise.resolve();
  let busy = false;
  let closing = false;
  const tick = () => {
    if (busy) return;
    busy = true;
    running = work(() => closing)
      .catch((err) => app.log.warn({ err: (err as Error).message }, `${what} failed`))
      .finally(() => {
        busy = false;
      });
  };
  app.addHook('onReady', async () => {
    timer = setInterval(tick, intervalMs);
    timer.unref();
  });
  app.addHook('preClose', async () => {
    closing = true;
    clearInterval(timer);
    await running;
  });
}
