import { z } from 'zod';
import { importItems } from '../../domain/catalog/catalog-writes.js';
import { CliError, id, readFlags, readInputFile, str } from '../args.js';
import type { Commands } from '../registry.js';

export const itemCommands: Commands = {
  'items import': async ({ db, config, progress }, raw) => {
    const f = readFlags(z.object({ workspace: id, file: str }).strict(), raw);
    const text = await readInputFile(f.file, config.INIT_CWD);
    let json: unknown;
    try {
      json = JSON.parse(text.replace(/^\uFEFF/, ''));
    } catch (err) {
      throw new CliError(`--file: invalid JSON (${(err as Error).message})`);
    }
    const shown = progress('items import', Array.isArray(json) ? json.length : 0);
    try {
      return await importItems(db, f.workspace, json, (n) => shown.add(n));
    } finally {
      shown.done();
    }
  },
};
