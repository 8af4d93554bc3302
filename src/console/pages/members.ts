import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { memberRoles } from '../../common/enums.js';
import { consoleBaseUrl } from '../../config.js';
import { DomainError, type FieldErrors, forbidden, notFound } from '../../domain/errors.js';
import { endMembership } from '../../domain/accounts/membership-end.js';
import { listKeysMadeBy } from '../../domain/keys/key-service.js';
import type { FailureLimiter } from '../../domain/limits/failure-limiter.js';
import { createInvitation, listPendingInvitations } from '../../domain/users/invitations.js';
import { changeRole, listMembers, type Target } from '../../domain/users/memberships.js';
import { can } from '../../domain/users/permissions.js';
import { exactTime, moment } from '../format.js';
import { type ConsoleDeps, type ConsoleTarget, page, pathId, targetOf } from '../context.js';
import type { Views } from '../view-models.js';
import { type Form, formText } from '../form.js';

// Settings → Members: who belongs to this workspace or publisher account and with which role;
// owners invite (the link mailed to the address and shown to copy), change roles and remove. Every rule (only owners, the
// last owner stays) is the domain's: this file only shows its answers.

const targetKey = (t: ConsoleTarget): Target => (t.kind === 'workspace' ? { workspaceId: t.id } : { publisherId: t.id });
const ROLE_HELP = 'Owner: everything (spending keys, approval rules, webhooks, members). Member: orders and read-only keys. Viewer: reads.';

function baseUrl(deps: ConsoleDeps, request: FastifyRequest) {
  return (deps.config.PUBLIC_BASE_URL ?? `${request.protocol}://${request.host}`).replace(/\/$/, '');
}

/** An id from the path; anything else is a member that does not exist. */
function userIdParam(request: FastifyRequest): number {
  return pathId((request.params as { userId: string }).userId, 'Member');
}

/** The domain's refusals a person can act on are shown on the page itself, not as an error page. */
const shownOnPage = (err: unknown): err is DomainError =>
  err instanceof DomainError && (err.code === 'invalid_input' || err.code === 'conflict');

function hours(seconds: number) {
  const h = Math.ceil(seconds / 3600);
  return h <= 1 ? 'an hour' : `${h} hours`;
}

