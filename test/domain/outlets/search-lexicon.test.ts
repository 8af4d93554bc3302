import { describe, expect, it } from 'vitest';
import { mulberry32 } from '../../../src/demo/outlet-generator.js';
import { Lexicon } from '../../../src/domain/outlets/search-lexicon.js';

// The index's lexemes, kept as characters in typed arrays: it must behave exactly as the
// Map<string, number> and sorted string[] it replaced, through many growths of its arrays.

const ALPHABET = ['a', 'b', 'e', 'z', 'é', 'ß', 'ж', '中', '😀', '1', '-'];
const wordOf = (rnd: () => number) => {
  let w = '';
  const n = 1 + Math.floor(rnd() * 12);
  for (let i = 0; i < n; i++) w += ALPHABET[Math.floor(rnd() * ALPHABET.length)];
  return w;
};
const sign = (n: number) => Math.sign(n);
const jsCompare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

describe('Lexicon', () => {
  const rnd = mulberry32(17);
  const words = Array.from({ length: 40_000 }, () => wordOf(rnd));
  const lexicon = new Lexicon((w) => /^\p{L}+$/u.test(w));
  const ids = new Map<string, number>();
  for (const w of words) {
    const id = lexicon.add(w);
    if (!ids.has(w)) ids.set(w, ids.size);
    expect(id).toBe(ids.get(w));
  }

  it('gives each lexeme one id, in order of first addition, and finds it again after the table grew', () => {
    expect(lexicon.size).toBe(ids.size);
    expect(ids.size).toBeGreaterThan(10_000);
    for (const [w, id] of ids) {
      expect(lexicon.id(w)).toBe(id);
      expect(lexicon.text(id)).toBe(w);
      expect(lexicon.length(id)).toBe(w.length);
      expect(lexicon.flagged(id)).toBe(/^\p{L}+$/u.test(w));
    }
    // Adding again changes nothing.
    for (const w of words.slice(0, 1_000)) expect(lexicon.add(w)).toBe(ids.get(w));
    expect(lexicon.size).toBe(ids.size);
  });

  it('knows no lexeme it was not given (prefixes, extensions, the empty string)', () => {
    for (const w of words.slice(0, 2_000)) {
      for (const other of [w.slice(0, -1), `${w}a`, `a${w}`]) expect(lexicon.id(other)).toBe(ids.get(other));
    }
    expect(lexicon.id('')).toBeUndefined();
    expect(lexicon.id('never-added-lexeme-xyz')).toBeUndefined();
  });

  it('compares and sorts as JavaScript strings do, and finds a prefix’s range in a sorted list', () => {
    const all = [...ids.keys()];
    for (let i = 0; i < 5_000; i++) {
      const a = all[Math.floor(rnd() * all.length)]!;
      const b = all[Math.floor(rnd() * all.length)]!;
      expect(sign(lexicon.compareIds(ids.get(a)!, ids.get(b)!))).toBe(jsCompare(a, b));
      expect(sign(lexicon.compare(ids.get(a)!, b))).toBe(jsCompare(a, b));
      expect(lexicon.startsWith(ids.get(a)!, b.slice(0, 2))).toBe(a.startsWith(b.slice(0, 2)));
    }
    const sorted = Int32Array.from(ids.values()).sort((x, y) => lexicon.compareIds(x, y));
    expect([...sorted].map((id) => lexicon.text(id))).toEqual([...all].sort());
    for (const prefix of ['a', 'é', 'zz', '中😀', 'b-', 'ж1', '', '\uffff']) {
      const at = lexicon.lowerBound(sorted, prefix);
      const expected = [...all].sort().filter((w) => w.startsWith(prefix));
      const found: string[] = [];
      for (let i = at; i < sorted.length && lexicon.startsWith(sorted[i]!, prefix); i++) found.push(lexicon.text(sorted[i]!));
      expect(found).toEqual(expected);
    }
  });
});
