// What the index's recent writes were, so that a remembered search (its page and total) is kept
// across writes that cannot change it, instead of every remembered search being forgotten at each
// write: a traffic refresh rewriting a few outlets every second would otherwise leave nothing
// remembered. A write can change a search only if the outlet, as it was or as it is now, matches
// the search (its words and filters): the total counts only matches, and a sort orders only them.

/** One outlet written again (or added): what a remembered search is tested against. */
export interface Write {
  /** Its new slot, and its old one (-1: a new outlet). */
  slot: number;
  old: number;
  /** The lexemes of its search_vector and name_vector. */
  terms: ReadonlySet<string>;
  names: ReadonlySet<string>;
  /** The hashes of its name and domain (the exact tier). */
  name: number;
  domain: number;
  /**
   * Whether the write may change any search: its words differ from its old version's (the
   * old version's words are not kept, so whether the old version matched cannot be told), or it
   * brought a word new to the catalog (completions and typo corrections may change).
   */
  any: boolean;
}

/** The writes kept: a remembered search older than these is not reused. */
const KEPT = 4_096;

/** The last writes, by the index version each made. */
export class WriteLog {
  private readonly writes = new Map<number, Write>();

  record(version: number, w: Write): void {
    this.writes.set(version, w);
    if (this.writes.size > KEPT) this.writes.delete(this.writes.keys().next().value!);
  }

  /** The writes after version `from` up to `to`; undefined when some are no longer kept. */
  between(from: number, to: number): Write[] | undefined {
    const out: Write[] = [];
    for (let v = from + 1; v <= to; v++) {
      const w = this.writes.get(v);
      if (!w) return undefined;
      out.push(w);
    }
    return out;
  }

  clear(): void {
    this.writes.clear();
  }
}
