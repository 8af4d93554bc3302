import fc from 'fast-check';
import { extraKey, hostileNumber, hostileString, nestedValue, RAW_NUMBERS, stringify, wrongValue } from './values.js';

// fast-check arbitraries from the JSON schemas of the OpenAPI document and the MCP tools: values
// that satisfy the schema, then mutations of them (a field missing, of the wrong type, hostile,
// extra fields, the whole value replaced), then raw JSON text for what JSON.stringify cannot say.

export interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  items?: JsonSchema;
  enum?: unknown[];
  const?: unknown;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  pattern?: string;
  format?: string;
  default?: unknown;
  [other: string]: unknown;
}

/** Realistic values for fields the world knows about (real ids, matching URLs), by field name. */
export type Hints = Record<string, fc.Arbitrary<unknown>>;

const MAX_STRING = 60;
const MAX_ARRAY = 5;

function stringArb(s: JsonSchema): fc.Arbitrary<string> {
  const min = s.minLength ?? 0;
  const max = Math.max(min, Math.min(s.maxLength ?? MAX_STRING, MAX_STRING));
  if (s.format === 'uri' || s.format === 'url') {
    return fc.oneof(fc.webUrl(), fc.constantFrom('https://buyer.example/product', 'http://localhost/', 'https://example.com/a?b=c#d'));
  }
  if (s.format === 'email') return fc.emailAddress();
  if (s.format === 'date-time') return fc.date({ noInvalidDate: true }).map((d) => d.toISOString());
  if (s.pattern) {
    let re: RegExp | undefined;
    try {
      re = new RegExp(s.pattern);
    } catch {
      re = undefined;
    }
    if (re) return fc.stringMatching(re).filter((x) => x.length >= min && x.length <= (s.maxLength ?? Infinity));
  }
  return fc.string({ minLength: min, maxLength: max });
}

function numberArb(s: JsonSchema, integer: boolean): fc.Arbitrary<number> {
  let min = s.minimum ?? (s.exclusiveMinimum !== undefined ? s.exclusiveMinimum + (integer ? 1 : 0.01) : -1_000_000);
  let max = s.maximum ?? (s.exclusiveMaximum !== undefined ? s.exclusiveMaximum - (integer ? 1 : 0.01) : 1_000_000);
  if (max < min) [min, max] = [max, min];
  if (integer) return fc.integer({ min: Math.ceil(min), max: Math.floor(max) });
  return fc.oneof(
    fc.integer({ min: Math.ceil(min), max: Math.floor(max) }),
    fc.double({ min, max, noNaN: true, noDefaultInfinity: true }).map((x) => Math.round(x * 100) / 100).filter((x) => x >= min && x <= max),
  );
}

function typesOf(s: JsonSchema): string[] {
  if (Array.isArray(s.type)) return s.type;
  if (typeof s.type === 'string') return [s.type];
  if (s.properties) return ['object'];
  if (s.items) return ['array'];
  return [];
}

/** Values that satisfy the schema (as far as this subset of JSON Schema goes). */
export function validArb(s: JsonSchema, hints: Hints = {}, depth = 0): fc.Arbitrary<unknown> {
  if (s.const !== undefined) return fc.constant(s.const);
  if (s.enum && s.enum.length > 0) return fc.constantFrom(...s.enum);
  const alternatives = s.anyOf ?? s.oneOf;
  if (alternatives && alternatives.length > 0) return fc.oneof(...alternatives.map((a) => validArb(a, hints, depth + 1)));
  if (s.allOf && s.allOf.length > 0) return validArb(Object.assign({}, ...s.allOf) as JsonSchema, hints, depth + 1);
  const types = typesOf(s);
  if (types.length === 0) return depth > 3 ? fc.constant(null) : fc.jsonValue({ maxDepth: 2 });
  return fc.oneof(
    ...types.map((t): fc.Arbitrary<unknown> => {
      switch (t) {
        case 'string':
          return stringArb(s);
        case 'integer':
          return numberArb(s, true);
        case 'number':
          return numberArb(s, false);
        case 'boolean':
          return fc.boolean();
        case 'null':
          return fc.constant(null);
        case 'array': {
          const min = s.minItems ?? 0;
          const max = Math.max(min, Math.min(s.maxItems ?? MAX_ARRAY, MAX_ARRAY));
          return fc.array(s.items ? validArb(s.items, hints, depth + 1) : fc.jsonValue({ maxDepth: 1 }), { minLength: min, maxLength: max });
        }
        case 'object':
          return objectArb(s, hints, depth);
        default:
          return fc.constant(null);
      }
    }),
  );
}

function objectArb(s: JsonSchema, hints: Hints, depth: number): fc.Arbitrary<Record<string, unknown>> {
  const props = s.properties ?? {};
  const model: Record<string, fc.Arbitrary<unknown>> = {};
  for (const [name, sub] of Object.entries(props)) {
    const hint = hints[name];
    model[name] = hint ? fc.oneof({ weight: 3, arbitrary: hint }, { weight: 1, arbitrary: validArb(sub, hints, depth + 1) }) : validArb(sub, hints, depth + 1);
  }
  const required = (s.required ?? []).filter((k) => k in model);
  return fc.record(model, { requiredKeys: required }) as fc.Arbitrary<Record<string, unknown>>;
}

