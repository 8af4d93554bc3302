import type { Db } from '../../db/handle.js';

// A quoted phrase ("rocky mountain") must appear as written: its words at consecutive positions.
// The index keeps no positions (they would double its memory for a rare kind of query), so it
// finds the outlets having every word of the phrase, and the phrase is confirmed on those rows
// here from the positions PostgreSQL keeps in each tsvector (the same positions its own `<->`
// reads). Every value is a bound parameter: the lexemes are compared as text, never parsed.

/** A phrase: per word, the lexemes it may be (its forms). */
export type Phrase = string[][];

export interface Confirmed {
  /** Outlets with every phrase in search_vector or name_vector. */
  anywhere: Set<number>;
  /** Outlets with every phrase in name_vector (the name tier). */
  inName: Set<number>;
}

const BATCH = 20_000;

/** Whether every phrase appears in a tsvector column, as SQL over the parameters $2–$6. */
const hasPhrases = (column: string) => `(
  SELECT count(DISTINCT h.phrase) FROM (
    SELECT w.phrase FROM unnest(${column}) v
      JOIN w ON w.lexeme = v.lexeme
     CROSS JOIN LATERAL unnest(v.positions) p(pos)
     GROUP BY w.phrase, p.pos - w.at
    HAVING count(DISTINCT w.at) = min(w.len)) h) = $6`;

const STATEMENT = `WITH w AS MATERIALIZED (SELECT * FROM unnest($2::text[], $3::int[], $4::int[], $5::int[]) AS w(lexeme, phrase, at, len))
  SELECT id, in_any, in_name FROM (
    SELECT o.id, ${hasPhrases('o.search_vector')} AS in_any, ${hasPhrases('o.name_vector')} AS in_name
      FROM outlets o WHERE o.id = ANY($1::int[])) c
   WHERE in_any OR in_name`;

/** Of `ids`, the outlets in which every phrase appears as written. */
export async function confirmPhrases(pool: Db, ids: number[], phrases: Phrase[]): Promise<Confirmed> {
  const lexemes: string[] = [];
  const phraseOf: number[] = [];
  const at: number[] = [];
  const len: number[] = [];
  phrases.forEach((words, p) =>
    words.forEach((forms, i) => {
      for (const l of new Set(forms)) {
        lexemes.push(l);
        phraseOf.push(p);
        at.push(i);
        len.push(words.length);
      }
    }),
  );
  const confirmed: Confirmed = { anywhere: new Set(), inName: new Set() };
  for (let i = 0; i < ids.length; i += BATCH) {
    const { rows } = await pool.query<{ id: number; in_any: boolean; in_name: boolean }>({
      name: 'search_phrases',
      text: STATEMENT,
      values: [ids.slice(i, i + BATCH), lexemes, phraseOf, at, len, phrases.length],
    });
    for (const r of rows) {
      confirmed.anywhere.add(r.id);
      if (r.in_name) confirmed.inName.add(r.id);
    }
  }
  return confirmed;
}
