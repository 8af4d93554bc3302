import type pg from 'pg';
import { DomainError } from '../errors.js';
import { inProgress } from '../idempotency/record-once.js';

interface Waiting {
  start: () => void;
  timer: NodeJS.Timeout;
}

/**
 * A workspace's placements reach the database one at a time per process, in arrival order; the
 * others wait here, holding no connection. Every placement locks its workspace's balance rows, so
 * a second one could only wait for that lock on a connection of its own: when the rows are held
 * elsewhere (another process, a slow transaction), one workspace would take the whole pool.
 * A placement that waits longer than a request may wait for a connection answers 503, as that
 * request would; a retry of a request that waits or runs here is 409 `idempotency_in_progress`
 * at once, as it is while its first runs in another process.
 */
export class WorkspaceQueue {
  private readonly waiting = new Map<number, Waiting[]>();
  private readonly running = new Set<number>();
  private readonly identities = new Set<string>();

  constructor(private readonly maxWaitMs: number) {}

  async run<T>(workspaceId: number, identity: string | undefined, work: () => Promise<T>): Promise<T> {
    if (identity !== undefined) {
      if (this.identities.has(identity)) throw inProgress();
      this.identities.add(identity);
    }
    try {
      await this.turn(workspaceId);
      try {
        return await work();
      } finally {
        this.next(workspaceId);
      }
    } finally {
      if (identity !== undefined) this.identities.delete(identity);
    }
  }

  private turn(workspaceId: number): Promise<void> {
    if (!this.running.has(workspaceId)) {
      this.running.add(workspaceId);
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      const line = this.waiting.get(workspaceId) ?? [];
      this.waiting.set(workspaceId, line);
      const entry: Waiting = {
        start: () => {
          clearTimeout(entry.timer);
          resolve();
        },
        timer: setTimeout(() => {
          line.splice(line.indexOf(entry), 1);
          if (line.length === 0) this.waiting.delete(workspaceId);
          reject(new DomainError('unavailable', 'Too many orders are being placed at once. Retry shortly.'));
        }, this.maxWaitMs),
      };
      line.push(entry);
    });
  }

  /** The workspace's next placement starts; the workspace stays running until its line is empty. */
  private next(workspaceId: number): void {
    const line = this.waiting.get(workspaceId);
    const first = line?.shift();
    if (line?.length === 0) this.waiting.delete(workspaceId);
    if (first) first.start();
    else this.running.delete(workspaceId);
  }
}

// One queue per pool: an app has one pool, and its REST routes and MCP tools share it.
const queues = new WeakMap<pg.Pool, WorkspaceQueue>();

export function workspaceQueueOf(pool: pg.Pool): WorkspaceQueue {
  let queue = queues.get(pool);
  if (!queue) queues.set(pool, (queue = new WorkspaceQueue(pool.options.connectionTimeoutMillis ?? 2_000)));
  return queue;
}
