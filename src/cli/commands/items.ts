import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { importItems } from '../../domain/catalog/catalog-service.js';
import { CliError, id, readFlags, str } from '../args.js';
import type { Commands } from '../registry.js';

export const itemCommands: Commands = {
  'items import': async ({ db }, raw) => {
    const f = readFlags(z.object({ workspace: id, file: str }).strict(), raw);
    let text: string;
    try {
      text = await readFile(f.file, 'utf8');
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      const why = code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'is a directory' : code === 'EACCES' ? 'permission denied' : (err as Error).message;
      throw new CliError(`--file: cannot read ${f.file}: ${why}`);
    }
    let json: unknown;
    try {
      json = JSON.parse(text.replace(/^\uFEFF/, ''));
    } catch (err) {
      throw new CliError(`--file: invalid JSON (${(err as Error).message})`);
    }
    return importItems(db, f.workspace, json);
  },
};
