/** What every scenario may use: the demo data the server printed at its first start. */
export interface BenchContext {
  workspaceId: number;
  /** Demo workspace key without "Can place orders". */
  readOnlyKey: string;
  /** Demo workspace key with "Can place orders". */
  spendingKey: string;
  publisherId: number;
  publisherKey: string;
  /** Interface B: a valid purchase code of the demo workspace, when the demo seed printed one. */
  purchaseCode?: string;
  /** Base URL of the app under test, e.g. for a scenario's setup() to create data. */
  baseUrl: string;
  /** The bench database, e.g. for a setup() that creates much data at once with dist/'s domain modules. */
  databaseUrl: string;
}

/** One request autocannon sends; a scenario's requests are sent in turn on every connection. */
export interface BenchRequest {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  headers?: Record<string, string>;
  /** Sent as a JSON body with content-type application/json. */
  json?: unknown;
  /** Sent as it is (give its content-type in headers); for bodies JSON cannot spell, forms. */
  body?: string;
}

/** Load put on the server while a scenario is measured, from a load generator of its own. */
export interface BackgroundLoad {
  description: string;
  connections: number;
  requests: BenchRequest[];
}

/**
 * The reference routes measured in the same run (see bench/ceiling-server.ts). bare and one-query
 * run always; the minimal order transaction (on many accounts, or all on one) only when a chosen
 * scenario is judged against it.
 */
export type Ceiling = 'bare' | 'one-query' | 'min-order-many' | 'min-order-one';

/**
 * Figures a scenario gathers itself (e.g. what a local receiver got): told when each of its
 * measured windows opens and closes, asked once after the last round for lines printed below the
 * table.
 */
export interface ScenarioObserver {
  windowStart(): void;
  windowEnd(): void;
  report(): Promise<string[]>;
}

export interface Scenario {
  name: string;
  description: string;
  requests(ctx: BenchContext): BenchRequest[];
  /** Every response must have this status, else the run is invalid (default 200). */
  expectStatus?: number;
  /** Other statuses that are no error (e.g. 402 once a workspace runs dry); counted and shown. */
  allowStatuses?: number[];
  /**
   * Optional per-connection requests: connection i sends list i (mod their number) in turn,
   * instead of requests() (which is then only the check made before the load).
   */
  connectionRequests?(ctx: BenchContext): BenchRequest[][];
  /**
   * Each connection starts its list at a random place in every slice (a list always started at
   * its beginning would repeat its first queries slice after slice).
   */
  randomStart?: boolean;
  /** Replace `[<id>]` in headers and bodies with an id unique to each request (e.g. Idempotency-Key). */
  uniqueIds?: boolean;
  /**
   * PASS when requests/s ≥ ratio × the reference's requests/s in the same round: a ceiling, or
   * another scenario by name (which then runs too, e.g. mcp against me); with p99Ms, also (or,
   * without ratio, only) when the 99th percentile latency is at most that, in every round (the
   * first seconds after /readyz too, with `fromReady`); with loopDelayMs, also only when the server
   * under test's event loop was never held up longer than that, from /readyz to the end of the run.
   */
  target: { ratio?: number; p99Ms?: number; loopDelayMs?: number; against: Ceiling | { scenario: string } };
  /**
   * Once setup is done (and the judged set scored), the server under test is started again, and
   * this scenario's load (and observer) begins the moment /readyz answers: a first round of its
   * own, `--duration` seconds in one window with no warm-up, before the usual rounds. What a
   * process serves first, right after it says it is ready, is measured rather than warmed away.
   */
  fromReady?: boolean;
  /** Concurrent connections of this scenario's load (default: the run's --connections). */
  connections?: number;
  /** Left out of `all` (it needs a run of its own, e.g. a large catalog or another durability). */
  ownRun?: boolean;
  /** Scores the judged search set (bench/search/judged.json) once setup is done. */
  judged?: boolean;
  /**
   * Measured to explain another scenario's figures (e.g. the cost of a framework alone): its
   * ratio is shown, but it has no target of its own and never fails the run.
   */
  diagnostic?: boolean;
  /** Sent at the same time by another load generator, during the scenario's warm-up and slices. */
  background?(ctx: BenchContext): BackgroundLoad;
  /** Added to the environment of the server under test when this scenario runs. */
  serverEnv?: Record<string, string>;
  observer?: ScenarioObserver;
  /** Optional preparation before any load (create data through the API or the database). */
  setup?(ctx: BenchContext): Promise<void>;
}
