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

// A statement's text depends only on its shape: which templates its pieces are, how they nest,
// and which places share a `param`. The values are collected at each call, but the text is built
// and hashed once per shape (a template's strings are the same frozen array at every call of its
// site, so a number stands for them; pieces made at run time, `raw` and `join`, go into the key
// by their text). A placement's two statements are 5–6 kB: building, hashing and comparing them
// again at every call cost more CPU than the rest of the statement's preparation, and the driver
// compares a named statement's text with the one it prepared, at once when it is the same string.
const templates = new WeakMap<readonly string[], number>();
const texts = new Map<string, { text: string; hash: string }>();
let nextTemplate = 0;

/** The key of a piece's shape, with its values collected in their order. */
function shapeOf(root: Sql): { key: string; values: unknown[] } {
  let key = '';
  const values: unknown[] = [];
  const shared = new Map<Param, number>();
  const walk = (piece: Sql) => {
    if (Object.isFrozen(piece.strings)) {
      let id = templates.get(piece.strings);
      if (id === undefined) templates.set(piece.strings, (id = nextTemplate++));
      key += `#${id}(`;
    } else key += `${JSON.stringify(piece.strings)}(`;
    for (let i = 0; i < piece.values.length; i++) {
      const v = piece.values[i];
      if (v instanceof Sql) walk(v);
      else if (v instanceof Param) {
        let n = shared.get(v);
        if (n === undefined) {
          n = values.push(v.value);
          shared.set(v, n);
        }
        key += `p${n}`;
      } else key += `p${values.push(v)}`;
      key += ',';
    }
    key += ')';
  };
  walk(root);
  return { key, values };
}

/** PostgreSQL's placeholder for the n-th parameter: the one place in the code that writes a parameter's number. */
const placeholder = (n: number) => '$' + String(n);

/** The text of a piece with numbered parameters (`shapeOf` numbers them the same way). */
function textOf(root: Sql): string {
  let text = '';
  let count = 0;
  const shared = new Map<Param, number>();
  const walk = (piece: Sql) => {
    text += piece.strings[0];
    for (let i = 0; i < piece.values.length; i++) {
      const v = piece.values[i];
      if (v instanceof Sql) walk(v);
      else if (v instanceof Param) {
        let n = shared.get(v);
        if (n === undefined) shared.set(v, (n = ++count));
        text += placeholder(n);
      } else text += placeholder(++count);
      text += piece.strings[i + 1];
    }
  };
  walk(root);
  return text;
}

/** 12 hex digits of the SHA-1 of a statement's text: the same text has the same name on every process. */
export const hashOf = (text: string) => createHash('sha1').update(text).digest('hex').slice(0, 12);

/**
 * The statement as `query` takes it: numbered, with its values, and named `label_hash`: the label
 * says what it is (in logs and tests), the hash of its text which of its texts.
 */
export function statement(piece: Sql, label: string): Required<Statement> {
  const { key, values } = shapeOf(piece);
  let known = texts.get(key);
  if (known === undefined) {
    const text = textOf(piece);
    known = { text, hash: hashOf(text) };
    texts.set(key, known);
  }
  return { name: `${label}_${known.hash}`, text: known.text, values };
}
