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
// A connection's list is turned into request bytes one request at a time, as each is sent (autocannon
// builds a request whose `setupRequest` is a function when its turn comes), not all at once when
// the load starts. Built at once, a list of 1,000 took 10–20 ms a connection, 150–250 ms for ten,
// on this process's one thread, while the first responses waited here unread: the first requests
// after /readyz were timed at up to 223–272 ms (two starts) while the server's own log gave them
// 1–24 ms. Fresh objects, too: autocannon writes each request's bytes onto it, and the lists serve
// every job.
const asIs = (request) => request;
const lazily = (list) => list.map((request) => ({ ...request, setupRequest: asIs }));

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
        requests: lists?.length ? lazily(job.requests.slice(0, 1)) : job.requests,
        ...(job.idReplacement ? { idReplacement: true } : {}),
        ...(lists?.length ? { setupClient: (client) => client.setRequests(lazily(lists[connection++ % lists.length])) } : {}),
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
