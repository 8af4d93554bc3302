import { z } from 'zod';
import { topUpWorkspace } from '../../domain/workspaces/top-up.js';
import { createWorkspace, setApprovalRules } from '../../domain/workspaces/workspace-service.js';
import { cents, centsOrNone, httpUrl, id, name, positiveCents, readFlags, trueOrFalse } from '../args.js';
import type { Commands } from '../registry.js';

const currency = z.string().trim().regex(/^[A-Za-z]{3}$/, 'must be a three-letter currency code');

export const workspaceCommands: Commands = {
  'workspace create': async ({ db }, raw) => {
    const f = readFlags(
      z.object({
        name,
        currency: currency.optional(),
        'balance-cents': cents.optional(),
        'owner-first-name': name.optional(),
        'owner-last-name': name.optional(),
        'owner-email': z.email('must be an e-mail address').optional(),
        username: name.optional(),
        'avatar-url': httpUrl.optional(),
        'cover-url': httpUrl.optional(),
      }).strict(),
      raw,
    );
    return createWorkspace(db, {
      name: f.name,
      ...(f.currency ? { currency: f.currency } : {}),
      ...(f['balance-cents'] !== undefined ? { balanceCents: f['balance-cents'] } : {}),
      ...(f['owner-first-name'] ? { ownerFirstName: f['owner-first-name'] } : {}),
      ...(f['owner-last-name'] ? { ownerLastName: f['owner-last-name'] } : {}),
      ...(f['owner-email'] ? { ownerEmail: f['owner-email'] } : {}),
      ...(f.username ? { username: f.username } : {}),
      ...(f['avatar-url'] ? { avatarUrl: f['avatar-url'] } : {}),
      ...(f['cover-url'] ? { coverUrl: f['cover-url'] } : {}),
    });
  },

  'workspace top-up': async ({ db }, raw) => {
    const f = readFlags(z.object({ workspace: id, cents: positiveCents }).strict(), raw);
    const r = await topUpWorkspace(db, f.workspace, f.cents, Date.now());
    return { balance_cents: r.balance };
  },

  'workspace rules': async ({ db }, raw) => {
    const f = readFlags(
      z.object({
        workspace: id,
        'max-order-cents': centsOrNone.optional(),
        'approval-above-cents': centsOrNone.optional(),
        'auto-approve-drafts': trueOrFalse.optional(),
      }).strict(),
      raw,
    );
    return setApprovalRules(db, f.workspace, {
      ...(f['max-order-cents'] !== undefined ? { maxOrderCents: f['max-order-cents'] } : {}),
      ...(f['approval-above-cents'] !== undefined ? { approvalAboveCents: f['approval-above-cents'] } : {}),
      ...(f['auto-approve-drafts'] !== undefined ? { autoApproveDrafts: f['auto-approve-drafts'] } : {}),
    });
  },
};
