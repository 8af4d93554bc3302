import { hash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../src/common/canonical-json.js';

// Request fingerprints and confirmation-token argument hashes are kept (idempotency records,
// mcp_confirmations) and compared with the hash of a later request: the canonical text of any
// value parsed from JSON must stay what it was before the project used the RFC 8785 library.

/** How the project spelled canonical JSON before: keys sorted, undefined members left out. */
function before(value: unknown): string {
  const sorted = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(sorted)
      : v && typeof v === 'object'
        ? Object.fromEntries(
            Object.keys(v)
              .sort()
              .filter((k) => (v as Record<string, unknown>)[k] !== undefined)
              .map((k) => [k, sorted((v as Record<string, unknown>)[k])]),
          )
        : v;
  return JSON.stringify(sorted(value));
}

/** Whether some object in `v` has a key JavaScript orders first (a canonical array index: "0", "12"). */
function hasIndexKey(v: unknown): boolean {
  if (Array.isArray(v)) return v.some(hasIndexKey);
  if (v === null || typeof v !== 'object') return false;
  return Object.entries(v).some(([k, item]) => /^(0|[1-9]\d*)$/.test(k) || hasIndexKey(item));
}

describe('canonical JSON', () => {
  it('gives a fingerprint kept before the change the same hash', () => {
    const material = ['POST', '/api/v1/orders', {}, {
      target_url: 'https://x.example/é', offer_ids: [3, 1], anchor_text: 'ünïcode 😀', quoted_total_cents: 1999,
      nested: { b: [1.5, -0, 1e21, null, true], a: 'x' },
    }];
    expect(canonicalJson(material)).toBe(
      '["POST","/api/v1/orders",{},{"anchor_text":"ünïcode 😀","nested":{"a":"x","b":[1.5,0,1e+21,null,true]},"offer_ids":[3,1],"quoted_total_cents":1999,"target_url":"https://x.example/é"}]',
    );
    expect(hash('sha256', canonicalJson(material), 'hex')).toBe('15fe7c1cffab583d3de3c6663a481fa2624a262f12af9cd0ed01221d75028ff7');
  });

  it('spells every JSON value as before, whatever its key order, unless a key is an array index', () => {
    fc.assert(
      fc.property(fc.jsonValue().filter((v) => !hasIndexKey(v)), (parsed) => {
        expect(canonicalJson(parsed)).toBe(before(parsed));
        expect(canonicalJson(JSON.parse(JSON.stringify(parsed)))).toBe(before(parsed));
      }),
      { numRuns: 500 },
    );
  });

  it('leaves out undefined members, as JSON.stringify does, and sorts keys by UTF-16 code units', () => {
    expect(canonicalJson({ b: undefined, a: [undefined, 1] })).toBe('{"a":[null,1]}');
    expect(canonicalJson({ '€': 1, '\u{1F600}': 2, a: 3 })).toBe(before({ '€': 1, '\u{1F600}': 2, a: 3 }));
  });

  it('sorts keys that look like array indices with the others, as RFC 8785 does; before, they came first', () => {
    // JavaScript objects list such keys first, so the old sort was undone for them. Every request
    // body is a strict schema's object whose field names are words, so no kept fingerprint had one.
    expect(canonicalJson({ b: 1, 10: 2, 9: 3 })).toBe('{"10":2,"9":3,"b":1}');
    expect(before({ b: 1, 10: 2, 9: 3 })).toBe('{"9":3,"10":2,"b":1}');
  });

  it('refuses an unpaired surrogate, which has no canonical spelling', () => {
    expect(() => canonicalJson({ a: 'x\ud800' })).toThrow();
    expect(() => canonicalJson({ 'x\udc00': 1 })).toThrow();
  });
});
