import type { BenchRequest, Scenario } from './types.js';

const MB = 1024 * 1024;

/** The worst bodies a client without a key could send (each about 1 MB). */
function hostileBodies(): BenchRequest[] {
  const deep = '['.repeat(MB / 2 - 50) + ']'.repeat(MB / 2 - 50);
  const form = Array.from({ length: 100_000 }, (_, i) => `p${i}=1`).join('&');
  const members = JSON.stringify(Object.fromEntries(Array.from({ length: 75_000 }, (_, i) => [`m${i}`, 1])));
  const whitespace = ' '.repeat(MB - 1);
  const json = { 'content-type': 'application/json' };
  const bodies: Array<[Record<string, string>, string]> = [
    [json, deep],
    [{ 'content-type': 'application/x-www-form-urlencoded' }, form],
    [json, members],
    [json, whitespace],
  ];
  // Interface B reads its body before its key; Interface A checks the key first.
  return ['/api/purchases/validation', '/api/v1/plan'].flatMap((path) =>
    bodies.map(([headers, body]): BenchRequest => ({ method: 'POST', path, headers, body })),
  );
}

// GET /api/v1/me for a valid key while four connections without a key send the worst bodies.
// Rate limits are out of the way in the bench, so none of them is answered 429: what they cost is
// what refusing them costs.
export const hostile: Scenario = {
  name: 'hostile',
  description: 'GET /api/v1/me (10 connections) while 4 connections without a key send 1 MB hostile bodies',
  requests: (ctx) => [{ method: 'GET', path: '/api/v1/me', headers: { authorization: `Bearer ${ctx.readOnlyKey}` } }],
  connections: 10,
  background: () => ({
    description: 'deep JSON, 100,000 form parameters, 75,000 members, 1 MB of whitespace; to Interface B and to /plan',
    connections: 4,
    requests: hostileBodies(),
  }),
  // Judged by the latency of the valid key's requests. Four closed-loop connections sending
  // as fast as they are answered take their share of the CPU whatever they send, so the ratio to
  // `me` alone is shown, not judged.
  target: { p99Ms: 100, against: { scenario: 'me' } },
};
