import { describe, expect, it } from 'vitest';
import { firstDuplicateMember } from '../../src/http/plugins/duplicate-members.js';

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