export async function memberPages(app: FastifyInstance, { deps, invitations: limit }: { deps: ConsoleDeps; invitations: FailureLimiter }) {
  const listPage = async (request: FastifyRequest, reply: FastifyReply, data: Partial<Views['members']> = {}) => {
    const target = targetOf(request);
    const me = request.consoleUser!;
    const manage = can(target.role, 'manage_members');
    const [members, invitations] = await Promise.all([
      listMembers(deps.pool, targetKey(target)),
      manage ? listPendingInvitations(deps.pool, targetKey(target), deps.clock) : Promise.resolve([]),
    ]);
    const now = deps.clock.now();
    const query = (request.query ?? {}) as Record<string, unknown>;
    const revoked = Number(query.keys_revoked) || 0;
    const removedNotice = revoked > 0 ? `Member removed, and the ${revoked === 1 ? 'key' : `${revoked} keys`} they made revoked.` : 'Member removed.';
    const notice = query.changed ? 'Role changed.' : query.removed ? removedNotice : undefined;
    return page(request, reply, 'members', {
      title: 'Members',
      ...(notice ? { notice } : {}),
      section: 'members',
      base: `${target.href}/settings/members`,
      manage,
      roles: memberRoles,
      roleHelp: ROLE_HELP,
      members: members.map((m) => ({ ...m, since: moment(m.since, now), you: m.userId === me.id })),
      invitations: invitations.map((i) => ({ ...i, expires: moment(i.expiresAt, now) })),
      ...data,
    });
  };

  app.get('/settings/members', async (request, reply) => listPage(request, reply));

  app.post('/settings/members/invite', async (request, reply) => {
    const target = targetOf(request);
    const form = (request.body ?? {}) as Form;
    const email = formText(form, 'email');
    const role = formText(form, 'role');
    if (!can(target.role, 'manage_members')) throw forbidden('Only an owner can invite people.');
    // Counted before it is made, so invitations sent at once cannot pass the limit together;
    // given back when it is refused.
    const key = `${target.kind}:${target.id}`;
    const counted = await limit.fail(key);
    if (counted.blocked) {
      await limit.forgive(key);
      reply.code(429).header('retry-after', String(counted.retryAfterSeconds));
      return listPage(request, reply, {
        form: { email, role },
        problem: `Nobody was invited: this ${target.kindLabel.toLowerCase()} has sent ${limit.points} invitations in the last 24 hours. Try again in ${hours(counted.retryAfterSeconds)}.`,
      });
    }
    try {
      const invitation = await createInvitation(deps.pool, request.consoleUser!.id, targetKey(target), email, role as never, deps.clock, {
        mailVia: { baseUrl: consoleBaseUrl(deps.config) },
      });
      // The link is a secret until it is used: no cache keeps this page.
      reply.header('cache-control', 'no-store');
      return page(request, reply, 'invite-link', {
        title: 'Invitation link',
        section: 'members',
        invitation: { email: invitation.email, role: invitation.role, expires: exactTime(invitation.expiresAt), mailed: invitation.mailed },
        link: `${baseUrl(deps, request)}/app/invitation?token=${invitation.token}`,
        back: `${target.href}/settings/members`,
      });
    } catch (err) {
      await limit.forgive(key);
      if (!shownOnPage(err)) throw err;
      reply.code(err.code === 'conflict' ? 409 : 422);
      return listPage(request, reply, {
        form: { email, role },
        errors: (err.details.errors ?? {}) as FieldErrors,
        problem: `Nobody was invited: ${err.message}`,
      });
    }
  });

  app.post('/settings/members/:userId/role', async (request, reply) => {
    const target = targetOf(request);
    const userId = userIdParam(request);
    const role = formText((request.body ?? {}) as Form, 'role');
    try {
      const member = await changeRole(deps.pool, targetKey(target), userId, role as never, { actorId: request.consoleUser!.id });
      return reply.redirect(`${target.href}/settings/members?changed=${member.userId}`, 303);
    } catch (err) {
      if (!shownOnPage(err)) throw err;
      reply.code(err.code === 'conflict' ? 409 : 422);
      // The role sits in each member's row, not in a form with fields of its own: the problem names it.
      const fields = Object.entries((err.details.errors ?? {}) as FieldErrors).map(([field, messages]) => `${field} ${messages.join('; ')}`);
      return listPage(request, reply, { problem: `The role was not changed: ${fields.length ? fields.join('. ') : err.message}` });
    }
  });

  const memberOf = async (request: FastifyRequest) => {
    const target = targetOf(request);
    const userId = userIdParam(request);
    const member = (await listMembers(deps.pool, targetKey(target))).find((m) => m.userId === userId);
    if (!member) throw notFound('Member');
    return member;
  };

  // Removing someone (or leaving) ends the apps they connected to the workspace; the keys they
  // made stay the workspace's unless the remover ticks "Also revoke their keys" (ticked by
  // default: a person who is gone may still hold them). Leaving offers no such choice.
  app.get('/settings/members/:userId/remove', async (request, reply) => {
    const target = targetOf(request);
    const member = await memberOf(request);
    const you = member.userId === request.consoleUser!.id;
    const back = `${target.href}/settings/members`;
    const keys = you || !can(target.role, 'manage_members') ? [] : await listKeysMadeBy(deps.pool, targetKey(target), member.userId, deps.clock);
    return page(request, reply, 'member-remove', {
      title: you ? 'Leave' : `Remove ${member.name}`,
      section: 'members',
      member,
      you,
      apps: target.kind === 'workspace',
      keys: keys.map((k) => ({ name: k.name, prefix: k.prefix, spends: k.can_place_orders, created: moment(k.created_at, deps.clock.now()) })),
      back,
      action: `${back}/${member.userId}/remove`,
    });
  });

  app.post('/settings/members/:userId/remove', async (request, reply) => {
    const target = targetOf(request);
    const member = await memberOf(request);
    const you = member.userId === request.consoleUser!.id;
    let keysRevoked = 0;
    try {
      const revokeKeys = !you && formText((request.body ?? {}) as Form, 'revoke_keys') !== '';
      ({ keysRevoked } = await endMembership(deps.pool, targetKey(target), member.userId, { actorId: request.consoleUser!.id, revokeKeys }, deps.clock));
    } catch (err) {
      if (!shownOnPage(err)) throw err;
      reply.code(err.code === 'conflict' ? 409 : 422);
      return listPage(request, reply, { problem: err.message });
    }
    // Someone who left has no page here any more.
    if (you) return reply.redirect('/app', 303);
    return reply.redirect(`${target.href}/settings/members?removed=1${keysRevoked ? `&keys_revoked=${keysRevoked}` : ''}`, 303);
  });
}
