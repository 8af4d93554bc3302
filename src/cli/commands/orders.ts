import { z } from 'zod';
import { durationsFrom } from '../../domain/orders/states.js';
import { sweepDeadlines } from '../../domain/orders/sweep.js';
import { readFlags } from '../args.js';
import type { Commands } from '../registry.js';

export const orderCommands: Commands = {
  /** The same sweep the server runs every minute; safe to run beside it. */
  'orders sweep': async ({ pool, config }, raw) => {
    readFlags(z.object({}).strict(), raw);
    return sweepDeadlines(pool, Date.now(), durationsFrom(config));
  },
};
