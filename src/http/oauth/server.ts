import type { IncomingMessage, ServerResponse } from 'node:http';
import type pg from 'pg';
import { DomainError } from '../../domain/errors.js';
import type { KeyResolver } from '../../domain/keys/key-resolver.js';
import type { WorkspacePrincipal } from '../../domain/keys/principal.js';
import { grantRevoked, withinTokenScope } from '../../domain/oauth/grants.js';
import type { OAuthInteractions } from '../../domain/oauth/interactions.js';
import type { OutboundClient } from '../../outbound/http-client.js';
import { createProvider, type OAuthProvider, type OAuthUrls } from './provider.js';

export interface OAuthServerDeps {
  urls: OAuthUrls;
  pool: pg.Pool;
  outbound: OutboundClient;
  resolver: KeyResolver;
  onServerError(err: unknown): void;
}

export interface OAuthServer {
  urls: OAuthUrls;
  /** The provider, made on first use (its keys are read from, or first written to, the database). */
  provider(): Promise<OAuthProvider>;
  interactions: OAuthInteractions;
  /** The workspace principal an access token stands for, or null (unknown, expired, another audience, revoked grant). */
  principalFor(token: string): Promise<WorkspacePrincipal | null>;
}

const gone = () => new DomainError('not_found', 'This sign-in request has ended or does not exist. Go back to the app and connect again.');

export function createOAuthServer(deps: OAuthServerDeps): OAuthServer {
  let made: Promise<OAuthProvider> | undefined;
  const provider = () => {
    made ??= createProvider({
      urls: deps.urls,
      pool: deps.pool,
      outbound: deps.outbound,
      onGrantRevoked: (grantId) => grantRevoked(deps.pool, grantId),
      onServerError: deps.onServerError,
    }).catch((err: unknown) => {
      made = undefined;
      throw err;
    });
    return made;
  };

  /** The interaction of this browser (its cookie), which must be the one the page's URL names. */
  async function interaction(req: IncomingMessage, res: ServerResponse, uid: string) {
    const p = await provider();
    let found;
    try {
      found = await p.interactionDetails(req, res);
    } catch {
      throw gone();
    }
    if (found.uid !== uid) throw gone();
    return { p, found };
  }

  const interactions: OAuthInteractions = {
    async consentRequest(req, res, uid) {
      const { p, found } = await interaction(req, res, uid);
      const clientId = String(found.params.client_id);
      const client = await p.Client.find(clientId);
      if (!client) throw gone();
      const redirect = new URL(String(found.params.redirect_uri));
      const scopes = String(found.params.scope ?? '').split(' ');
      return {
        uid,
        clientId,
        clientName: client.clientName ?? clientId,
        clientSource: (client as unknown as { clientIdMetadataDocument?: boolean }).clientIdMetadataDocument ? 'metadata_document' : 'registration',
        redirectTarget: redirect.origin !== 'null' ? redirect.origin : redirect.protocol,
        wantsSpend: scopes.includes('spend'),
        returnTo: found.returnTo,
      };
    },
    async saveGrant(req, res, uid, userId, spend) {
      const { p, found } = await interaction(req, res, uid);
      const grant = new p.Grant({ accountId: String(userId), clientId: String(found.params.client_id) });
      const asked = String(found.params.scope ?? '').split(' ').filter(Boolean);
      const allowed = ['openid', 'offline_access', 'read', ...(spend ? ['spend'] : [])];
      // The provider checks requested scopes against the grant's OpenID scopes and the token's
      // against its resource scopes: both get what the person allowed; a `spend` not allowed is
      // rejected, not left pending, so the server asks no more.
      grant.addOIDCScope(asked.filter((s) => allowed.includes(s)).join(' ') || 'read');
      grant.addResourceScope(deps.urls.resource, spend ? 'read spend' : 'read');
      if (!spend) {
        grant.rejectOIDCScope('spend');
        grant.rejectResourceScope(deps.urls.resource, 'spend');
      }
      return grant.save();
    },
    async finish(req, res, uid, userId, grantId) {
      const { p } = await interaction(req, res, uid);
      return p.interactionResult(req, res, { login: { accountId: String(userId) }, consent: { grantId } }, { mergeWithLastSubmission: false });
    },
    async deny(req, res, uid) {
      const { p } = await interaction(req, res, uid);
      return p.interactionResult(req, res, { error: 'access_denied', error_description: 'The person denied the request.' }, { mergeWithLastSubmission: false });
    },
  };

  return {
    urls: deps.urls,
    provider,
    interactions,
    async principalFor(token) {
      const p = await provider();
      const access = await p.AccessToken.find(token);
      // RFC 8707: only a token minted for this resource is accepted here.
      if (!access || access.aud !== deps.urls.resource || !access.grantId) return null;
      const principal = await deps.resolver.resolveGrant(access.grantId);
      if (!principal || principal.workspaceId === null) return null;
      // The grant says what the person allowed; the token may hold less of it (a narrowed refresh).
      return withinTokenScope(principal as WorkspacePrincipal, access.scope ?? '');
    },
  };
}