export interface Mutated {
  value: unknown;
  /** What was done to the valid value, for the report. */
  note: string;
}

/** A valid value, or one mutation of it. */
export function mutatedArb(s: JsonSchema, hints: Hints = {}): fc.Arbitrary<Mutated> {
  const valid = validArb(s, hints);
  const props = Object.keys(s.properties ?? {});
  const required = s.required ?? [];
  const isObject = typesOf(s).includes('object') || props.length > 0;
  const options: fc.WeightedArbitrary<Mutated>[] = [{ weight: 5, arbitrary: valid.map((value) => ({ value, note: 'valid' })) }];
  if (isObject && required.length > 0) {
    options.push({
      weight: 2,
      arbitrary: fc.tuple(valid, fc.subarray(required, { minLength: 1 })).map(([v, drop]) => {
        const o = { ...(v as Record<string, unknown>) };
        for (const k of drop) delete o[k];
        return { value: o, note: `missing ${drop.join(',')}` };
      }),
    });
  }
  if (isObject && props.length > 0) {
    options.push({
      weight: 5,
      arbitrary: fc.tuple(valid, fc.constantFrom(...props), wrongValue).map(([v, k, w]) => ({
        value: { ...(v as Record<string, unknown>), [k]: w },
        note: `wrong ${k}`,
      })),
    });
    options.push({
      weight: 2,
      // A field of the right kind of type with a hostile value (SQL, traversal, Unicode, huge, boundary numbers).
      arbitrary: fc.tuple(valid, fc.constantFrom(...props), fc.oneof(hostileString, hostileNumber)).map(([v, k, w]) => ({
        value: { ...(v as Record<string, unknown>), [k]: w },
        note: `hostile ${k}`,
      })),
    });
  }
  if (isObject) {
    options.push({
      weight: 2,
      arbitrary: fc.tuple(valid, fc.dictionary(extraKey, wrongValue, { minKeys: 1, maxKeys: 4 })).map(([v, extra]) => ({
        value: Object.assign(Object.create(null), v as object, extra) as Record<string, unknown>,
        note: `extra ${Object.keys(extra).join(',')}`,
      })),
    });
  }
  options.push({
    weight: 1,
    arbitrary: fc
      .oneof(fc.constant(null), fc.constant([]), fc.constant({}), hostileString, hostileNumber, fc.boolean(), valid.map((v) => [v]))
      .map((value) => ({ value, note: 'whole value replaced' })),
  });
  options.push({
    weight: 1,
    arbitrary: fc.integer({ min: 50, max: 500 }).map((d) => ({ value: isObject ? { [props[0] ?? 'a']: nestedValue(d) } : nestedValue(d), note: `nested ${d}` })),
  });
  return fc.oneof(...options);
}

const RAW_MARK = '"__fuzz_raw__"';

/**
 * JSON text that JSON.stringify cannot produce: a number field replaced by a raw token such as
 * 1e309, a key given twice, or a valid body with a malformed tail.
 */
export function rawJsonArb(s: JsonSchema, hints: Hints = {}): fc.Arbitrary<{ text: string; note: string }> {
  const valid = validArb(s, hints);
  const props = Object.keys(s.properties ?? {});
  const options: fc.Arbitrary<{ text: string; note: string }>[] = [
    fc.tuple(valid, fc.constantFrom(...RAW_NUMBERS)).map(([v, raw]) => {
      const text = stringify(v);
      return { text: text.replace(/-?\d+(\.\d+)?([eE][+-]?\d+)?/, raw), note: `raw number ${raw}` };
    }),
    fc.tuple(valid, fc.constantFrom(' x', ',', '}', '\u0000', ']', ',"":')).map(([v, tail]) => ({ text: stringify(v) + tail, note: 'trailing garbage' })),
    valid.map((v) => {
      const t = stringify(v);
      return { text: t.slice(0, Math.max(1, Math.floor(t.length / 2))), note: 'truncated' };
    }),
  ];
  if (props.length > 0) {
    options.push(
      fc.tuple(valid, fc.constantFrom(...props), fc.constantFrom(...RAW_NUMBERS)).map(([v, k, raw]) => {
        const o = { ...(v as Record<string, unknown>), [k]: '__fuzz_raw__' };
        return { text: stringify(o).replace(RAW_MARK, raw), note: `${k} = ${raw}` };
      }),
      fc.tuple(valid, fc.constantFrom(...props), wrongValue).map(([v, k, w]) => {
        const base = stringify(v);
        const dup = `${JSON.stringify(k)}:${stringify(w)}`;
        const text = base.startsWith('{') && base.length > 2 ? `{${dup},${base.slice(1)}` : `{${dup}}`;
        return { text, note: `duplicate ${k}` };
      }),
    );
  }
  return fc.oneof(...options);
}
