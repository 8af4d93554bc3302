import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import type { FastifyBaseLogger } from 'fastify';
import type { WorkspacePrincipal } from '../domain/keys/principal.js';

/** Who sent an MCP request, as the bearer hook resolved the key, and the request's own id and log. */
export interface Caller {
  principal: WorkspacePrincipal;
  requestId: string;
  log: FastifyBaseLogger;
}

/**
 * The caller as the SDK's `authInfo`, which reaches every handler as `extra.authInfo`. `token`
 * holds the key's public prefix, not the secret: the key was checked before the SDK saw the
 * request, and an object that never holds the secret cannot leak it into a log.
 */
export function callerAuthInfo(caller: Caller): AuthInfo {
  const { principal } = caller;
  return { token: principal.prefix, clientId: String(principal.keyId), scopes: principal.abilities, extra: { caller } };
}

/** The caller back from a handler's `extra`; only this route's transport calls handlers. */
export function callerOf(extra: { authInfo?: AuthInfo | undefined }): Caller {
  const caller = extra.authInfo?.extra?.caller as Caller | undefined;
  if (!caller) throw new Error('An MCP request reached a handler without its caller.');
  return caller;
}
