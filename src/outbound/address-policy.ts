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
 * The addresses the connect-time check lets through besides public unicast ones, when loopback is
 * allowed. Single addresses, not ranges: request-filtering-agent matches a CIDR of one family
 * against an address of the other by throwing and logging a warning on every such connection.
 */
export const loopbackAddresses = ['127.0.0.1', '::1'];

/**
 * Whether a literal address is one a user-supplied URL may reach: public unicast only. Private,
 * loopback, link-local (cloud metadata at 169.254.169.254), carrier-grade NAT, multicast, reserved
 * and unspecified addresses are refused; IPv4-mapped IPv6 is judged as the IPv4 address it carries.
 */
export function isAllowedAddress(address: string, policy: OutboundPolicy): boolean {
  if (!ipaddr.isValid(address)) return false;
  const parsed = ipaddr.process(address);
  return parsed.range() === 'unicast' || (policy.allowLoopback && loopbackAddresses.includes(parsed.toString()));
}

/** Why a URL cannot be a webhook target, or null when it can (checked again on every connection). */
export async function refuseTarget(raw: string, policy: OutboundPolicy): Promise<string | null> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'must be an absolute URL';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'must be an https URL';
  if (url.username !== '' || url.password !== '') return 'must not contain user:password@';
  const host = url.hostname.replace(/^\[|\]$/g, '');
  let addresses: string[];
  const fixed = staticAddress(host, policy);
  if (isIP(host)) addresses = [host];
  else if (fixed !== undefined) addresses = [fixed];
  else {
    try {
      addresses = (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);
    } catch {
      return `host ${host} does not resolve`;
    }
  }
  if (addresses.length === 0 || !addresses.every((a) => isAllowedAddress(a, policy))) {
    return policy.allowLoopback
      ? 'must resolve to public or loopback addresses only'
      : 'must resolve to public addresses only (not private, loopback, link-local or metadata)';
  }
  const loopbackOnly = addresses.every((a) => ipaddr.process(a).range() === 'loopback');
  if (url.protocol === 'http:' && !(policy.allowLoopback && loopbackOnly)) return 'must be an https URL';
  return null;
}
