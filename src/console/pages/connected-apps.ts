import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { oauthBase } from '../../config.js';
import { notFound } from '../../domain/errors.js';
import { formatCents } from '../../domain/money/format.js';
import { findGrant, type GrantListing, listGrants, revokeGrant } from '../../domain/oauth/grants.js';
import { can } from '../../domain/users/permissions.js';
import { type ConsoleDeps, type ConsoleTarget, page, pathId, targetOf } from '../context.js';
import type { Views } from '../view-models.js';
import { moment } from '../format.js';

const STATES: Record<GrantListing['state'], string> = { active: 'Active', expiring: 'Expiring soon', expired: 'Expired', revoked: 'Revoked' };
const usd = (cents: number | null) => (cents === null ? null : formatCents(cents, 'USD', 1));

/** A grant that may spend is an owner's to revoke, as a spending key is; members revoke read-only ones. */
const mayRevoke = (target: ConsoleTarget, grant: GrantListing) => can(target.role, grant.can_place_orders ? 'manage_spending_keys' : 'manage_read_only_keys');

function budgetText(g: GrantListing) {
  if (!g.can_place_orders) return '';
  const parts = [
    usd(g.order_limit_cents) && `${usd(g.order_limit_cents)} per order`,
    usd(g.daily_limit_cents) && `${usd(g.daily_limit_cents)} a day`,
    usd(g.monthly_limit_cents) && `${usd(g.monthly_limit_cents)} a month`,
  ].filter(Boolean);
  return parts.length ? parts.join(', ') : 'No limit';
}

/**
 * Settings → Connected apps (docs/oauth.md): the apps people connected to this workspace through
 * OAuth, each a grant, with Revoke behind a confirmation page.
 */
export async function connectedAppPages(app: FastifyInstance, { deps }: { deps: ConsoleDeps }) {
  const base = (t: ConsoleTarget) => `${t.href}/settings/connected-apps`;
  // Where apps connect, or why they cannot: said on the page rather than a bare "No connected apps".
  const at = oauthBase(deps.config);
  const oauth = deps.oauth && 'url' in at ? { url: `${at.url}/mcp/oauth` } : { off: 'off' in at ? at.off : 'OAuth is not configured' };

  const listPage = async (request: FastifyRequest, reply: FastifyReply, data: Partial<Views['connected-apps']> = {}) => {
    const target = targetOf(request);
    const grants = await listGrants(deps.pool, target.id, deps.clock);
    const now = deps.clock.now();
    return page(request, reply, 'connected-apps', {
      title: 'Connected apps',
      section: 'connected-apps',
      base: base(target),
      oauth,
      grants: grants.map((g) => ({
        id: g.id,
        client: g.client_name,
        clientId: g.client_id,
        grantedBy: g.granted_by ?? '',
        scope: !g.can_place_orders ? 'read' : g.needs_approval ? "read, spend (each order waits for a person's approval)" : 'read, spend',
        budget: budgetText(g),
        created: moment(g.created_at, now),
        lastUsed: moment(g.last_used_at, now, 'Never'),
        expires: moment(g.expires_at, now, 'Never'),
        state: STATES[g.state],
        revocable: g.state !== 'revoked' && g.state !== 'expired' && mayRevoke(target, g),
      })),
      ...data,
    });
  };

  /** A grant of this workspace the person may revoke; else 404 (as for one that does not exist). */
  const grantOf = async (request: FastifyRequest) => {
    const target = targetOf(request);
    if (target.kind !== 'workspace') throw notFound('Connected app');
    const id = pathId((request.params as { grantId: string }).grantId, 'Connected app');
    const grant = await findGrant(deps.pool, target.id, id, deps.clock);
    if (!mayRevoke(target, grant)) throw notFound('Connected app');
    return grant;
  };

  app.get('/settings/connected-apps', async (request, reply) => {
    if (targetOf(request).kind !== 'workspace') throw notFound('Page');
    return listPage(request, reply);
  });

  app.get('/settings/connected-apps/:grantId/revoke', async (request, reply) => {
    const target = targetOf(request);
    const grant = await grantOf(request);
    return page(request, reply, 'connected-app-revoke', {
      title: `Revoke ${grant.client_name}`,
      section: 'connected-apps',
      grant: { name: grant.client_name, clientId: grant.client_id },
      back: base(target),
      action: `${base(target)}/${grant.id}/revoke`,
    });
  });

  app.post('/settings/connected-apps/:grantId/revoke', async (request, reply) => {
    const target = targetOf(request);
    const grant = await grantOf(request);
    await revokeGrant(deps.pool, target.id, grant.id, deps.clock);
    return listPage(request, reply, { notice: `Revoked ${grant.client_name}: its tokens stop working within five seconds.` });
  });
}
