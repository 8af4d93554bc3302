import { describe, expect, it } from 'vitest';
import { buyerOrder } from '../../src/schemas/orders.js';
import { csvColumns, csvStream } from '../../src/schemas/csv.js';
import { parseCsv } from '../helpers/csv.js';

// The CSV writer of the exports (docs/billing.md, "Papers"), without a database.

async function text(stream: NodeJS.ReadableStream): Promise<string> {
  let out = '';
  for await (const chunk of stream) out += String(chunk);
  return out;
}

describe('csvStream', () => {
  it('writes RFC 4180: a header, CRLF, quoted cells with their quotes doubled; guards formulas in text, not numbers', async () => {
    async function* rows() {
      yield { a: 'plain', b: { c: 'x, "y"' }, d: -12, e: true, f: [1, 2] };
      yield { a: '=SUM(A1)', b: null, d: 0, e: false, f: null };
      yield { a: '-2', b: { c: 'two\nlines' }, d: 1.5, e: null, f: [] };
    }
    const out = await text(csvStream(['a', 'b.c', 'd', 'e', 'f'], rows()));
    expect(out).toBe('a,b.c,d,e,f\r\nplain,"x, ""y""",-12,true,"[1,2]"\r\n\'=SUM(A1),,0,false,\r\n\'-2,"two\nlines",1.5,,[]\r\n');
    expect(parseCsv(out)).toHaveLength(4);
  });

  it('an export that fails part-way errors the stream (the response is cut, not ended as if complete)', async () => {
    async function* rows() {
      yield { a: 1 };
      throw new Error('the database went away');
    }
    await expect(text(csvStream(['a'], rows()))).rejects.toThrow('the database went away');
  });

  it('a reader that goes away ends the generator: no batch is read after', async () => {
    let finished = false;
    let read = 0;
    async function* rows() {
      try {
        for (let i = 0; i < 1_000_000; i++) {
          read++;
          yield { a: 'x'.repeat(100) };
        }
      } finally {
        finished = true;
      }
    }
    const stream = csvStream(['a'], rows());
    for await (const _ of stream) break;
    await expect.poll(() => finished).toBe(true);
    expect(read).toBeLessThan(10_000);
  });
});

describe('csvColumns', () => {
  it('names the list fields of the schema by their paths, nested objects flattened, arrays whole', () => {
    const columns = csvColumns(buyerOrder, ['messages']);
    expect(columns).toContain('outlet.name');
    expect(columns).toContain('deadlines.respond_by');
    expect(columns).toContain('content.checks');
    expect(columns).toContain('live_checks');
    expect(columns).not.toContain('messages');
    expect(columns).not.toContain('outlet');
    expect(columns[0]).toBe('id');
  });
});
