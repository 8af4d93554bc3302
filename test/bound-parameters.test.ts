import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../src/paths.js';

// Values reach PostgreSQL as bound parameters only: nothing in src/ escapes or quotes text into
// SQL (or into tsquery syntax) by hand. A statement whose text depends on a caller's words would
// also be planned anew for each of them.

const FORBIDDEN: [string, RegExp][] = [
  ['escapeLiteral', /escapeLiteral/],
  ['quote_literal / format %L', /quote_literal|format\(\s*'[^']*%L/i],
  ["doubling single quotes by hand", /replace(All)?\(\s*(["'`])'\2\s*,|replace\(\s*\/'\/g/],
  ['a tsquery built from text', /::tsquery|to_tsquery\(/],
];

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return files(path);
    return path.endsWith('.ts') ? [path] : [];
  });
}

describe('bound parameters only', () => {
  const sources = files(join(projectRoot, 'src'));

  it('reads the sources', () => {
    expect(sources.length).toBeGreaterThan(100);
  });

  for (const [what, pattern] of FORBIDDEN) {
    it(`no ${what} in src/`, () => {
      const found = sources.filter((f) => pattern.test(readFileSync(f, 'utf8'))).map((f) => relative(projectRoot, f));
      expect(found).toEqual([]);
    });
  }

  it('the patterns find what they are for', () => {
    const samples = [`pg.escapeLiteral(q)`, `format('%L', x)`, `l.replaceAll("'", "''")`, `$1::tsquery`];
    for (const s of samples) expect(FORBIDDEN.some(([, p]) => p.test(s)), s).toBe(true);
  });
});
