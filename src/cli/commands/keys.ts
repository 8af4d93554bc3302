import { z } from 'zod';
import { createKey, revokeKey } from '../../domain/keys/key-service.js';
import { CliError, flag, id, name, readFlags } from '../args.js';
import type { Commands } from '../registry.js';

export const keyCommands: Commands = {
  'key create': async ({ db }, raw) => {
    const f = readFlags(
      z.object({ workspace: id.optional(), publisher: id.optional(), name: name.optional(), 'can-place-orders': flag }).strict(),
      raw,
    );
    if ((f.workspace === undefined) === (f.publisher === undefined)) throw new CliError('give exactly one of --workspace or --publisher');
    if (f.publisher !== undefined) {
      if (f['can-place-orders']) throw new CliError('--can-place-orders: publisher keys cannot spend');
      const k = await createKey(db, { publisherId: f.publisher, ...(f.name ? { name: f.name } : {}) });
      return { id: k.id, key: k.key, prefix: k.prefix };
    }
    return createKey(db, { workspaceId: f.workspace!, canPlaceOrders: Boolean(f['can-place-orders']), ...(f.name ? { name: f.name } : {}) });
  },

  'key revoke': async ({ db }, raw) => {
    const f = readFlags(z.object({ id }).strict(), raw);
    return revokeKey(db, f.id);
  },
};
