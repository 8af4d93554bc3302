import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { combineSlices, type Slice } from '../../bench/results.js';

const slice = (over: Partial<Slice>): Slice => ({ total: 0, seconds: 1, p50: 1, p99: 1, errors: 0, timeouts: 0, statuses: {}, ...over });

describe('combineSlices', () => {
  it('gives responses over measured time, CPU per response and the median latencies', () => {
    const r = combineSlices([
      slice({ total: 100, seconds: 0.5, p50: 2, p99: 10, statuses: { '201': 90, '402': 10 }, nodeMicros: 10_000, dbMicros: 4_000 }),
      slice({ total: 300, seconds: 1.5, p50: 4, p99: 20, statuses: { '201': 300 }, nodeMicros: 20_000, dbMicros: 8_000 }),
      slice({ total: 200, seconds: 1, p50: 3, p99: 30, statuses: { '201': 200 }, errors: 1, timeouts: 2, nodeMicros: 15_000, dbMicros: 0 }),
    ]);
    expect(r).toEqual({ rps: 200, total: 600, p50: 3, p99: 20, errors: 1, timeouts: 2, statuses: { '201': 590, '402': 10 }, nodeUs: 75, dbUs: 20 });
  });

  it('takes the percentiles over every response when the slices carry their latencies, so that one slow slice shows', () => {
    const quick = Array.from({ length: 99 }, (_, i) => 1 + i / 100);
    const r = combineSlices([
      slice({ total: 99, p50: 1.5, p99: 2, latencies: quick }),
      slice({ total: 99, p50: 1.5, p99: 2, latencies: quick }),
      slice({ total: 10, p50: 900, p99: 1_000, latencies: Array.from({ length: 10 }, (_, i) => 900 + i * 10) }),
    ]);
    // The median of the slices' p99 would say 2 ms; 10 of the 208 responses took 900 ms or more.
    expect(r.p99).toBe(970);
    expect(r.p50).toBeCloseTo(1.52);
    // Without latencies in every slice: the medians, as before.
    expect(combineSlices([slice({ p99: 2, latencies: [1] }), slice({ p99: 30 }), slice({ p99: 4 })]).p99).toBe(4);
  });

  it('leaves CPU out when a slice could not read it, and gives 0 responses a second for no time', () => {
    const r = combineSlices([slice({ total: 10, nodeMicros: 100 }), slice({ total: 10 })]);
    expect(r.nodeUs).toBeUndefined();
    expect(r.dbUs).toBeUndefined();
    expect(combineSlices([slice({ total: 5, seconds: 0 })]).rps).toBe(0);
  });
});

