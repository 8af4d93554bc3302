import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { projectRoot } from '../src/paths.js';
import { createTestDatabase } from './helpers/db.js';
import { describeStatement, type ResultColumn } from './helpers/describe-statement.js';
import { collectTypedQueries } from './helpers/sql-statements.js';

// Where a statement is SQL text, its row type (`query<OrderRow>(…)`) is written by hand, and
// TypeScript believes it: a column renamed in a SELECT, or a count that PostgreSQL returns as a
// string, would type-check and be wrong at run time. Here each typed call's statement is described
// by PostgreSQL against the migrated schema (parsed, never run), and its columns are compared with
// the row type's fields: the same names, and types that pg turns into what the fields say.

const database = await createTestDatabase({ max: 1 });
const client = new pg.Client({ connectionString: database.url });
await client.connect();
afterAll(async () => {
  await client.end();
  await database.drop();
});
const { queries, unresolved } = await collectTypedQueries(projectRoot);

/** What pg gives for a type: by OID, category (pg_type.typcategory) and, for arrays, the element. */
interface PgType {
  name: string;
  category: string;
  element: number;
}
const pgTypes = new Map<number, PgType>(
  (
    await client.query<{ oid: number; typname: string; typcategory: string; typelem: number; typbasetype: number }>(
      'SELECT oid::int, typname, typcategory, typelem::int, typbasetype::int FROM pg_type',
    )
  ).rows.map((t) => [t.oid, { name: t.typname, category: t.typcategory, element: t.typelem }]),
);

/** What a value of the column is once pg has parsed it (src/db/client.ts reads int8 as a number). */
function jsKind(oid: number): string {
  const t = pgTypes.get(oid);
  if (!t) return 'unknown';
  if (t.name === 'json' || t.name === 'jsonb') return 'json';
  if (t.name === 'numeric' || t.name === 'money') return 'string';
  if (t.name === 'bytea') return 'Buffer';
  if (t.name === 'interval') return 'object';
  if (t.category === 'A') {
    // pg's own array parser reads bigint[] as strings: the int8 parser set for single values is not used.
    const element = t.name === '_int8' ? 'string' : jsKind(t.element);
    return `${element}[]`;
  }
  switch (t.category) {
    case 'N':
      return 'number';
    case 'B':
      return 'boolean';
    case 'D':
      return 'Date';
    default:
      // text, varchar, uuid, enums, inet, citext
      return 'string';
  }
}

function agrees(column: ResultColumn, kinds: string[] | 'any'): boolean {
  if (kinds === 'any') return true;
  const wanted = new Set(kinds);
  const kind = jsKind(column.dataTypeID);
  // json holds whatever the field says; a field typed as an object or array is read from json.
  if (kind === 'json') return true;
  if (wanted.has(kind)) return true;
  if (kind.endsWith('[]') && (wanted.has('any[]') || (kind === 'json[]' && [...wanted].some((k) => k.endsWith('[]'))))) return true;
  return false;
}

describe('row types match what their statements return', () => {
  it('finds the typed statements', () => {
    // A collector that found nothing would pass the check below.
    expect(queries.length).toBeGreaterThan(100);
    console.log(`${queries.length} typed statements compared; not worked out:\n` + unresolved.map((u) => `${u.where} (${u.because})`).join('\n'));
    expect(unresolved.length).toBeLessThan(queries.length / 4);
  });

  it('each row type has the statement’s columns, of types pg turns into the fields’ types', async () => {
    const wrong: string[] = [];
    for (const q of queries) {
      for (const text of q.texts) {
        const columns = await describeStatement(client, text);
        const byName = new Map(columns.map((c) => [c.name, c]));
        for (const f of q.fields) {
          const column = byName.get(f.name);
          if (!column) wrong.push(`${q.where}: field ${f.name} is not a column of the statement`);
          else if (!agrees(column, f.kinds)) {
            wrong.push(`${q.where}: field ${f.name}: ${f.type}, but the column is ${pgTypes.get(column.dataTypeID)?.name} (${jsKind(column.dataTypeID)})`);
          }
        }
        const named = new Set(q.fields.map((f) => f.name));
        for (const c of columns) if (!named.has(c.name)) wrong.push(`${q.where}: column ${c.name} is not in the row type`);
      }
    }
    expect([...new Set(wrong)]).toEqual([]);
  });
});
