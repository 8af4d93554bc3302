import { z } from 'zod';
import { listFxRates, setFxRate } from '../../domain/fx/fx-service.js';
import { createPublisher } from '../../domain/publishers/publisher-service.js';
import { createBrandKit } from '../../domain/workspaces/brand-kits.js';
import { createProject } from '../../domain/workspaces/projects.js';
import { decimal, httpUrl, id, listOf, name, readFlags, text } from '../args.js';
import type { Commands } from '../registry.js';

export const settingsCommands: Commands = {
  'project create': async ({ db }, raw) => {
    const f = readFlags(z.object({ workspace: id, name }).strict(), raw);
    return createProject(db, f.workspace, f.name);
  },

  'brand-kit create': async ({ db }, raw) => {
    const f = readFlags(
      z.object({
        workspace: id,
        name,
        website: httpUrl.optional(),
        description: text.optional(),
        tone: name.optional(),
        // Each as an order's anchor text may be (1–200 characters).
        'anchor-text': listOf(name, 50),
      }).strict(),
      raw,
    );
    return createBrandKit(db, f.workspace, {
      name: f.name,
      ...(f.website ? { website: f.website } : {}),
      ...(f.description ? { description: f.description } : {}),
      ...(f.tone ? { tone: f.tone } : {}),
      ...(f['anchor-text'] ? { anchorTexts: f['anchor-text'] } : {}),
    });
  },

  'fx set': async ({ db }, raw) => {
    const f = readFlags(
      z.object({ currency: z.string().regex(/^[A-Za-z]{3}$/, 'must be a three-letter code'), 'per-usd': decimal(0.000001, 1_000_000_000) }).strict(),
      raw,
    );
    return setFxRate(db, f.currency, f['per-usd']);
  },

  'fx list': async ({ db }, raw) => {
    readFlags(z.object({}).strict(), raw);
    return listFxRates(db);
  },

  'publisher create': async ({ db }, raw) => {
    const f = readFlags(z.object({ name }).strict(), raw);
    return createPublisher(db, f.name);
  },
};
