import dns from 'node:dns';
import type http from 'node:http';
import type https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { RequestFilteringHttpAgent, RequestFilteringHttpsAgent } from 'request-filtering-agent';
import { loopbackAddresses, type OutboundPolicy, staticAddress } from './address-policy.js';

export interface OutboundAgents {
  http: http.Agent;
  https: https.Agent;
}

/**
 * The only place outbound connections are made from: every request the service sends to a
 * user-supplied URL goes through these agents. request-filtering-agent judges the address each
 * connection actually goes to: a literal in the URL before connecting, a name through the lookup
 * it wraps, so a name resolved to a private or metadata address is refused however it was checked
 * before. The policy's static names are answered by that same wrapped lookup, so their addresses
 * are judged like DNS answers.
 */
export function createAgents(policy: OutboundPolicy): OutboundAgents {
  const options = {
    keepAlive: true,
    maxSockets: 16,
    allowIPAddressList: policy.allowLoopback ? loopbackAddresses : [],
    // Agent options override the request's own when the socket is created, so every request
    // through these agents uses this lookup.
    ...(policy.resolve?.size ? { lookup: staticLookup(policy) } : {}),
  };
  return { http: new RequestFilteringHttpAgent(options), https: new RequestFilteringHttpsAgent(options) };
}

function staticLookup(policy: OutboundPolicy): LookupFunction {
  return (hostname, options, callback) => {
    const address = staticAddress(hostname, policy);
    if (address === undefined) {
      // @types/node splits dns.lookup's callback by `all`; net's LookupFunction is the union.
      dns.lookup(hostname, options, callback as (err: NodeJS.ErrnoException | null, address: string | dns.LookupAddress[], family: number) => void);
      return;
    }
    const family = isIP(address);
    // net calls lookups asynchronously; answering in the same tick would run its callbacks early.
    process.nextTick(() => {
      if (options.all) callback(null, [{ address, family }]);
      else callback(null, address, family);
    });
  };
}