describe('the load generator', () => {
  let server: Server;
  let url: string;
  // Arrival time of every request the server saw.
  const arrivals: number[] = [];
  // Every request's connection (its client port), path and Authorization header.
  const seen: { port: number; path: string; auth: string | undefined }[] = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      arrivals.push(performance.now());
      seen.push({ port: req.socket.remotePort!, path: req.url!, auth: req.headers.authorization });
      res.setHeader('content-type', 'application/json');
      res.end('{"ok":true}');
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it('counts only the responses of its window, after the ramp, and stops when the window closes', async () => {
    const worker = spawn(process.execPath, [join(import.meta.dirname, '../../bench/load-worker.mjs')], { stdio: ['pipe', 'pipe', 'inherit'] });
    const lines = createInterface({ input: worker.stdout! })[Symbol.asyncIterator]();
    const next = async () => {
      const { value } = await lines.next();
      return { at: performance.now(), msg: JSON.parse(value as string) as Record<string, unknown> };
    };
    try {
      for (const round of [1, 2]) {
        const sent = performance.now();
        const job = { url, connections: 4, rampSeconds: 0.3, durationSeconds: 0.5, requests: [{ method: 'GET', path: '/' }] };
        worker.stdin!.write(JSON.stringify(job) + '\n');
        const start = await next();
        const end = await next();
        const result = await next();
        expect([start.msg, end.msg]).toEqual([{ event: 'start' }, { event: 'end' }]);
        // The ramp: load before the window opened.
        expect(arrivals.some((t) => t > sent && t < start.at)).toBe(true);
        const seconds = result.msg.seconds as number;
        // The window's length, give or take how early a timer may fire on a busy event loop.
        expect(seconds).toBeGreaterThan(0.45);
        const total = result.msg.total as number;
        const sentAll = arrivals.filter((t) => t > sent).length;
        expect(total).toBeGreaterThan(0);
        expect(total).toBeLessThan(sentAll);
        expect(result.msg.statuses).toEqual({ '200': total });
        expect(result.msg.errors).toBe(0);
        expect(result.msg.latencies).toBeUndefined();
        // Stopped: nothing arrives a moment after the answer.
        await new Promise((r) => setTimeout(r, 150));
        const settled = arrivals.length;
        await new Promise((r) => setTimeout(r, 300));
        expect(arrivals.length, `round ${round}`).toBe(settled);
      }
    } finally {
      worker.kill();
    }
  });

  it('sends each connection its own list, in order and round again, headers included, the same for a second job', async () => {
    const worker = spawn(process.execPath, [join(import.meta.dirname, '../../bench/load-worker.mjs')], { stdio: ['pipe', 'pipe', 'inherit'] });
    const lines = createInterface({ input: worker.stdout! })[Symbol.asyncIterator]();
    const get = (path: string) => ({ method: 'GET', path, headers: { authorization: `Bearer ${path}` } });
    const lists = [
      ['/a1', '/a2', '/a3'].map(get),
      ['/b1', '/b2'].map(get),
    ];
    try {
      for (const round of [1, 2]) {
        seen.length = 0;
        worker.stdin!.write(JSON.stringify({ url, connections: 2, rampSeconds: 0, durationSeconds: 0.2, requests: [get('/default')], requestsPerConnection: lists }) + '\n');
        for (let done = false; !done; ) done = !('event' in (JSON.parse((await lines.next()).value as string) as Record<string, unknown>));
        const byConnection = new Map<number, typeof seen>();
        for (const r of seen) byConnection.set(r.port, [...(byConnection.get(r.port) ?? []), r]);
        const sequences = [...byConnection.values()].map((rs) => rs.map((r) => r.path)).sort((x, y) => x[0]!.localeCompare(y[0]!));
        expect(sequences, `round ${round}`).toHaveLength(2);
        const [a, b] = sequences as [string[], string[]];
        expect(a.length).toBeGreaterThan(6);
        expect(b.length).toBeGreaterThan(6);
        a.forEach((path, i) => expect(path).toBe(`/a${(i % 3) + 1}`));
        b.forEach((path, i) => expect(path).toBe(`/b${(i % 2) + 1}`));
        for (const r of seen) expect(r.auth).toBe(`Bearer ${r.path}`);
      }
    } finally {
      worker.kill();
    }
  });

  it('sends back every latency of its window when asked, ascending', async () => {
    const worker = spawn(process.execPath, [join(import.meta.dirname, '../../bench/load-worker.mjs')], { stdio: ['pipe', 'pipe', 'inherit'] });
    const lines = createInterface({ input: worker.stdout! })[Symbol.asyncIterator]();
    try {
      worker.stdin!.write(JSON.stringify({ url, connections: 2, rampSeconds: 0, durationSeconds: 0.3, latencies: true, requests: [{ method: 'GET', path: '/' }] }) + '\n');
      let result: { total: number; p99: number; latencies: number[] } | undefined;
      while (!result) {
        const msg = JSON.parse((await lines.next()).value as string) as Record<string, unknown>;
        if (!('event' in msg)) result = msg as unknown as typeof result;
      }
      expect(result!.total).toBeGreaterThan(0);
      expect(result!.latencies).toHaveLength(result!.total);
      expect(result!.latencies).toEqual([...result!.latencies].sort((a, b) => a - b));
      expect(result!.latencies).toContain(result!.p99);
    } finally {
      worker.kill();
    }
  });
});
