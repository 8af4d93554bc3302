/**
 * JSON text with every object's keys sorted, so two values that differ only in key order give the
 * same text (request fingerprints, confirmation-token argument hashes). Members whose value is
 * undefined are left out, as JSON.stringify leaves them out. The recursion is as deep as the
 * value: request bodies reach it only after the JSON parser refused deeply nested ones.
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortedKeys(value));
}

function sortedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortedKeys);
  if (value && typeof value === 'object') {
    const object = value as Record<string, unknown>;
    return Object.fromEntries(
      Object.keys(object)
        .sort()
        .filter((k) => object[k] !== undefined)
        .map((k) => [k, sortedKeys(object[k])]),
    );
  }
  return value;
}
