import { describe, expect, it } from 'vitest';
import { parseForm } from '../../../src/http/catalog/params.js';

describe('parseForm (Interface B form bodies, read before the key is checked)', () => {
  it('keeps every value of a repeated name, in order', () => {
    expect({ ...parseForm('a=1&b=2&a=3&a=4&c') }).toEqual({ a: ['1', '3', '4'], b: '2', c: '' });
  });

  it('reads a form of one name repeated 100,000 times (200 KB): every value is kept', () => {
    // Copying the list at every repeat made this body take over a minute (a 1 MB one, hours),
    // the whole process stalled meanwhile; appending takes milliseconds.
    const repeats = 100_000;
    const out = parseForm('a&'.repeat(repeats));
    expect(out.a).toHaveLength(repeats);
  });
});
