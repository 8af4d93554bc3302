import canonicalize from 'canonicalize';

/**
 * JSON text by RFC 8785 (JSON Canonicalization Scheme): object keys sorted, numbers and strings
 * spelled as JSON.stringify spells them, members whose value is undefined left out, so two values
 * that differ only in key order give the same text (request fingerprints, confirmation-token
 * argument hashes). For every request body and tool argument list a schema accepts this is the
 * text the project wrote before it used the library, so fingerprints already kept still match;
 * only keys that look like array indices ("0", "12"), which no schema has, used to come first
 * (test/common/canonical-json.test.ts).
 *
 * A string with an unpaired UTF-16 surrogate has no canonical spelling: it throws. Every input
 * holding one is refused by validation (422 naming the field) before anything is kept.
 */
export function canonicalJson(value: unknown): string {
  const text = canonicalize(value);
  if (text === undefined) throw new TypeError('canonicalJson: the value has no JSON text');
  return text;
}
