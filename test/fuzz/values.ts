import fc from 'fast-check';

// Hostile building blocks shared by every request generator: strings, numbers, raw JSON text,
// URL fragments and path ids. Nothing here knows about routes.

export const SQL_STRINGS = [
  "' OR 1=1 --",
  "'; DROP TABLE orders; --",
  '" OR ""="',
  "1 UNION SELECT null, version() --",
  "1; SELECT pg_sleep(5)",
  "') OR ('a'='a",
  '%\' AND 1=1 --',
  '$1',
  '\\',
  "'",
  '"',
  '`',
  '1/*comment*/',
  'NULL',
  'ORDER BY 1--',
];

export const TRAVERSAL_STRINGS = [
  '../../etc/passwd',
  '..%2F..%2Fetc%2Fpasswd',
  '....//....//etc/passwd',
  '/etc/passwd',
  '..\\..\\windows\\win.ini',
  '%2e%2e%2f%2e%2e%2f',
  'file:///etc/passwd',
  '/proc/self/environ',
];

export const UNICODE_STRINGS = [
  '\u0000',
  'a\u0000b',
  '\u0001\u0002\u001f\u007f',
  '\u202eRTL override\u202c',
  '\u200f\u05e9\u05dc\u05d5\u05dd',
  'مرحبا بالعالم',
  '\u200b\u200c\u200d\ufeff',
  '𝕳𝖊𝖑𝖑𝖔',
  '😀👨‍👩‍👧‍👦🏳️‍🌈',
  '\ud800',
  'x\udfffy',
  'Z̤͔ͧ̑̓ä͖̭̈̇lͮ̒g̯̦o',
  '\r\n\r\nX-Injected: 1',
  '\t\v\f',
  'ﬀ Å Å',
  '１２３',
  '١٢٣',
  'İıſ',
  '\uFFFE\uFFFF',
];

export const FORMAT_STRINGS = [
  '',
  ' ',
  '   padded   ',
  '%s%s%s%n',
  '{{7*7}}',
  '${7*7}',
  '<script>alert(1)</script>',
  'javascript:alert(1)',
  'null',
  'undefined',
  'true',
  'NaN',
  '[object Object]',
  '__proto__',
  'constructor',
  'mk_',
  'https://evil.example/%0d%0a',
  'http://[::1]:80/',
  'https://例え.テスト/パス',
];

export const NUMBERS: number[] = [
  0,
  -0,
  -1,
  1,
  1.5,
  -1.5,
  0.1 + 0.2,
  2 ** 31 - 1,
  2 ** 31,
  -(2 ** 31),
  2 ** 32,
  2 ** 53,
  Number.MAX_SAFE_INTEGER,
  -Number.MAX_SAFE_INTEGER,
  1e21,
  1e-7,
  Number.MAX_VALUE,
  Number.MIN_VALUE,
  10_000_000,
  10_000_000.01,
];

/** Number tokens only expressible as raw JSON text (or not valid JSON at all). */
export const RAW_NUMBERS = [
  '1e309',
  '-1e309',
  '99999999999999999999999999999',
  '9007199254740993',
  '1.0',
  '-0',
  '1e3',
  '1E+2',
  '0.0000000000000000000001',
  '01',
  '0x10',
  'NaN',
  'Infinity',
  '-Infinity',
  '.5',
  '5.',
  '+1',
  '1_000',
];

export const MALFORMED_JSON = [
  '{',
  '}',
  '[',
  '{"a":1,}',
  "{'a':1}",
  '{"a":1}{"b":2}',
  '{"a":1} trailing',
  '\ufeff{}',
  '{"a":}',
  '{"a" 1}',
  '{a:1}',
  'undefined',
  '{"a":"\\x41"}',
  '{"a":"unterminated}',
  '{"a":"\\u12"}',
  '{"a":\u0000}',
  '"\\ud800"',
  '/* comment */ {}',
  '{"__proto__":{"polluted":true}}',
  '{"constructor":{"prototype":{"polluted":true}}}',
  '{"a":1,"a":2}',
  'nul',
  'tru',
  '--',
  '\u0000',
  '{"jsonrpc":',
];

export const ID_STRINGS = [
  '0',
  '-1',
  'abc',
  '99999999999',
  '2147483647',
  '2147483648',
  '4294967296',
  '1.5',
  '1e3',
  '0x1F',
  '00000000001',
  '+1',
  '%20',
  '%201',
  '1%20',
  '%00',
  '1%00',
  '..%2F..%2Fetc%2Fpasswd',
  '%2e%2e',
  '..',
  "1'%20OR%20'1'='1",
  '%D9%A1%D9%A2',
  '%EF%BC%91',
  '9'.repeat(300),
  '%E2%80%AE',
  '%ZZ',
  '%',
  'null',
  'NaN',
  '-0',
  '1;2',
  '1,2',
];

export const MALFORMED_QUERY_FRAGMENTS = ['%', '%zz', '%00', '&&&', '=', '==x', '%C0%AE%C0%AE', 'a=%E0%A4%A', '%ff%fe', 'x[]=1', 'x[a][b]=1', '__proto__[x]=1', 'constructor[prototype][x]=1', ';', '#frag'];

