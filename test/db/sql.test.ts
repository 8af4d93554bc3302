import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { join, param, raw, sql, statement } from '../../src/db/sql.js';

// The one way SQL is put together from pieces: values become parameters numbered in the order the
// combined text names them, a `param` is one parameter wherever it appears, and a statement is
// named by its label and a hash of its text, so two texts never share a name and one text always
// has the same one. No database: these are the texts and values pg is given.

const nameOf = (label: string, text: string) => `${label}_${createHash('sha1').update(text).digest('hex').slice(0, 12)}`;

describe('sql pieces and statements', () => {
  it('numbers the values of pieces in the order the combined text names them', () => {
    const inner = (a: number, b: number) => sql`inner(${a}, ${b})`;
    const s = statement(sql`SELECT ${1}, ${inner(2, 3)}, ${4} FROM t WHERE x = ${inner(5, 6)}`, 'demo');
    expect(s.text).toBe('SELECT $1, inner($2, $3), $4 FROM t WHERE x = inner($5, $6)');
    expect(s.values).toEqual([1, 2, 3, 4, 5, 6]);
    expect(s.name).toBe(nameOf('demo', s.text));
  });

  it('binds a param once however many places name it, numbered where it first appears', () => {
    const at = param('2026-12-02');
    const s = statement(sql`SELECT ${'a'}, ${at}, ${sql`f(${at}, ${'b'})`}, ${at}`, 'demo');
    expect(s.text).toBe('SELECT $1, $2, f($2, $3), $2');
    expect(s.values).toEqual(['a', '2026-12-02', 'b']);
  });

  it('an array, a null, an object is one parameter each; text from the code goes in by raw', () => {
    const column = raw('workspace_id');
    const s = statement(sql`SELECT ${column} FROM t WHERE id = ANY(${[1, 2, 3]}::int[]) AND v IS NOT DISTINCT FROM ${null} AND d = ${{ a: 1 }}`, 'demo');
    expect(s.text).toBe('SELECT workspace_id FROM t WHERE id = ANY($1::int[]) AND v IS NOT DISTINCT FROM $2 AND d = $3');
    expect(s.values).toEqual([[1, 2, 3], null, { a: 1 }]);
  });

  it('join puts a separator between pieces, and none for one; nothing for none', () => {
    const where = (filters: Array<[string, unknown]>) => join(filters.map(([c, v]) => sql`${raw(c)} = ${v}`), ' AND ');
    expect(statement(sql`SELECT 1 WHERE ${where([['a', 1], ['b', 2], ['c', 3]])}`, 'demo').text).toBe('SELECT 1 WHERE a = $1 AND b = $2 AND c = $3');
    expect(statement(sql`SELECT 1 WHERE ${where([['a', 1]])}`, 'demo').text).toBe('SELECT 1 WHERE a = $1');
    expect(statement(sql`SELECT 1 WHERE TRUE${where([])}`, 'demo').text).toBe('SELECT 1 WHERE TRUE');
  });

  it('each shape of one call site has its own text and name; the same shape the same, whatever its values', () => {
    // One site whose pieces change with the call: the text is remembered per shape, never mixed up.
    const read = (status: string | undefined, mine: boolean | undefined, at: unknown) => {
      const where = [sql`o.workspace_id = ${7}`];
      if (status) where.push(sql`o.status = ${status}`);
      if (mine !== undefined) where.push(mine ? sql`o.status = ANY(${['a']})` : sql`o.status <> ALL(${['a']})`);
      const shared = param(at);
      return statement(sql`SELECT ${shared} WHERE ${join(where, ' AND ')} AND t > ${shared}`, 'orders');
    };
    const shapes = [
      read(undefined, undefined, 1),
      read('live', undefined, 1),
      read(undefined, true, 1),
      read(undefined, false, 1),
      read('live', false, 1),
    ];
    expect(shapes.map((s) => s.text)).toEqual([
      'SELECT $1 WHERE o.workspace_id = $2 AND t > $1',
      'SELECT $1 WHERE o.workspace_id = $2 AND o.status = $3 AND t > $1',
      'SELECT $1 WHERE o.workspace_id = $2 AND o.status = ANY($3) AND t > $1',
      'SELECT $1 WHERE o.workspace_id = $2 AND o.status <> ALL($3) AND t > $1',
      'SELECT $1 WHERE o.workspace_id = $2 AND o.status = $3 AND o.status <> ALL($4) AND t > $1',
    ]);
    expect(new Set(shapes.map((s) => s.name)).size).toBe(shapes.length);
    for (const s of shapes) expect(s.name).toBe(nameOf('orders', s.text));
    const again = read('cancelled', false, 2);
    expect(again.name).toBe(shapes[4]!.name);
    expect(again.text).toBe(shapes[4]!.text);
    expect(again.values).toEqual([2, 7, 'cancelled', ['a']]);
  });

  it('raw text of a call site changes its text and name', () => {
    const owner = (column: string) => statement(sql`SELECT 1 FROM t WHERE ${raw(column)} = ${1}`, 'owner');
    expect(owner('workspace_id').text).toBe('SELECT 1 FROM t WHERE workspace_id = $1');
    expect(owner('publisher_id').text).toBe('SELECT 1 FROM t WHERE publisher_id = $1');
    expect(owner('workspace_id').name).not.toBe(owner('publisher_id').name);
  });
});
