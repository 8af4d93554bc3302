import { createHash } from 'node:crypto';
import type { Statement } from './handle.js';

/**
 * SQL written where its values go: `sql\`… WHERE id = ${id}\`` binds `id` as a parameter. A piece
 * may hold other pieces (`${ledger.postingWith(values)}`): their text is spliced in and their
 * values bound after the ones before them, so no piece counts parameter numbers and pieces
 * combine in any order. `statement` numbers them ($1, $2, …) and names the statement by its label
 * and a hash of its text: a named statement is prepared once per connection, and a text that
 * differs (a filter given or not) has a name of its own without anyone choosing it.
 *
 * Interpolated values are always parameters, never text: what must be text (a column chosen by
 * the code, a constant) is a piece of its own, `raw`, and comes from the code, never from input.
 * A value interpolated at several places is one parameter when it is made by `param` (the same
 * time in three columns); otherwise each place binds its own. An array is one parameter: a
 * statement's texts must be a bounded set, as each distinct one is prepared on every connection.
 */
export class Sql {
  constructor(
    readonly strings: readonly string[],
    readonly values: readonly unknown[],
  ) {}
}

/** One value bound once however many places of a statement name it. */
export class Param {
  constructor(readonly value: unknown) {}
}

export const param = (value: unknown) => new Param(value);

export function sql(strings: TemplateStringsArray, ...values: unknown[]): Sql {
  return new Sql(strings, values);
}

/** Text from the code (never from input): spliced as it is. */
export const raw = (text: string) => new Sql([text], []);

/** The pieces with `separator` between them (`' AND '`). */
export function join(pieces: readonly Sql[], separator: string): Sql {
  if (pieces.length === 0) return raw('');
  // '' piece separator piece … piece ''
  return new Sql(['', ...pieces.slice(1).map(() => separator), ''], pieces);
}

/** The text with numbered parameters and the values in their order. */
function compile(root: Sql): { text: string; values: unknown[] } {
  let text = '';
  const values: unknown[] = [];
  const shared = new Map<Param, number>();
  const walk = (piece: Sql) => {
    text += piece.strings[0];
    for (let i = 0; i < piece.values.length; i++) {
      const v = piece.values[i];
      if (v instanceof Sql) walk(v);
      else if (v instanceof Param) {
        let n = shared.get(v);
        if (n === undefined) {
          n = values.push(v.value);
          shared.set(v, n);
        }
        text += `$${n}`;
      } else text += `$${values.push(v)}`;
      text += piece.strings[i + 1];
    }
  };
  walk(root);
  return { text, values };
}

// The hashes of the texts met so far: computed once per text, not once per call.
const hashes = new Map<string, string>();

/** 12 hex digits of the SHA-1 of a statement's text: the same text has the same name on every process. */
export function hashOf(text: string): string {
  let hash = hashes.get(text);
  if (hash === undefined) {
    hash = createHash('sha1').update(text).digest('hex').slice(0, 12);
    hashes.set(text, hash);
  }
  return hash;
}

/**
 * The statement as `query` takes it: numbered, with its values, and named `label_hash`: the label
 * says what it is (in logs and tests), the hash of its text which of its texts.
 */
export function statement(piece: Sql, label: string): Required<Statement> {
  const { text, values } = compile(piece);
  return { name: `${label}_${hashOf(text)}`, text, values };
}
