import pg from 'pg';

// The search engine's connection for LISTEN outlets_changed: a client of its own, outside the pool
// (so it never takes a request's connection), and started over a second after it is lost. Each
// start listens before calling `connected` (the engine loads its index then): a change committed
// while the load runs arrives as a notification and is read again after it.

/** Milliseconds between a lost connection and the next attempt. */
const RETRY_MS = 1_000;

export class OutletChangesListener {
  private client: pg.Client | undefined;
  private stopped = false;
  private restarting = false;

  /**
   * `payload`: each notification's text (outlet ids, or a mark); `starting`: before each start
   * connects; `connected`: after LISTEN, on every start; `lost`: a lost connection or a failed
   * start (the listener starts over after it).
   */
  constructor(
    private readonly pool: pg.Pool,
    private readonly on: {
      payload: (payload: string) => void;
      starting: () => void;
      connected: () => Promise<void>;
      lost: (err: Error) => void;
    },
  ) {}

  start(): void {
    this.connect().catch((err: Error) => this.restart(err));
  }

  /** Starts over as a lost connection does (the engine's reload for a burst failed midway). */
  restart(err: Error): void {
    if (this.stopped || this.restarting) return;
    this.restarting = true;
    this.on.lost(err);
    void this.client?.end().catch(() => {});
    setTimeout(() => {
      this.restarting = false;
      if (!this.stopped) this.connect().catch((e: Error) => this.restart(e));
    }, RETRY_MS).unref();
  }

  async close(): Promise<void> {
    this.stopped = true;
    await this.client?.end().catch(() => {});
  }

  private async connect(): Promise<void> {
    // Not pipelined: a listener that hangs must be closed at once (end() on a pipelined client
    // waits for the answers in flight).
    const client = new pg.Client({ ...this.pool.options, pipeline: false });
    this.client = client;
    client.on('error', (err) => this.restart(err));
    client.on('notification', (msg) => {
      if (msg.channel === 'outlets_changed' && msg.payload) this.on.payload(msg.payload);
    });
    this.on.starting();
    await client.connect();
    await client.query('LISTEN outlets_changed');
    await this.on.connected();
  }
}