export const CONTENT_TYPES: (string | undefined)[] = [
  undefined,
  'text/plain',
  'text/plain; charset=utf-8',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=----fuzzboundary',
  'application/xml',
  'application/octet-stream',
  'application/json; charset=utf-16',
  'application/json; charset=latin1',
  'APPLICATION/JSON',
  'application/vnd.api+json',
  'text/json',
  'application/json, text/plain',
  '*/*',
  ';',
  'application/',
  'x'.repeat(2000),
];

/** Any code point, incl. lone surrogates, control characters and astral planes. */
export const anyString = (maxLength = 40) => fc.string({ unit: 'binary', maxLength });

/** Long strings (1 KB to ~100 KB of characters), made of a repeated hostile unit. */
export const hugeString = fc
  .tuple(fc.constantFrom('a', 'é', '😀', "'", '\u0000', ' ', '\u202e', '<'), fc.integer({ min: 1_000, max: 100_000 }))
  .map(([unit, n]) => unit.repeat(n));

export const hostileString: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...SQL_STRINGS, ...TRAVERSAL_STRINGS) },
  { weight: 4, arbitrary: fc.constantFrom(...UNICODE_STRINGS, ...FORMAT_STRINGS) },
  { weight: 3, arbitrary: anyString() },
  { weight: 2, arbitrary: fc.string({ maxLength: 20 }) },
  { weight: 1, arbitrary: hugeString },
);

export const hostileNumber: fc.Arbitrary<number> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...NUMBERS) },
  { weight: 1, arbitrary: fc.integer() },
  { weight: 1, arbitrary: fc.double({ noNaN: true, noDefaultInfinity: true }) },
);

/** A value of some other type than expected: the mutation's replacement value. */
export const wrongValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: hostileString },
  { weight: 3, arbitrary: hostileNumber },
  { weight: 1, arbitrary: fc.boolean() },
  { weight: 2, arbitrary: fc.constant(null) },
  { weight: 1, arbitrary: fc.array(fc.oneof(hostileString, hostileNumber, fc.constant(null)), { maxLength: 4 }) },
  { weight: 1, arbitrary: fc.dictionary(fc.string({ maxLength: 8 }), fc.oneof(hostileString, hostileNumber), { maxKeys: 3 }) },
  { weight: 1, arbitrary: fc.integer({ min: 20, max: 300 }).map((d) => nestedValue(d)) },
);

/** Field names an attacker might add. */
export const extraKey: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom('__proto__', 'constructor', 'prototype', 'id', 'workspace_id', 'publisher_id', 'status', 'price', 'balance', 'is_admin', 'api_key', 'toString', ''),
  fc.string({ maxLength: 12 }),
  anyString(8),
);

/** An object or array nested `depth` levels, as a value (kept small enough for JSON.stringify). */
export function nestedValue(depth: number): unknown {
  let v: unknown = 1;
  for (let i = 0; i < depth; i++) v = i % 2 ? [v] : { a: v };
  return v;
}

/** Deeply nested JSON as raw text (depth up to 100,000: only the server has to parse it). */
export const deepJsonText: fc.Arbitrary<string> = fc
  .tuple(fc.constantFrom(1_000, 5_000, 100_000), fc.constantFrom('array', 'object', 'mixed', 'unclosed'))
  .map(([depth, kind]) => {
    if (kind === 'array') return '['.repeat(depth) + ']'.repeat(depth);
    if (kind === 'object') return '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
    if (kind === 'mixed') return '{"a":['.repeat(depth / 2) + '1' + ']}'.repeat(depth / 2);
    return '['.repeat(depth);
  });

/** Over the 1 MB body limit. */
export const oversizedBodyText: fc.Arbitrary<string> = fc
  .constantFrom(1024 * 1024 + 1, 1_200_000, 3_000_000)
  .map((n) => `{"x":"${'a'.repeat(n)}"}`);

/** Percent-encodes UTF-8 bytes; lone surrogates become U+FFFD rather than throwing. */
export function enc(s: string): string {
  try {
    return encodeURIComponent(s);
  } catch {
    return [...Buffer.from(s, 'utf8')].map((b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`).join('');
  }
}

/** application/x-www-form-urlencoded text of a flat-ish value (nested values become JSON text). */
export function formEncode(value: unknown): string {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return `value=${enc(stringify(value))}`;
  const parts: string[] = [];
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    if (Array.isArray(v)) for (const x of v) parts.push(`${enc(k)}=${enc(scalarText(x))}`);
    else parts.push(`${enc(k)}=${enc(scalarText(v))}`);
  }
  return parts.join('&');
}

export function multipartEncode(value: unknown, boundary = '----fuzzboundary'): string {
  const obj = value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : { value };
  let out = '';
  for (const [k, v] of Object.entries(obj)) {
    out += `--${boundary}\r\nContent-Disposition: form-data; name="${k.replace(/"/g, '')}"\r\n\r\n${scalarText(v)}\r\n`;
  }
  return `${out}--${boundary}--\r\n`;
}

function scalarText(v: unknown): string {
  if (typeof v === 'string') return v;
  if (v === undefined) return '';
  return stringify(v);
}

/** JSON.stringify that never throws and never returns undefined. */
export function stringify(v: unknown): string {
  try {
    return JSON.stringify(v) ?? 'null';
  } catch {
    return 'null';
  }
}
