import { describe, expect, it } from 'vitest';
import { firstDuplicateMember, scanJson } from '../../src/http/plugins/json-scan.js';

describe('firstDuplicateMember', () => {
  it.each([
    ['{"offer_ids":[12],"offer_ids":[13]}', 'offer_ids'],
    ['{"a":{"b":1,"c":{"d":1},"b":2}}', 'a.b'],
    ['{"items":[{"n":1},{"n":1,"n":2}]}', 'items.1.n'],
    ['[{"x":1},{"y":1,"y":1}]', '1.y'],
    ['{"a":1,"\\u0061":2}', 'a'], // the same name, escaped
    ['{"q\\"":1,"q\\"":2}', 'q"'],
  ])('finds %s → %s', (text, path) => {
    expect(firstDuplicateMember(text)).toBe(path);
  });

  it.each([
    '{"a":1,"b":{"a":1},"c":[{"a":1},{"a":1}]}', // the same name in different objects
    '{"a":"{\\"a\\":1,\\"a\\":2}"}', // names inside a string value
    '{"a":"x\\\\","a\\\\":1}', // an escaped backslash before a closing quote
    '{"a" : [1, {"b": [2, 3]}], "b" : null}',
    '[1,2,[3,[4]]]',
    '{}',
  ])('passes %s', (text) => {
    expect(firstDuplicateMember(text)).toBeUndefined();
  });

  it('reads a large body in one pass', () => {
    const body = JSON.stringify({ title: 'x', body: 'word "quoted" \\ '.repeat(20_000), tags: Array.from({ length: 1000 }, (_, i) => ({ i })) });
    expect(firstDuplicateMember(body)).toBeUndefined();
    expect(firstDuplicateMember(body.replace(/}$/, ',"title":"y"}'))).toBe('title');
  });
});

describe('scanJson', () => {
  const limits = { maxDepth: 4, maxValues: 10 };

  it('stops at the first level too deep, before reading the rest', () => {
    expect(scanJson('[[[[1]]]]', limits)).toEqual({});
    expect(scanJson('[[[[[1]]]]]', limits)).toEqual({ over: 'depth' });
    expect(scanJson('['.repeat(500_000) + ']'.repeat(500_000), limits)).toEqual({ over: 'depth' });
    expect(scanJson('{"a":{"b":{"c":{"d":{}}}}}', limits)).toEqual({ over: 'depth' });
  });

  it('counts members and elements across the whole text', () => {
    expect(scanJson(JSON.stringify(Array.from({ length: 9 }, (_, i) => i)), limits)).toEqual({});
    expect(scanJson(JSON.stringify(Array.from({ length: 11 }, (_, i) => i)), limits)).toEqual({ over: 'values' });
    const members = Object.fromEntries(Array.from({ length: 75_000 }, (_, i) => [`m${i}`, 1]));
    expect(scanJson(JSON.stringify(members), limits)).toEqual({ over: 'values' });
  });

  it('ignores brackets and commas inside strings', () => {
    expect(scanJson(JSON.stringify({ a: '[[[[[[,,,,,,,,,,,,,]]]]]]' }), limits)).toEqual({});
  });

  it('leaves text that is not JSON to the parser', () => {
    expect(scanJson('{"a', limits)).toEqual({});
    expect(scanJson('{"\\x":1,"\\x":2}', limits)).toEqual({});
  });
});
