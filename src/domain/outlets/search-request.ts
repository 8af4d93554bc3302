import type { OutletSort } from './enums.js';
import type { SearchFilter } from './search-filter.js';

// What the search engine is asked and what it answers (search-engine.ts), in a file of their own
// so that the warm-up (search-warmup.ts), which the engine imports, can ask it too.

export interface SearchRequest {
  q?: string | undefined;
  filter: SearchFilter;
  sort: OutletSort;
  /** The first `limit` outlets after `offset` in the sort's order. */
  offset: number;
  limit: number;
}

/** A search's total (meta.total) and the ids of its page, in order. */
export interface Found {
  total: number;
  ids: number[];
}
