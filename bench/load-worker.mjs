// The load generator, run by bench/run.ts as its own process so it never shares an event loop
// with a server under test. Reads one JSON job per line on stdin, runs it, and prints one JSON
// line with its figures on stdout; it stays up between jobs, so the many short slices of a round
// cost no process start each.
import { createInterface } from 'node:readline';
import autocannon from 'autocannon';

// job: { url, connections, durationSeconds, requests: [{ method, path, headers, body }] }
// Optional: requestsPerConnection: [[request…]…] (connection i sends list i mod their number instead
// of requests); idReplacement: true (autocannon replaces [<id>] with an id unique to each request).
function run(job) {
  const lists = job.requestsPerConnection;
  let connection = 0;
  return autocannon({
    url: job.url,
    connections: job.connections,
    pipelining: 1,
    duration: job.durationSeconds,
    requests: job.requests,
    ...(job.idReplacement ? { idReplacement: true } : {}),
    ...(lists?.length ? { setupClient: (client) => client.setRequests(structuredClone(lists[connection++ % lists.length])) } : {}),
  });
}

for await (const line of createInterface({ input: process.stdin })) {
  if (!line.trim()) continue;
  try {
    const r = await run(JSON.parse(line));
    const statuses = {};
    for (const [code, { count }] of Object.entries(r.statusCodeStats ?? {})) statuses[code] = count;
    process.stdout.write(
      JSON.stringify({
        total: r.requests.total,
        seconds: r.duration,
        p50: r.latency.p50,
        p99: r.latency.p99,
        errors: r.errors,
        timeouts: r.timeouts,
        statuses,
      }) + '\n',
    );
  } catch (err) {
    process.stderr.write(`load worker failed: ${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  }
}
