import { join } from 'node:path';
import { Eta } from 'eta';
import { projectRoot } from '../paths.js';
import type { Documents } from './view-models.js';

// The printable documents (a top-up's invoice, a month's statement): pages of their own, not
// console pages: no navigation, their own print style sheet. Rendered by an Eta of their own,
// configured as the console's (one set of views, escaped by default), without the layout.
const documents = new Eta({ views: join(projectRoot, 'src', 'console', 'views'), autoEscape: true, cache: true });

/** A document's HTML; its name picks its model (view-models.ts). */
export function renderDocument<D extends keyof Documents>(name: D, data: Documents[D]): Promise<string> {
  return documents.renderAsync(name, data);
}
