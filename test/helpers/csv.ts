/**
 * A strict RFC 4180 reader for the tests of the CSV exports, written apart from the library that
 * writes them: fields separated by commas, records by CRLF, a quoted field's quotes doubled.
 * Anything else (a bare quote inside an unquoted field, a lone LF between records, text after a
 * closing quote) throws, so a writer that strays from the RFC fails the test.
 */
export function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let record: string[] = [];
  let i = 0;
  const n = text.length;
  if (n === 0) return records;
  for (;;) {
    let field = '';
    if (text[i] === '"') {
      i++;
      for (;;) {
        if (i >= n) throw new Error('unterminated quoted field');
        if (text[i] === '"') {
          if (text[i + 1] === '"') {
            field += '"';
            i += 2;
            continue;
          }
          i++;
          break;
        }
        field += text[i++];
      }
    } else {
      while (i < n && text[i] !== ',' && text[i] !== '\r' && text[i] !== '\n') {
        if (text[i] === '"') throw new Error(`a quote inside an unquoted field at ${i}`);
        field += text[i++];
      }
    }
    record.push(field);
    if (i >= n) throw new Error('the last record does not end with CRLF');
    if (text[i] === ',') {
      i++;
      continue;
    }
    if (text[i] === '\r' && text[i + 1] === '\n') {
      records.push(record);
      record = [];
      i += 2;
      if (i >= n) return records;
      continue;
    }
    throw new Error(`unexpected ${JSON.stringify(text[i])} at ${i}`);
  }
}

/** What a JSON field's value must read as in its CSV cell (docs/billing.md, "Papers"). */
export function expectedCell(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (typeof value === 'string') return /^[=+\-@\t\r\uFF1D\uFF0B\uFF0D\uFF20]/.test(value) ? `'${value}` : value;
  return JSON.stringify(value);
}

/** The value at a dotted column path of a JSON row. */
export function fieldAt(row: unknown, column: string): unknown {
  let v: unknown = row;
  for (const key of column.split('.')) {
    if (v === null || v === undefined) return undefined;
    v = (v as Record<string, unknown>)[key];
  }
  return v;
}
