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
}

/** One request autocannon sends; a scenario's requests are sent in turn on every connection. */
export interface BenchRequest {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  headers?: Record<string, string>;
  /** Sent as a JSON body with content-type application/json. */
  json?: unknown;
}

/** The two reference routes measured in the same run (see bench/ceiling-server.ts). */
export type Ceiling = 'bare' | 'one-query';

export interface Scenario {
  name: string;
  description: string;
  requests(ctx: BenchContext): BenchRequest[];
  /** Every response must have this status, else the run is invalid (default 200). */
  expectStatus?: number;
  /** PASS when requests/s ≥ ratio × the chosen ceiling's requests/s. */
  target: { ratio: number; against: Ceiling };
  /** Optional preparation before any load (create data through the API or the database). */
  setup?(ctx: BenchContext): Promise<void>;
}
