// What a load run measures, and how a round's slices of one target become one result.

export interface LoadResult {
  rps: number;
  total: number;
  p50: number;
  p99: number;
  errors: number;
  timeouts: number;
  statuses: Record<string, number>;
  /** CPU µs per request of the Node server and of PostgreSQL during the measured slices. */
  nodeUs?: number;
  dbUs?: number;
}

/** What the load generator reports for one measured window, with the CPU time read at its edges. */
export interface Slice {
  total: number;
  seconds: number;
  p50: number;
  p99: number;
  errors: number;
  timeouts: number;
  statuses: Record<string, number>;
  nodeMicros?: number | undefined;
  dbMicros?: number | undefined;
  /** Every response's latency (ms, ascending), when the job asked for them. */
  latencies?: number[];
}

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** The q-quantile of ascending values (0 when there are none), as the load generator takes it. */
export function quantile(sorted: readonly number[], q: number): number {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]! : 0;
}

/**
 * A round's slices of one target as one result: requests over time measured; latency percentiles
 * over every response when the slices carry their latencies (a stall within one slice would hide
 * in a median of the slices' p99), else the medians of the slices'.
 */
export function combineSlices(slices: Slice[]): LoadResult {
  const total = slices.reduce((a, x) => a + x.total, 0);
  const seconds = slices.reduce((a, x) => a + x.seconds, 0);
  const statuses: Record<string, number> = {};
  for (const x of slices) for (const [code, n] of Object.entries(x.statuses)) statuses[code] = (statuses[code] ?? 0) + n;
  const perRequest = (f: (x: Slice) => number | undefined) => {
    const xs = slices.map(f);
    return total > 0 && xs.every((v) => v !== undefined) ? (xs as number[]).reduce((a, v) => a + v, 0) / total : undefined;
  };
  const nodeUs = perRequest((x) => x.nodeMicros);
  const dbUs = perRequest((x) => x.dbMicros);
  const pooled = slices.every((x) => x.latencies) ? slices.flatMap((x) => x.latencies!).sort((a, b) => a - b) : undefined;
  return {
    rps: seconds > 0 ? total / seconds : 0,
    total,
    p50: pooled ? quantile(pooled, 0.5) : median(slices.map((x) => x.p50)),
    p99: pooled ? quantile(pooled, 0.99) : median(slices.map((x) => x.p99)),
    errors: slices.reduce((a, x) => a + x.errors, 0),
    timeouts: slices.reduce((a, x) => a + x.timeouts, 0),
    statuses,
    ...(nodeUs !== undefined ? { nodeUs } : {}),
    ...(dbUs !== undefined ? { dbUs } : {}),
  };
}
