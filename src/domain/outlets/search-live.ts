import pg from 'pg';
import { SearchCounter } from './search-counter.js';

// One SearchCounter per pool (per process), loaded from PostgreSQL and kept current through
// LISTEN outlets_changed on a connection of its own (outside the pool, so it never takes a
// request's connection). A lost connection starts it over: listen again, then reload everything,
// counts falling back to PostgreSQL in between.

interface Live {
  counter: SearchCounter;
  stop(): Promise<void>;
}

const live = new WeakMap<pg.Pool, Live>();

export function counterFor(pool: pg.Pool): SearchCounter | undefined {
  const l = live.get(pool);
  return l?.counter.ready ? l.counter : undefined;
}

/**
 * After this process wrote outlets: its counts include them before the write returns (other
 * processes read them on the notification).
 */
export async function refreshCounter(pool: pg.Pool, ids: number[]): Promise<void> {
  const counter = counterFor(pool);
  if (counter && ids.length) await counter.refresh(pool, ids);
}

/** Whether searches on this pool can count in memory (false while the index loads). */
export function searchReady(pool: pg.Pool): boolean {
  return !live.has(pool) || live.get(pool)!.counter.ready;
}

export function startSearchCounter(pool: pg.Pool, onError: (err: Error) => void = () => {}): Live {
  const existing = live.get(pool);
  if (existing) return existing;
  let stopped = false;
  let client: pg.Client | undefined;
  const state: Live = {
    counter: new SearchCounter(),
    async stop() {
      stopped = true;
      live.delete(pool);
      await client?.end().catch(() => {});
    },
  };
  live.set(pool, state);

  const pending = new Set<number>();
  let draining: Promise<void> | undefined;
  const drain = (counter: SearchCounter) => {
    draining ??= (async () => {
      while (pending.size && !stopped && counter === state.counter) {
        const ids = [...pending];
        pending.clear();
        await counter.refresh(pool, ids);
      }
    })()
      .catch((err: Error) => onError(err))
      .finally(() => (draining = undefined));
  };

  const start = async (): Promise<void> => {
    const counter = new SearchCounter();
    state.counter = counter;
    client = new pg.Client(pool.options);
    client.on('error', (err) => restart(err));
    client.on('notification', (msg) => {
      if (msg.channel !== 'outlets_changed' || !msg.payload) return;
      for (const id of msg.payload.split(',')) pending.add(Number(id));
      if (counter.ready) drain(counter);
    });
    await client.connect();
    // Listening before the load: a change committed while it runs is read again after.
    await client.query('LISTEN outlets_changed');
    await counter.load(pool);
    drain(counter);
  };
  let restarting = false;
  const restart = (err: Error) => {
    if (stopped || restarting) return;
    restarting = true;
    onError(err);
    const old = client;
    void old?.end().catch(() => {});
    setTimeout(() => {
      restarting = false;
      if (!stopped) start().catch(restart);
    }, 1_000).unref();
  };
  start().catch(restart);
  return state;
}
