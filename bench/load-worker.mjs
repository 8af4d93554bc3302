// The load generator, run by bench/run.ts as its own process so it never shares an event loop
// with a server under test. Reads one JSON job per line on stdin and prints JSON lines on stdout:
// {"event":"start"} and {"event":"end"} when its measured window opens and closes (the
// orchestrator reads CPU times then), then the window's figures. It stays up between jobs, so
// the many short slices of a round cost no process start each.
import { createInterface } from 'node:readline';
import autocannon from 'autocannon';

// job: { url, connections, rampSeconds, durationSeconds, requests: [{ method, path, headers, body }] }
// Optional: requestsPerConnection: [[request…]…] (connection i sends list i mod their number instead
// of requests); idReplacement: true (autocannon replaces [<id>] with an id unique to each request);
// latencies: true (the window's latencies are sent back too, so that a round's percentiles can be
// taken over all its responses).
//
// The load runs for rampSeconds before the window and a little after it; only responses that
// arrive inside the window count. So neither the ramp-up (the first responses take a whole
// latency to come) nor requests still running from the previous job skew a short window.
function run(job) {
  const lists = job.requestsPerConnection;
  let connection = 0;
  const rampMs = job.rampSeconds * 1000;
  const windowMs = job.durationSeconds * 1000;
  const statuses = {};
  const latencies = [];
  let measuring = false;
  let opened = 0;
  let closed = 0;
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: job.url,
        connections: job.connections,
        pipelining: 1,
        // Stopped below when the window closes; the duration is only a backstop.
        duration: (rampMs + windowMs) / 1000 + 5,
        // autocannon acts on a stop at its next sample: sample often, stop on time.
        sampleInt: 50,
        requests: job.requests,
        ...(job.idReplacement ? { idReplacement: true } : {}),
        ...(lists?.length ? { setupClient: (client) => client.setRequests(structuredClone(lists[connection++ % lists.length])) } : {}),
      },
      (err, result) => {
        if (err) return reject(err);
        if (!closed) return reject(new Error('the load stopped before its measured window closed'));
        latencies.sort((a, b) => a - b);
        const at = (q) => (latencies.length ? latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] : 0);
        resolve({
          total: latencies.length,
          seconds: (closed - opened) / 1000,
          p50: at(0.5),
          p99: at(0.99),
          ...(job.latencies ? { latencies } : {}),
          errors: result.errors,
          timeouts: result.timeouts,
          statuses,
        });
      },
    );
    instance.on('response', (_client, statusCode, _bytes, responseTime) => {
      if (!measuring) return;
      statuses[statusCode] = (statuses[statusCode] ?? 0) + 1;
      latencies.push(responseTime);
    });
    // The window closes a full window after it actually opened: a start delayed by a busy
    // event loop must not shorten it.
    setTimeout(() => {
      process.stdout.write('{"event":"start"}\n');
      opened = performance.now();
      measuring = true;
      setTimeout(() => {
        measuring = false;
        closed = performance.now();
        process.stdout.write('{"event":"end"}\n');
        instance.stop();
      }, windowMs);
    }, rampMs);
  });
}

for await (const line of createInterface({ input: process.stdin })) {
  if (!line.trim()) continue;
  try {
    process.stdout.write(JSON.stringify(await run(JSON.parse(line))) + '\n');
  } catch (err) {
    process.stderr.write(`load worker failed: ${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  }
}
