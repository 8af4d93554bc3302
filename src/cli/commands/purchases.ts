import { z } from 'zod';
import {
  createPurchase,
  DEFAULT_SUPPORT_MONTHS,
  markDownloaded,
  refundPurchase,
} from '../../domain/catalog/catalog-writes.js';
import { generatePurchases } from '../../demo/purchase-generator.js';
import { DomainError } from '../../domain/errors.js';
import { CliError, flag, id, readFlags, str, wholeNumber } from '../args.js';
import type { Commands } from '../registry.js';

const MAX_GENERATE = 1_000_000;

export const purchaseCommands: Commands = {
  'purchase create': async ({ pool }, raw) => {
    const f = readFlags(
      z
        .object({
          item: id,
          license: z.enum(['regular', 'extended'], { error: 'must be regular or extended' }).default('regular'),
          'support-months': wholeNumber(1, 120).optional(),
          'no-support': flag,
        })
        .strict(),
      raw,
    );
    if (f['no-support'] && f['support-months'] !== undefined) throw new CliError('give at most one of --support-months or --no-support');
    const supportMonths = f['no-support'] ? null : (f['support-months'] ?? DEFAULT_SUPPORT_MONTHS);
    return createPurchase(pool, { itemId: f.item, license: f.license, supportMonths });
  },

  'purchase generate': async ({ pool, progress }, raw) => {
    const f = readFlags(
      z.object({ item: id, count: wholeNumber(1, MAX_GENERATE), seed: wholeNumber(0, 2_147_483_647).default(1) }).strict(),
      raw,
    );
    const shown = progress('purchase generate', f.count);
    try {
      return await generatePurchases(pool, { itemId: f.item, count: f.count, seed: f.seed }, (n) => shown.add(n));
    } finally {
      shown.done();
    }
  },

  'purchase download': async ({ pool }, raw) => {
    const f = readFlags(z.object({ code: str }).strict(), raw);
    try {
      return await markDownloaded(pool, f.code);
    } catch (err) {
      // The one refusal that is not a missing code still names the flag, as every other line does.
      if (err instanceof DomainError && err.code === 'conflict') throw new CliError(`--code: purchase ${f.code} was refunded; it cannot be downloaded`);
      throw err;
    }
  },

  'purchase refund': async ({ pool }, raw) => {
    const f = readFlags(z.object({ code: str }).strict(), raw);
    return refundPurchase(pool, f.code);
  },
};
