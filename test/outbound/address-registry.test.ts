import ipaddr from 'ipaddr.js';
import { afterAll, describe, expect, it } from 'vitest';
import { liveUrlOn } from '../../src/domain/orders/publisher-actions.js';
import { refuseTarget } from '../../src/outbound/address-policy.js';
import { createOutboundClient } from '../../src/outbound/http-client.js';
import { setupApp } from '../helpers/app.js';
import { workspaceWithKeys, bearer } from '../helpers/fixtures.js';
import { startReceiver } from '../helpers/receiver.js';

// The special-purpose address registry as ipaddr.js names it: every range other than `unicast`,
// IPv4 and IPv6, is refused at webhook creation and at every connection (deliveries and page
// fetches share the agents), literal or behind a name (OUTBOUND_RESOLVE). Walking the library's
// own table means a range it adds later is covered without touching this file.

type Range = [ipaddr.IPv4 | ipaddr.IPv6, number];
const specialRanges = (proto: Registry) =>
  Object.entries(proto.SpecialRanges).flatMap(([name, value]) => {
    const list = (Array.isArray(value[0]) ? value : [value]) as Range[];
    return list.map(([network, bits]) => ({ name, cidr: `${network.toString()}/${bits}`, address: representative(network, bits, name) }));
  });

/** An address inside the range that ipaddr.js names as the range itself (ranges nest: 2001::/23 holds teredo). */
function representative(network: ipaddr.IPv4 | ipaddr.IPv6, bits: number, name: string): string {
  const bytes = network.toByteArray();
  const first = bytes.reduce((n, b) => (n << 8n) | BigInt(b), 0n);
  const last = first | ((1n << BigInt(bytes.length * 8 - bits)) - 1n);
  const toBytes = (n: bigint) => bytes.map((_, i) => Number((n >> BigInt(8 * (bytes.length - 1 - i))) & 0xffn));
  for (const n of [first + 1n, last - 1n, first]) {
    if (n < first || n > last) continue;
    const a = ipaddr.fromByteArray(toBytes(n));
    if (a.range() === name) return a.toString();
  }
  throw new Error(`no representative address for ${name} ${network.toString()}/${bits}`);
}

type Registry = { SpecialRanges: Record<string, Range | Range[]> };
const registry4 = ipaddr.IPv4.prototype as unknown as Registry;
const registry6 = ipaddr.IPv6.prototype as unknown as Registry;
const v4 = specialRanges(registry4);
const v6 = specialRanges(registry6);
// IPv4 carried in IPv6: mapped (::ffff:0:0/96, named by ipaddr.js) and compatible (::/96, which
// ipaddr.js calls unicast but hosts may route to IPv4: RFC 4291 deprecated it).
const carried = v4.flatMap((r) => [
  { name: `ipv4Mapped(${r.name})`, cidr: r.cidr, address: `::ffff:${r.address}` },
  { name: `ipv4Compatible(${r.name})`, cidr: r.cidr, address: `::${r.address}` },
]);
const compatible = ['::127.0.0.1', '::10.0.0.1', '::169.254.169.254', '::7f00:1', '::8.8.8.8'].map((address) => ({ name: 'ipv4Compatible', cidr: '::/96', address }));
const all = [...v4, ...v6, ...carried, ...compatible];
const bracket = (address: string) => (address.includes(':') ? `[${address}]` : address);
/** The two addresses OUTBOUND_ALLOW_LOOPBACK admits, as a URL spells them (`[::0.0.0.1]` is `[::1]`). */
const admittedWithLoopback = (address: string) => ['127.0.0.1', '[::1]'].includes(new URL(`http://${bracket(address)}/`).hostname);

it('the walk covers every named range of both families', () => {
  const names = new Set(all.map((r) => r.name));
  for (const name of Object.keys(registry4.SpecialRanges)) expect(names).toContain(name);
  for (const name of Object.keys(registry6.SpecialRanges)) expect(names).toContain(name);
  expect(names).not.toContain('unicast');
  expect(v4.length).toBeGreaterThanOrEqual(10);
  expect(v6.length).toBeGreaterThanOrEqual(18);
});

