import { z } from 'zod';
import { createKey, revokeKey, updateKey } from '../../domain/keys/key-service.js';
import { CliError, flag, id, instantOrNone, name, readFlags, trueOrFalse, usdOrNone } from '../args.js';
import type { Commands } from '../registry.js';

/** A spending key's budget and expiry (docs/budgets.md); each also takes `none`. */
const budgetFlags = {
  'order-limit-usd': usdOrNone.optional(),
  'daily-limit-usd': usdOrNone.optional(),
  'monthly-limit-usd': usdOrNone.optional(),
  expires: instantOrNone.optional(),
};

const budgetOf = (f: { 'order-limit-usd'?: number | null; 'daily-limit-usd'?: number | null; 'monthly-limit-usd'?: number | null }) => ({
  orderLimitCents: f['order-limit-usd'],
  dailyLimitCents: f['daily-limit-usd'],
  monthlyLimitCents: f['monthly-limit-usd'],
});

function futureOrNone(expires: Date | null | undefined) {
  if (expires && !(expires.getTime() > Date.now())) throw new CliError('--expires: must be in the future');
  return expires;
}

export const keyCommands: Commands = {
  'key create': async ({ db }, raw) => {
    const f = readFlags(
      z.object({ workspace: id.optional(), publisher: id.optional(), name: name.optional(), 'can-place-orders': flag, 'needs-approval': flag, ...budgetFlags }).strict(),
      raw,
    );
    if ((f.workspace === undefined) === (f.publisher === undefined)) throw new CliError('give exactly one of --workspace or --publisher');
    const limits = budgetOf(f);
    const given = Object.entries({ 'order-limit-usd': limits.orderLimitCents, 'daily-limit-usd': limits.dailyLimitCents, 'monthly-limit-usd': limits.monthlyLimitCents }).find(
      ([, v]) => v !== undefined && v !== null,
    );
    if (given && !f['can-place-orders']) throw new CliError(`--${given[0]}: a budget is for a spending key (add --can-place-orders)`);
    if (f['needs-approval'] && !f['can-place-orders']) {
      throw new CliError(`--needs-approval: is for a spending key (${f.publisher !== undefined ? 'publisher keys cannot spend' : 'add --can-place-orders'})`);
    }
    const expiresAt = futureOrNone(f.expires) ?? null;
    if (f.publisher !== undefined) {
      if (f['can-place-orders']) throw new CliError('--can-place-orders: publisher keys cannot spend');
      const k = await createKey(db, { publisherId: f.publisher, expiresAt, ...(f.name ? { name: f.name } : {}) });
      return { id: k.id, key: k.key, prefix: k.prefix };
    }
    return createKey(db, {
      workspaceId: f.workspace!,
      canPlaceOrders: Boolean(f['can-place-orders']),
      needsApproval: Boolean(f['needs-approval']),
      expiresAt,
      limits,
      ...(f.name ? { name: f.name } : {}),
    });
  },

  'key update': async ({ db }, raw) => {
    const changeFlags = { ...budgetFlags, 'needs-approval': trueOrFalse.optional() };
    const f = readFlags(z.object({ id, ...changeFlags }).strict(), raw);
    if (Object.keys(changeFlags).every((k) => f[k as keyof typeof changeFlags] === undefined)) {
      throw new CliError(`give at least one of ${Object.keys(changeFlags).map((k) => `--${k}`).join(', ')}`);
    }
    futureOrNone(f.expires);
    return updateKey(db, f.id, {
      ...budgetOf(f),
      ...(f.expires !== undefined ? { expiresAt: f.expires } : {}),
      ...(f['needs-approval'] !== undefined ? { needsApproval: f['needs-approval'] } : {}),
    });
  },

  'key revoke': async ({ db }, raw) => {
    const f = readFlags(z.object({ id }).strict(), raw);
    return revokeKey(db, f.id);
  },
};
