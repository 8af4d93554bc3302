import type { FastifyRequest } from 'fastify';
import sjson from 'secure-json-parse';
import { bearerToken } from '../plugins/auth.js';
import { topLevelMembers } from '../plugins/json-scan.js';
import { badlyEncodedNames, parseQueryString } from '../plugins/query-string.js';
import { msg } from '../../schemas/catalog.js';
import { catalogError } from './errors.js';

// The seller API reads every parameter (api_key, item_id, purchase_code) from the query string, a
// form body or a JSON body, on GET and POST alike, and api_key also from Authorization: Bearer
// (docs/interface-b.md). Values are trimmed; the same parameter given twice with different values
// is a conflict, not a choice.

/** A value that cannot be a parameter: a JSON object, boolean or array where a scalar belongs. */
const UNUSABLE = Symbol('unusable');
type Raw = string | number | typeof UNUSABLE;

export type Param =
  | { kind: 'missing' }
  | { kind: 'unusable' } // a non-scalar, or different values in different places
  | { kind: 'value'; value: string | number };

type BodyKind = 'form' | 'json' | 'none';

export interface CatalogInput {
  query: unknown;
  body: unknown;
  bodyKind: BodyKind;
  /** Every Authorization header as sent (Node keeps only the first in `headers`). */
  authorizations: string[];
}

function mediaType(request: FastifyRequest): string {
  const ct = request.headers['content-type'];
  return ct ? (ct.split(';')[0] ?? '').trim().toLowerCase() : '';
}

/**
 * application/x-www-form-urlencoded, read by Fastify's own query-string parser (a name given twice
 * becomes a list); percent-escapes that are not UTF-8 make the body unparseable (400).
 */
export function parseForm(text: string): Record<string, string | string[]> {
  const parsed = parseQueryString(text);
  if (badlyEncodedNames(parsed)) throw new URIError('a form parameter is not percent-encoded UTF-8');
  return parsed as Record<string, string | string[]>;
}

/** The parameters the seller API reads from a body. */
const PARAMETERS = ['api_key', 'item_id', 'purchase_code'] as const;

/**
 * A JSON body (`{}` when empty). JSON.parse keeps the last of two members with the same name; a
 * parameter given twice with different values is a conflict (docs/interface-b.md), so such a
 * parameter is replaced by a value no parameter accepts.
 */
export function parseJson(text: string): unknown {
  const t = text.trim();
  if (t === '') return {};
  const parsed: unknown = sjson.parse(t, undefined, { protoAction: 'remove', constructorAction: 'remove' });
  if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) {
    for (const name of conflictingMembers(t)) (parsed as Record<string, unknown>)[name] = { given: 'twice, with different values' };
  }
  return parsed;
}

/** The seller API's parameters named more than once, with different values, in a valid JSON object's text. */
function conflictingMembers(t: string): string[] {
  const values = new Map<string, string[]>();
  for (const { name, valueText } of topLevelMembers(t)) {
    if ((PARAMETERS as readonly string[]).includes(name)) values.set(name, [...(values.get(name) ?? []), valueText]);
  }
  const same = (name: string) => (v: string) => {
    const x: unknown = JSON.parse(v);
    if (typeof x === 'string') return name === 'purchase_code' ? x.trim().toLowerCase() : x.trim();
    return typeof x === 'number' ? String(x) : v;
  };
  return [...values].filter(([name, vs]) => new Set(vs.map(same(name))).size > 1).map(([name]) => name);
}

function parseBody(type: string, text: string): unknown {
  try {
    if (type === 'application/json') return parseJson(text);
    if (type === 'application/x-www-form-urlencoded') return parseForm(text);
  } catch {
    throw catalogError('bad_request', msg.invalidRequest);
  }
  if (text.trim() === '') return undefined;
  throw catalogError('bad_request', msg.invalidRequest); // a body in a media type we do not read
}

/**
 * Fastify parses bodies only for methods that carry one, so a GET's body (which the seller API
 * accepts) is read here, with the route's own limit (8 KB).
 */
async function readGetBody(request: FastifyRequest): Promise<unknown> {
  const length = request.headers['content-length'];
  if (request.headers['transfer-encoding'] === undefined && (length === undefined || length === '0')) return undefined;
  const limit = request.routeOptions.bodyLimit;
  if (length !== undefined && Number(length) > limit) throw catalogError('payload_too_large', msg.payloadTooLarge);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request.raw) {
    size += (chunk as Buffer).length;
    if (size > limit) throw catalogError('payload_too_large', msg.payloadTooLarge);
    chunks.push(chunk as Buffer);
  }
  return parseBody(mediaType(request), Buffer.concat(chunks).toString('utf8'));
}

