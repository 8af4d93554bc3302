// The load generator, run by bench/run.ts as its own process so it never shares an event loop
// with a server under test. Reads one JSON job from argv, warms up, measures, and prints one JSON
// line with the measured run's figures on stdout.
import autocannon from 'autocannon';

const job = JSON.parse(process.argv[2] ?? '{}');
// job: { url, connections, warmupSeconds, durationSeconds, requests: [{ method, path, headers, body }] }
// Optional: requestsPerConnection: [[request…]…] (connection i sends list i mod their number instead
// of requests); idReplacement: true (autocannon replaces [<id>] with an id unique to each request).

function run(duration) {
  const lists = job.requestsPerConnection;
  let connection = 0;
  return autocannon({
    url: job.url,
    connections: job.connections,
    pipelining: 1,
    duration,
    requests: job.requests,
    ...(job.idReplacement ? { idReplacement: true } : {}),
    ...(lists?.length ? { setupClient: (client) => client.setRequests(structuredClone(lists[connection++ % lists.length])) } : {}),
  });
}

try {
  if (job.warmupSeconds > 0) await run(job.warmupSeconds);
  const r = await run(job.durationSeconds);
  const statuses = {};
  for (const [code, { count }] of Object.entries(r.statusCodeStats ?? {})) statuses[code] = count;
  process.stdout.write(
    JSON.stringify({
      rps: r.requests.average,
      total: r.requests.total,
      duration: r.duration,
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