describe('webhook creation refuses every special-purpose address', async () => {
  for (const allowLoopback of [false, true]) {
    it(`literal and behind a name (loopback ${allowLoopback ? 'allowed' : 'not allowed'})`, async () => {
      for (const r of all.filter((r) => !(allowLoopback && admittedWithLoopback(r.address)))) {
        const resolve = new Map([['hook.test', r.address]]);
        for (const url of [`https://${bracket(r.address)}/hook`, 'https://hook.test/hook']) {
          expect(await refuseTarget(url, { allowLoopback, resolve }), `${r.name} ${r.cidr} ${url} → ${r.address}`).toMatch(/^must resolve to public/);
        }
      }
    });
  }

  const h = await setupApp({ OUTBOUND_ALLOW_LOOPBACK: false, RATE_LIMIT_PER_MINUTE: 100_000 });
  it('through the API: 422 naming url, for each range', async () => {
    const ws = await workspaceWithKeys(h.database.pool);
    for (const r of all) {
      const res = await h.app.inject({ method: 'POST', url: '/api/v1/webhook-endpoints', headers: bearer(ws.readKey), payload: { url: `https://${bracket(r.address)}/hook` } });
      expect(res.statusCode, `${r.name} ${r.address}`).toBe(422);
      expect(res.json().errors, `${r.name} ${r.address}`).toEqual({ url: [expect.stringMatching(/^must resolve to public addresses only/)] });
    }
    const { rows } = await h.database.pool.query('SELECT count(*)::int AS n FROM webhook_endpoints');
    expect(rows[0].n).toBe(0);
  });
});

describe('page fetches refuse every special-purpose address, and send nothing', async () => {
  const strict = createOutboundClient({ allowLoopback: false, resolve: new Map(all.map((r, i) => [`r${i}.test`, r.address])) });
  const loose = createOutboundClient({ allowLoopback: true, resolve: new Map(all.map((r, i) => [`r${i}.test`, r.address])) });
  afterAll(() => (strict.close(), loose.close()));

  it('by literal and through OUTBOUND_RESOLVE', async () => {
    for (const [i, r] of all.entries()) {
      for (const url of [`http://${bracket(r.address)}/`, `http://r${i}.test/`]) {
        // Loopback allowed admits 127.0.0.1 and ::1 themselves, nothing else.
        const clients = admittedWithLoopback(r.address) ? [strict] : [strict, loose];
        for (const client of clients) {
          const got = await client.get(url, { timeoutMs: 2000 });
          expect(got, `${r.name} ${r.cidr} ${url} → ${r.address}`).toMatchObject({ ok: false, reason: 'refused' });
        }
      }
    }
  });
});

describe('one policy at creation, at publish and at connection', async () => {
  it('an IPv4-mapped public address and port 0 are refused at every moment', async () => {
    const strict = createOutboundClient({ allowLoopback: false });
    afterAll(() => strict.close());
    for (const url of ['https://[::ffff:8.8.8.8]/hook', 'https://[::8.8.8.8]/hook']) {
      expect(await refuseTarget(url, { allowLoopback: false }), url).toMatch(/^must resolve to public addresses only/);
      expect(await strict.post(url, '{}', {}, 2000), url).toMatchObject({ status: null, error: expect.stringMatching(/^refused: /) });
      expect(await strict.get(url, { timeoutMs: 2000 }), url).toMatchObject({ ok: false, reason: 'refused' });
    }
    // Port 0 is no port: Node would send the request to 443 (or 80) instead.
    expect(await refuseTarget('https://1.1.1.1:0/', { allowLoopback: false })).toBe('must not use port 0');
    expect(liveUrlOn('https://outlet.example:0/post', 'outlet.example')).toBeUndefined();
    expect(await strict.post('https://1.1.1.1:0/', '{}', {}, 2000)).toMatchObject({ status: null, error: 'refused: must not use port 0' });
    expect(await strict.get('https://1.1.1.1:0/', { timeoutMs: 2000 })).toMatchObject({ ok: false, reason: 'bad_url' });
    // The public address itself passes at creation (no connection is made to judge a literal).
    expect(await refuseTarget('https://8.8.8.8/hook', { allowLoopback: false })).toBeNull();
  });

  it('with loopback allowed, only 127.0.0.1 and ::1 themselves are admitted, not their IPv6 spellings', async () => {
    const hook = await startReceiver();
    const loose = createOutboundClient({ allowLoopback: true });
    afterAll(() => loose.close());
    for (const host of ['[::ffff:127.0.0.1]', '[::127.0.0.1]', '[::7f00:1]']) {
      const url = `http://${host}:${hook.port}/hook`;
      expect(await refuseTarget(url, { allowLoopback: true }), url).toMatch(/^must resolve to public or loopback addresses only/);
      expect(await loose.post(url, '{}', {}, 2000), url).toMatchObject({ status: null, error: expect.stringMatching(/^refused: /) });
    }
    expect(hook.received).toEqual([]);
    expect(await refuseTarget(hook.url(), { allowLoopback: true })).toBeNull();
    expect(await loose.post(hook.url(), '{}', {}, 2000)).toMatchObject({ status: 200 });
  });

  it('a loopback refusal names the setting that allows it', async () => {
    expect(await refuseTarget('https://127.0.0.1/hook', { allowLoopback: false })).toMatch(/OUTBOUND_ALLOW_LOOPBACK=true/);
    expect(await refuseTarget('https://10.0.0.1/hook', { allowLoopback: false })).not.toMatch(/OUTBOUND_ALLOW_LOOPBACK/);
  });
});
