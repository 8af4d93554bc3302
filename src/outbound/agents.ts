import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { type OutboundPolicy, refusedRange, staticAddress } from './address-policy.js';

export interface OutboundAgents {
  http: http.Agent;
  https: https.Agent;
}

type Connect = (err: Error | null, stream: Duplex) => void;

/**
 * The only place outbound connections are made from: every request the service sends to a
 * user-supplied URL goes through these agents. They judge the address each connection actually
 * goes to with the same function endpoint creation uses (refusedRange): a literal in the URL
 * before connecting, a name through the lookup they wrap, so a name resolved to a private or
 * metadata address is refused however it was checked before. The policy's static names are
 * answered by that same wrapped lookup, so their addresses are judged like DNS answers.
 */
export function createAgents(policy: OutboundPolicy): OutboundAgents {
  const options = { keepAlive: true, maxSockets: 16 };
  const lookup = guardedLookup(policy, staticLookup(policy));
  return {
    http: new (class extends http.Agent {
      override createConnection(o: http.ClientRequestArgs, done?: Connect) {
        return guardedConnection(policy, lookup, o, done, (checked, cb) => super.createConnection(checked, cb));
      }
    })(options),
    https: new (class extends https.Agent {
      override createConnection(o: https.RequestOptions, done?: Connect) {
        return guardedConnection(policy, lookup, o, done, (checked, cb) => super.createConnection(checked, cb));
      }
    })(options),
  };
}

/**
 * A refused address. The message reads as request-filtering-agent's did ("DNS lookup ADDRESS(…) is
 * not allowed"), which the fetchers' error reports recognise.
 */
export class RefusedAddress extends Error {
  readonly code = 'EADDRNOTALLOWED';
  constructor(
    readonly address: string,
    family: number | string | undefined,
    host: string,
    /** The special-purpose range it is in, as refusedRange names it. */
    readonly range: string,
  ) {
    super(`DNS lookup ${address}(family:${family ?? isIP(address)}, host:${host}) is not allowed: a ${range} address.`);
  }
}

function guardedConnection<O extends http.ClientRequestArgs>(
  policy: OutboundPolicy,
  lookup: LookupFunction,
  options: O,
  done: Connect | undefined,
  connect: (options: O, done?: Connect) => Duplex | null | undefined,
): Duplex | null | undefined {
  // A literal address is connected to without a lookup: judge it here.
  const host = options.host ?? options.hostname ?? '';
  const range = isIP(host) ? refusedRange(host, policy) : null;
  if (range !== null) {
    const error = new RefusedAddress(host, undefined, host, range);
    const socket = new Socket();
    if (done) done(error, socket);
    else socket.destroy(error);
    return socket;
  }
  return connect({ ...options, lookup }, done);
}

/** `base`, refusing every answer the policy refuses (all of them when any is: no partial answers). */
function guardedLookup(policy: OutboundPolicy, base: LookupFunction): LookupFunction {
  return (hostname, options, callback) => {
    base(hostname, options, (err, address, family) => {
      if (err) return callback(err, address, family);
      const answers = typeof address === 'string' ? [{ address, family }] : address;
      for (const a of answers) {
        const range = refusedRange(a.address, policy);
        if (range !== null) return callback(new RefusedAddress(a.address, a.family, hostname, range), '', 0);
      }
      callback(null, address, family);
    });
  };
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
