import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/** Where outbound requests may go. Loopback only for development and tests (OUTBOUND_ALLOW_LOOPBACK). */
export interface OutboundPolicy {
  allowLoopback: boolean;
  /**
   * Names answered without DNS, as curl's --resolve (OUTBOUND_RESOLVE): host (lower case, no
   * trailing dot) → address. The address is judged like any other; only the lookup is skipped.
   */
  resolve?: ReadonlyMap<string, string>;
}

/** The address a name is statically resolved to by the policy, if any. */
export function staticAddress(host: string, policy: OutboundPolicy): string | undefined {
  return policy.resolve?.get(host.toLowerCase().replace(/\.$/, ''));
}

/**
 * The addresses let through besides public unicast ones, when loopback is allowed: these two
 * exactly, not their other spellings (`::ffff:127.0.0.1`, `::127.0.0.1`) nor the rest of 127/8.
 */
export const loopbackAddresses = ['127.0.0.1', '::1'];

/**
 * IPv4-compatible IPv6 (::/96 but :: and ::1, RFC 4291 §2.5.5.1, deprecated): ipaddr.js calls it
 * unicast, but a host may route it to the IPv4 address it carries (`::127.0.0.1`, `::7f00:1`).
 */
const IPV4_COMPATIBLE = ipaddr.parseCIDR('::/96') as [ipaddr.IPv6, number];

/**
 * Why an address may not be connected to (the name of its special-purpose range), or null when it
 * may: public unicast only. Every range ipaddr.js's `range()` names other than `unicast` is
 * refused (private, loopback, link-local with the cloud metadata service, carrier-grade NAT,
 * multicast, reserved, documentation, NAT64, 6to4, Teredo, …), in both families, and an IPv6
 * address carrying an IPv4 one (mapped or compatible) whatever that address is. The one judge of
 * addresses: at endpoint creation (refuseTarget) and on every connection (./agents.ts).
 */
export function refusedRange(address: string, policy: OutboundPolicy): string | null {
  if (!ipaddr.isValid(address)) return 'not an IP address';
  // ipaddr.js reads the dotted form `::a.b.c.d` as mapped (`::ffff:a.b.c.d`): refused either way.
  // URLs and DNS answers come canonical (`[::127.0.0.1]` is `[::7f00:1]`), judged as ::/96 below.
  const parsed = ipaddr.parse(address);
  if (policy.allowLoopback && loopbackAddresses.includes(parsed.toString())) return null;
  const range = parsed.range();
  if (range !== 'unicast') return range;
  if (parsed.kind() === 'ipv6' && parsed.match(IPV4_COMPATIBLE)) return 'ipv4Compatible';
  return null;
}

/**
 * Why a URL cannot be requested whatever its host resolves to, or null: http(s) as the WHATWG
 * parser reads the scheme (so `HTTPS:` is https), no user:password@, and a port other than 0
 * (Node would send a request for port 0 to the scheme's default port instead).
 */
export function refuseUrl(url: URL): string | null {
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'must be an https URL';
  if (url.username !== '' || url.password !== '') return 'must not contain user:password@';
  if (url.port === '0') return 'must not use port 0';
  return null;
}

/** The host of a parsed URL as an address or name: IPv6 literals without their brackets. */
export const hostOf = (url: URL) => url.hostname.replace(/^\[|\]$/g, '');

/** The refusal of an address that is not public, naming the setting that admits loopback. */
export function addressRefusal(policy: OutboundPolicy, loopback: boolean): string {
  if (policy.allowLoopback) return 'must resolve to public or loopback addresses only';
  return loopback
    ? 'must resolve to public addresses only (loopback is allowed only when the server runs with OUTBOUND_ALLOW_LOOPBACK=true, for local development)'
    : 'must resolve to public addresses only (not private, loopback, link-local or metadata)';
}

/**
 * Why a URL cannot be a webhook target, or null when it can; `url` is then the normalised URL to
 * store (checked again on every connection).
 */
export async function judgeTarget(raw: string, policy: OutboundPolicy): Promise<{ refused: string } | { refused: null; url: string }> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { refused: 'must be an absolute URL' };
  }
  const bad = refuseUrl(url);
  if (bad) return { refused: bad };
  const host = hostOf(url);
  let addresses: string[];
  const fixed = staticAddress(host, policy);
  if (isIP(host)) addresses = [host];
  else if (fixed !== undefined) addresses = [fixed];
  else {
    try {
      addresses = (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);
    } catch {
      return { refused: `host ${host} does not resolve` };
    }
  }
  const ranges = addresses.map((a) => refusedRange(a, policy));
  if (addresses.length === 0 || ranges.some((r) => r !== null)) return { refused: addressRefusal(policy, ranges.includes('loopback')) };
  const loopbackOnly = addresses.every((a) => loopbackAddresses.includes(ipaddr.parse(a).toString()));
  if (url.protocol === 'http:' && !(policy.allowLoopback && loopbackOnly)) return { refused: 'must be an https URL' };
  return { refused: null, url: url.href };
}

/** Why a URL cannot be a webhook target, or null when it can. */
export async function refuseTarget(raw: string, policy: OutboundPolicy): Promise<string | null> {
  return (await judgeTarget(raw, policy)).refused;
}