export async function catalogInput(request: FastifyRequest): Promise<CatalogInput> {
  const type = mediaType(request);
  const body = request.method === 'GET' || request.method === 'HEAD' ? await readGetBody(request) : request.body;
  // Fastify leaves `body` null when there was none; a JSON `null` literal is a (bad) body.
  const none = body === undefined || (body === null && type !== 'application/json');
  const bodyKind: BodyKind = none ? 'none' : type === 'application/x-www-form-urlencoded' ? 'form' : 'json';
  // Only a JSON object can carry named parameters: `null`, `[]`, `"x"` or `5` is a bad body.
  if (bodyKind === 'json' && (body === null || typeof body !== 'object' || Array.isArray(body))) {
    throw catalogError('bad_request', msg.invalidRequest);
  }
  return { query: request.query, body, bodyKind, authorizations: authorizationHeaders(request.raw.rawHeaders) };
}

function authorizationHeaders(raw: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) if (raw[i]!.toLowerCase() === 'authorization') out.push(raw[i + 1]!);
  return out;
}

function collect(container: unknown, name: string, repeatsAllowed: boolean, into: Raw[]): void {
  if (!container || typeof container !== 'object') return;
  if (!Object.hasOwn(container, name)) return;
  const v = (container as Record<string, unknown>)[name];
  // Query strings and forms repeat a name to give several values; in JSON an array is one value.
  const values = repeatsAllowed && Array.isArray(v) ? v : [v];
  for (const x of values) {
    if (x === null || x === undefined) continue; // JSON null: as if not given
    if (typeof x === 'string') into.push(x.trim());
    else if (typeof x === 'number' && Number.isFinite(x)) into.push(x);
    else into.push(UNUSABLE);
  }
}

function resolve(values: Raw[]): Param {
  if (values.length === 0) return { kind: 'missing' };
  const first = values[0]!;
  for (const v of values) {
    if (v === UNUSABLE || String(v) !== String(first)) return { kind: 'unusable' };
  }
  return { kind: 'value', value: first as string | number };
}

// `item_id=01` and a JSON `"item_id": 1` name the same item: compared without leading zeros.
const withoutLeadingZeros = (v: Raw): Raw => (typeof v === 'string' && /^\d+$/.test(v) ? v.replace(/^0+(?=\d)/, '') : v);

// Purchase codes validate whatever their case, so a code and its upper-case spelling are one value.
const caseless = (v: Raw): Raw => (typeof v === 'string' ? v.toLowerCase() : v);

export function param(input: CatalogInput, name: 'item_id' | 'purchase_code'): Param {
  const values: Raw[] = [];
  collect(input.query, name, true, values);
  collect(input.body, name, input.bodyKind === 'form', values);
  return resolve(values.map(name === 'item_id' ? withoutLeadingZeros : caseless));
}

/** The api_key, or undefined when it is missing, empty, not a string, or given with different values. */
export function apiKey(input: CatalogInput): string | undefined {
  const values: Raw[] = [];
  collect(input.query, 'api_key', true, values);
  collect(input.body, 'api_key', input.bodyKind === 'form', values);
  for (const auth of input.authorizations) {
    if (/^bearer(?:\s|$)/i.test(auth)) values.push(bearerToken(auth) ?? UNUSABLE);
  }
  const p = resolve(values);
  return p.kind === 'value' && typeof p.value === 'string' && p.value !== '' ? p.value : undefined;
}

/** item_id as an integer in 1..2147483647, or the documented 400. */
export function itemId(input: CatalogInput): number {
  const p = param(input, 'item_id');
  if (p.kind === 'missing' || (p.kind === 'value' && p.value === '')) throw catalogError('bad_request', msg.itemIdRequired);
  if (p.kind === 'value') {
    // Leading zeros are allowed (docs/interface-b.md) and already gone (param), so at most ten digits.
    const n = typeof p.value === 'number' ? p.value : /^\d{1,10}$/.test(p.value) ? Number(p.value) : NaN;
    if (Number.isInteger(n) && n >= 1 && n <= 2_147_483_647) return n;
  }
  throw catalogError('bad_request', msg.itemIdInteger);
}

/** purchase_code as given (trimmed), or undefined when it cannot be a code; 400 when missing or empty. */
export function purchaseCode(input: CatalogInput): string | undefined {
  const p = param(input, 'purchase_code');
  if (p.kind === 'missing' || (p.kind === 'value' && p.value === '')) throw catalogError('bad_request', msg.purchaseCodeRequired);
  return p.kind === 'value' && typeof p.value === 'string' && p.value.length <= 64 ? p.value : undefined;
}
