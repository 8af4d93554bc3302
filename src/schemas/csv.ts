import { pipeline, Readable } from 'node:stream';
import { stringify } from 'csv-stringify';
import type { z } from 'zod';

/**
 * CSV exports of the lists (docs/billing.md, "Papers"): the columns are the JSON fields of the
 * list's zod schema, so the CSV and the JSON cannot drift apart. A nested object's fields are
 * columns of their own named by their path (`outlet.name`, `deadlines.respond_by`, `content.title`);
 * an array (`live_checks`) is one column holding its JSON. Quoting is csv-stringify's, as RFC 4180
 * writes it (a cell holding a comma, a quote or a line break is quoted, its quotes doubled; lines
 * end with CRLF).
 */

/** The column names of a list's item schema, in the schema's order, leaving out `omit` (fields lists never carry). */
export function csvColumns(schema: z.ZodType, omit: readonly string[] = []): string[] {
  const columns: string[] = [];
  const walk = (node: z.core.$ZodType, prefix: string) => {
    const inner = unwrap(node);
    if (inner._zod.def.type === 'object') {
      const shape = (inner._zod.def as unknown as { shape: Record<string, z.core.$ZodType> }).shape;
      for (const [key, child] of Object.entries(shape)) {
        const path = prefix ? `${prefix}.${key}` : key;
        if (!omit.includes(path)) walk(child, path);
      }
      return;
    }
    columns.push(prefix);
  };
  walk(schema, '');
  return columns;
}

/** The schema under optional, nullable and default wrappers. */
function unwrap(node: z.core.$ZodType): z.core.$ZodType {
  let n = node;
  for (;;) {
    const def = n._zod.def as unknown as { type: string; innerType?: z.core.$ZodType };
    if ((def.type === 'optional' || def.type === 'nullable' || def.type === 'default') && def.innerType) n = def.innerType;
    else return n;
  }
}

/**
 * One cell's value as csv-stringify takes it: numbers stay numbers, booleans are written as JSON
 * writes them (`true`, `false`; the library's own default would be `1` and empty), an array or an
 * object (`live_checks`) is its JSON, null is an empty cell.
 */
export function csvCell(value: unknown): string | number | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'number' || typeof value === 'string') return value;
  if (typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}

/** The value at a column's path in a JSON row (`outlet.name` → row.outlet.name); undefined past a null. */
export function valueAt(row: unknown, column: string): unknown {
  let v: unknown = row;
  for (const key of column.split('.')) {
    if (v === null || v === undefined || typeof v !== 'object') return undefined;
    v = (v as Record<string, unknown>)[key];
  }
  return v;
}

/**
 * The rows as a CSV byte stream: the header line, then one line per row, read from `rows` as the
 * reader takes them (back-pressure reaches the generator, so no more than a batch is in memory).
 */
export function csvStream(columns: string[], rows: AsyncIterable<unknown>): Readable {
  const cells = async function* () {
    yield columns;
    for await (const row of rows) yield columns.map((c) => csvCell(valueAt(row, c)));
  };
  // escape_formulas: text a spreadsheet would read as a formula (starting with = + - @, a tab or
  // a carriage return, or their full-width forms) gets a leading apostrophe (OWASP, "CSV
  // injection"): a buyer's anchor text or brief must not run on the reader's machine. Numbers are
  // never guarded: `-1500` is no formula, and amounts must stay summable.
  const encoder = stringify({ record_delimiter: '\r\n', quote_record_delimiter: true, escape_formulas: true });
  // pipeline, not pipe: a failing read (the database gone mid-export) destroys the output with
  // its error, so the response is cut rather than ended as if complete; a client that goes away
  // destroys the output, which ends the generator (its `finally` runs, no batch is read after).
  return pipeline(Readable.from(cells()), encoder, () => {});
}
