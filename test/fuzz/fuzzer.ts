import fc from 'fast-check';
import type pg from 'pg';
import type { ManualClock } from '../helpers/clock.js';
import { msg as catalogMsg } from '../../src/schemas/catalog.js';
import { httpStatusOf } from '../../src/http/plugins/errors.js';
import { type Hints, type JsonSchema, mutatedArb, rawJsonArb, validArb } from './schema-arb.js';
import {
  CONTENT_TYPES,
  deepJsonText,
  enc,
  formEncode,
  hostileNumber,
  hostileString,
  hugeString,
  ID_STRINGS,
  MALFORMED_JSON,
  MALFORMED_QUERY_FRAGMENTS,
  multipartEncode,
  oversizedBodyText,
  stringify,
  wrongValue,
} from './values.js';
import { type App, article, type KeyKind, type RealKeyKind, type World, type WorldOrder } from './world.js';

// Schema-driven fuzzing of every route (the reliability issue, item 1). Requests are generated
// from the OpenAPI document the app serves and from the MCP tools' input schemas, sent in-process
// with inject() one at a time, and each response is checked: no 5xx, the surface's own shape, no
// internals leaked, X-Request-Id, the auth precedence the contract gives, no other tenant's data,
// and no ledger or balance change unless the request legitimately moves money.

export type Surface = 'A' | 'publisher' | 'B' | 'mcp' | 'ops';

export interface FuzzRequest {
  /** The generator: "GET /api/v1/orders/{id}", "MCP tools/call get-order", "random path"… */
  op: string;
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string;
  key: KeyKind;
  /** What was done to the input, for the report. */
  note: string;
  /** Statuses the contract leaves no choice about (auth precedence), when the request is clean. */
  expectStatus?: { statuses: number[]; why: string };
  /** Set when the request names another tenant's resource: success would be a leak. */
  crossTenant?: string;
}

export interface Operation {
  method: string;
  path: string;
  parameters: { name: string; in: string; required?: boolean; schema?: JsonSchema }[];
  body?: { contentTypes: string[]; schema: JsonSchema };
  secured: boolean;
}

export interface McpTool {
  name: string;
  inputSchema: JsonSchema;
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch'] as const;
const ALL_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'];
const MCP_ACCEPT = 'application/json, text/event-stream';
/** Routes that need a spending key (route config `spending: true`; not in the OpenAPI document). */
const SPENDING = new Set(['POST /api/v1/orders', 'POST /api/v1/orders/{id}/approve']);
/** 2xx answers of these may move money (placement, release, refund); any other change is a violation. */
const MONEY_ROUTES = [/^\/api\/v1\/orders\/?$/, /^\/api\/v1\/orders\/[^/]+\/(approve|cancel)\/?$/, /^\/api\/v1\/publisher\/orders\/[^/]+\/decline\/?$/];
const MONEY_TOOLS = ['place-orders', 'approve-placement', 'cancel-order'];
// Repeated slashes too, as the server reads them (`/api//items/all` is an unknown path of B's).
const CATALOG_PATH = /^\/+api\/+(account|items|purchases)(\/|$)/i;

/** Every operation of the OpenAPI document. */
export function listOperations(doc: { paths: Record<string, Record<string, unknown>> }): Operation[] {
  const out: Operation[] = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const m of METHODS) {
      const op = item[m] as
        | {
            parameters?: Operation['parameters'];
            requestBody?: { content?: Record<string, { schema?: JsonSchema }> };
            security?: unknown[];
          }
        | undefined;
      if (!op) continue;
      const content = op.requestBody?.content ?? {};
      const types = Object.keys(content);
      const schema = content['application/json']?.schema ?? (types[0] ? content[types[0]]?.schema : undefined);
      out.push({
        method: m.toUpperCase(),
        path,
        parameters: op.parameters ?? [],
        ...(schema ? { body: { contentTypes: types, schema } } : {}),
        secured: Array.isArray(op.security) && op.security.length > 0,
      });
    }
  }
  return out;
}

/** The path the server sees: inject() resolves dot segments (also %2e) the way URL does. */
export function serverPath(url: string): string {
  const raw = url.split('?')[0] ?? '';
  try {
    return new URL(raw, 'http://localhost').pathname;
  } catch {
    return raw;
  }
}

export function surfaceOf(url: string): Surface {
  const path = serverPath(url);
  if (CATALOG_PATH.test(path)) return 'B';
  if (/^\/mcp\/?$/.test(path)) return 'mcp';
  if (/^\/(healthz|readyz|openapi\.json|docs)(\/|$)/.test(path)) return 'ops';
  if (path.startsWith('/api/v1/publisher')) return 'publisher';
  return 'A';
}

// ---------------------------------------------------------------------------------------------
// Keys

const workspaceOf = (world: World, kind: KeyKind): number | null =>
  kind in world.keys ? world.keys[kind as RealKeyKind].workspaceId : null;
const publisherOf = (world: World, kind: KeyKind): number | null =>
  kind in world.keys ? world.keys[kind as RealKeyKind].publisherId : null;
/** A key that authenticates (known, not revoked). */
const liveKey = (world: World, kind: KeyKind) => kind in world.keys && !world.keys[kind as RealKeyKind].revoked;

const keyKindArb = (boost: Partial<Record<KeyKind, number>> = {}): fc.Arbitrary<KeyKind> => {
  const weights: Record<KeyKind, number> = {
    none: 1,
    malformed: 2,
    unknown: 1,
    revoked: 1,
    revokedSpend: 1,
    read: 5,
    spend: 4,
    otherRead: 2,
    otherSpend: 1,
    poorSpend: 1,
    publisher: 2,
    otherPublisher: 1,
    ...boost,
  };
  return fc.oneof(...Object.entries(weights).map(([k, weight]) => ({ weight, arbitrary: fc.constant(k as KeyKind) })));
};

/** Authorization header values that can never authenticate. */
function malformedAuth(world: World): string[] {
  const k = world.keys.read.raw;
  return [
    'Bearer',
    'Bearer ',
    'Bearer  ',
    'Basic dXNlcjpwYXNz',
    `Token ${k}`,
    k,
    `Bearer ${k} extra`,
    `Bearer\t${k}`,
    `Bearer ${k.slice(0, -1)}`,
    `Bearer ${k}x`,
    `Bearer mk_${'A'.repeat(500)}`,
    `Bearer ${'x'.repeat(8000)}`,
    'Bearer null',
    "Bearer ' OR 1=1 --",
    'Bearer ../../etc/passwd',
    `Bearer ${k},Bearer ${k}`,
    `Bearer ${k.toUpperCase()}`,
  ];
}

function authHeader(world: World, kind: KeyKind, pick: number, unknown: string): string | undefined {
  switch (kind) {
    case 'none':
      return undefined;
    case 'malformed': {
      const all = malformedAuth(world);
      return all[pick % all.length];
    }
    case 'unknown':
      return `Bearer ${unknown}`;
    default:
      return `Bearer ${world.keys[kind].raw}`;
  }
}

/** A raw api_key value for Interface B. */
function rawKey(world: World, kind: KeyKind, pick: number, unknown: string): string | undefined {
  switch (kind) {
    case 'none':
      return undefined;
    case 'malformed': {
      const k = world.keys.read.raw;
      const all = ['', ' ', 'mk_', k.slice(0, -1), `${k}x`, `${k} ${k}`, `mk_${'A'.repeat(500)}`, "' OR 1=1 --", '../../etc/passwd', 'null', k.toUpperCase(), '\u0000', 'é'];
      return all[pick % all.length];
    }
    case 'unknown':
      return unknown;
    default:
      return world.keys[kind].raw;
  }
}

/** Known-format but unknown keys, deterministic from the seed. */
const unknownKeyArb = fc.stringMatching(/^[A-Za-z0-9]{32}$/).map((s) => `mk_${s}`);

// ---------------------------------------------------------------------------------------------
// Common pieces

const requestIdArb = fc.oneof(
  { weight: 8, arbitrary: fc.constant(undefined) },
  { weight: 2, arbitrary: fc.stringMatching(/^[A-Za-z0-9._-]{1,40}$/) },
  { weight: 1, arbitrary: fc.constantFrom('bad id!', 'x'.repeat(129), '../etc/passwd', "' OR 1=1", '', 'a,b', '%00') },
);

const idempotencyArb = fc.oneof(
  { weight: 2, arbitrary: fc.constant(undefined) },
  { weight: 6, arbitrary: fc.uuid() },
  { weight: 2, arbitrary: fc.constantFrom('fuzz-reused-1', 'fuzz-reused-2') },
  { weight: 1, arbitrary: fc.constantFrom(' ', 'x'.repeat(256), 'x'.repeat(5000), 'a b', "' OR 1=1 --", '\t') },
);

const otherMethodArb = (method: string) => fc.constantFrom(...ALL_METHODS.filter((m) => m !== method));

type Mangle = 'none' | 'trailing-slash' | 'double-slash' | 'upper' | 'extra-segment' | 'dot-dot' | 'encoded-slash' | 'matrix' | 'v2';
const mangleArb: fc.Arbitrary<Mangle> = fc.oneof(
  { weight: 30, arbitrary: fc.constant<Mangle>('none') },
  { weight: 1, arbitrary: fc.constantFrom<Mangle>('trailing-slash', 'double-slash', 'upper', 'extra-segment', 'dot-dot', 'encoded-slash', 'matrix', 'v2') },
);

function mangle(path: string, how: Mangle): string {
  switch (how) {
    case 'none':
      return path;
    case 'trailing-slash':
      return `${path}/`;
    case 'double-slash':
      return path.replace(/\/([^/]*)$/, '//$1');
    case 'upper':
      return path.toUpperCase();
    case 'extra-segment':
      return `${path}/extra`;
    case 'dot-dot':
      return `${path}/..`;
    case 'encoded-slash':
      return path.replace(/\/([^/]*)$/, '%2F$1');
    case 'matrix':
      return `${path};jsessionid=1`;
    case 'v2':
      return path.replace('/api/v1', '/api/v2');
  }
}

/**
 * Query string pieces (already encoded): a valid set of parameters (each optional one present or
 * not), then up to three mutations (hostile, duplicated, empty or bracketed), extra parameters or
 * raw malformed fragments. About a third of the time nothing is mutated, so valid filter
 * combinations reach the database too.
 */
function queryArb(params: Operation['parameters'], hints: Hints): fc.Arbitrary<{ parts: string[]; note: string }> {
  const values = params.map((p) =>
    fc.option(
      (hints[p.name] ? fc.oneof(hints[p.name]!, p.schema ? validArb(p.schema, hints) : fc.string()) : p.schema ? validArb(p.schema, hints) : fc.string()).map((v) => String(v)),
      { nil: undefined, freq: p.required ? 1_000_000 : 2 },
    ),
  );
  type Mutation = { target: number; mode: 'hostile' | 'duplicate' | 'empty' | 'array'; value: string };
  const mutation: fc.Arbitrary<Mutation> = fc.record({
    target: fc.nat(),
    mode: fc.constantFrom<Mutation['mode']>('hostile', 'hostile', 'hostile', 'duplicate', 'empty', 'array'),
    value: fc.oneof(
      fc.constantFrom(...ID_STRINGS),
      hostileString.map(enc),
      hostileNumber.map((n) => enc(String(n))),
    ),
  });
  const mutations = params.length
    ? fc.oneof({ weight: 4, arbitrary: fc.constant<Mutation[]>([]) }, { weight: 4, arbitrary: fc.array(mutation, { minLength: 1, maxLength: 1 }) }, { weight: 2, arbitrary: fc.array(mutation, { minLength: 2, maxLength: 3 }) })
    : fc.constant<Mutation[]>([]);
  const extras = fc.oneof(
    { weight: 8, arbitrary: fc.constant<string[]>([]) },
    { weight: 1, arbitrary: fc.array(fc.tuple(fc.oneof(fc.constantFrom('__proto__', 'constructor', 'api_key', 'x'), fc.string({ maxLength: 8 })), hostileString).map(([k, v]) => `${enc(k)}=${enc(v)}`), { minLength: 1, maxLength: 3 }) },
    { weight: 1, arbitrary: fc.constantFrom(...MALFORMED_QUERY_FRAGMENTS).map((f) => [f]) },
  );
  return fc.tuple(fc.tuple(...values), mutations, extras, fc.boolean()).map(([vals, muts, extra, shuffle]) => {
    const pairs: [string, string][] = [];
    params.forEach((p, i) => {
      if (vals[i] !== undefined) pairs.push([enc(p.name), enc(vals[i]!)]);
    });
    const notes: string[] = [];
    for (const m of muts) {
      const p = params[m.target % params.length]!;
      const n = enc(p.name);
      const at = pairs.findIndex(([k]) => k === n);
      const current = at === -1 ? undefined : pairs[at]![1];
      const set = (v: string) => (at === -1 ? pairs.push([n, v]) : (pairs[at] = [n, v]));
      if (m.mode === 'hostile') set(m.value);
      else if (m.mode === 'empty') set('');
      else if (m.mode === 'duplicate') pairs.push([n, current === undefined ? m.value : m.value === current ? `${m.value}x` : m.value]);
      else pairs.push([`${n}[]`, m.value], [`${n}[x]`, m.value]);
      notes.push(`${m.mode} ${p.name}`);
    }
    const parts = [...pairs.map(([k, v]) => `${k}=${v}`), ...extra];
    if (shuffle) parts.reverse();
    if (extra.length) notes.push('extra query');
    return { parts, note: notes.join('; ') };
  });
}

interface BodyChoice {
  body?: string;
  contentType?: string;
  note: string;
}

/** A request body for a JSON schema: mostly JSON (valid or mutated), sometimes raw or another media type. */
function bodyArb(schema: JsonSchema | undefined, hints: Hints, forms = false): fc.Arbitrary<BodyChoice> {
  const s: JsonSchema = schema ?? { type: 'object', properties: {} };
  const json = (ct: string | undefined) =>
    mutatedArb(s, hints).map((m): BodyChoice => ({ body: stringify(m.value), ...(ct ? { contentType: ct } : {}), note: `json ${m.note}` }));
  return fc.oneof(
    { weight: 12, arbitrary: json('application/json') },
    { weight: 1, arbitrary: json('application/json; charset=utf-8') },
    { weight: 3, arbitrary: rawJsonArb(s, hints).map((r): BodyChoice => ({ body: r.text, contentType: 'application/json', note: `raw json: ${r.note}` })) },
    { weight: 2, arbitrary: fc.constantFrom(...MALFORMED_JSON).map((t): BodyChoice => ({ body: t, contentType: 'application/json', note: 'malformed json' })) },
    { weight: 1, arbitrary: deepJsonText.map((t): BodyChoice => ({ body: t, contentType: 'application/json', note: `deep json (${t.length} chars)` })) },
    {
      weight: forms ? 4 : 2,
      arbitrary: fc.tuple(fc.constantFrom(...CONTENT_TYPES), mutatedArb(s, hints)).map(([ct, m]): BodyChoice => {
        const body = ct?.startsWith('application/x-www-form-urlencoded')
          ? formEncode(m.value)
          : ct?.startsWith('multipart/')
            ? multipartEncode(m.value)
            : stringify(m.value);
        return { body, ...(ct ? { contentType: ct } : {}), note: `content-type ${ct ?? 'none'}: ${m.note}` };
      }),
    },
    { weight: 1, arbitrary: fc.constantFrom<BodyChoice>({ note: 'no body' }, { body: '', contentType: 'application/json', note: 'empty json body' }, { body: '{}', note: '{} without content-type' }) },
    { weight: 1, arbitrary: oversizedBodyText.map((t): BodyChoice => ({ body: t, contentType: 'application/json', note: `oversized body (${t.length} bytes)` })) },
  );
}

/** An occasional body on a route that takes none (GETs included). */
const strayBodyArb: fc.Arbitrary<BodyChoice> = fc.oneof(
  { weight: 12, arbitrary: fc.constant<BodyChoice>({ note: '' }) },
  { weight: 1, arbitrary: bodyArb(undefined, {}) },
);

// ---------------------------------------------------------------------------------------------
// Ids

interface IdPick {
  text: string;
  /** The world order/outlet behind a clean id. */
  order?: World['orders'][number];
}

function orderIdArb(world: World): fc.Arbitrary<IdPick> {
  return fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom(...world.orders).map((o): IdPick => ({ text: String(o.id), order: o })) },
    { weight: 2, arbitrary: fc.constantFrom(...ID_STRINGS).map((text): IdPick => ({ text })) },
    { weight: 1, arbitrary: fc.constantFrom(...world.outlets.map((o) => o.id), ...world.items.map((i) => i.id)).map((n): IdPick => ({ text: String(n) })) },
    { weight: 1, arbitrary: fc.oneof(fc.integer({ min: 1, max: 2_147_483_647 }).map(String), hostileString.map(enc)).map((text): IdPick => ({ text })) },
  );
}

function outletIdArb(world: World): fc.Arbitrary<IdPick> {
  return fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom(...world.outlets).map((o): IdPick => ({ text: String(o.id) })) },
    { weight: 2, arbitrary: fc.constantFrom(...ID_STRINGS).map((text): IdPick => ({ text })) },
    { weight: 1, arbitrary: fc.oneof(fc.integer({ min: 1, max: 2_147_483_647 }).map(String), hostileString.map(enc)).map((text): IdPick => ({ text })) },
  );
}

/** Realistic values by field name, so generated bodies reach the domain logic. */
function hintsFor(world: World): Hints {
  const orderIds = world.orders.map((o) => o.id);
  const liveUrls = world.outlets.map((o) => `https://${o.domain}/fuzz-post`);
  return {
    offer_ids: fc.array(fc.constantFrom(...world.offers.map((o) => o.id)), { minLength: 1, maxLength: 3 }),
    target_url: fc.constantFrom('https://buyer.example/product', 'https://buyer.example/'),
    anchor_text: fc.constantFrom('our product', 'travel app'),
    live_url: fc.constantFrom(...liveUrls),
    order_id: fc.constantFrom(...orderIds),
    outlet_id: fc.constantFrom(...world.outlets.map((o) => o.id)),
    project_id: fc.constantFrom(...world.projects.map((p) => p.id)),
    content: fc.constant(article()),
    body: fc.oneof(fc.constant(article()), fc.string({ minLength: 1, maxLength: 40 })),
    title: fc.constantFrom('A fine title for an article', 'Draft title'),
    content_title: fc.constantFrom('A fine title for an article'),
    goal: fc.constantFrom('launch a travel app', 'technology news for developers'),
    budget_usd: fc.constantFrom(100, 1500, 0.01, 9_999_999),
    confirmation_token: world.tokens.length ? fc.constantFrom(...world.tokens) : fc.string({ minLength: 1, maxLength: 40 }),
    reason: fc.constantFrom('Not a fit for our readers.'),
    page: fc.constantFrom('1', '2'),
    per_page: fc.constantFrom('1', '15', '100'),
    q: fc.constantFrom('news', 'outlet', 'technology', 'Outlet 1'),
    topic: fc.constantFrom('technology', 'travel'),
    country: fc.constantFrom('US', 'de'),
  };
}

// ---------------------------------------------------------------------------------------------
// Generators

function assemble(parts: {
  op: string;
  method: string;
  path: string;
  query: string[];
  key: KeyKind;
  auth: string | undefined;
  requestId: string | undefined;
  body: BodyChoice;
  extraHeaders?: Record<string, string | undefined>;
  notes: string[];
}): FuzzRequest {
  const headers: Record<string, string> = {};
  if (parts.auth !== undefined) headers.authorization = parts.auth;
  if (parts.requestId !== undefined) headers['x-request-id'] = parts.requestId;
  if (parts.body.contentType !== undefined) headers['content-type'] = parts.body.contentType;
  for (const [k, v] of Object.entries(parts.extraHeaders ?? {})) if (v !== undefined) headers[k] = v;
  const url = parts.query.length ? `${parts.path}?${parts.query.join('&')}` : parts.path;
  return {
    op: parts.op,
    method: parts.method,
    url,
    headers,
    ...(parts.body.body !== undefined ? { body: parts.body.body } : {}),
    key: parts.key,
    note: [...parts.notes, parts.body.note].filter(Boolean).join('; '),
  };
}

/** The world order a query's one `order_id` parameter names, if it names one. */
function filteredOrder(world: World, parts: string[]): WorldOrder | undefined {
  const values = parts.filter((p) => p.startsWith('order_id=')).map((p) => p.slice('order_id='.length));
  return values.length === 1 && /^\d+$/.test(values[0]!) ? world.orders.find((x) => x.id === Number(values[0])) : undefined;
}

/** Requests for one operation of the OpenAPI document (Interface A, the publisher API, ops). */
function operationArb(op: Operation, world: World, hints: Hints): fc.Arbitrary<FuzzRequest> {
  const opName = `${op.method} ${op.path}`;
  const isPublisher = op.path.startsWith('/api/v1/publisher');
  const hasId = op.path.includes('{id}');
  const idArb: fc.Arbitrary<IdPick> = hasId ? (op.path.includes('/outlets/') ? outletIdArb(world) : orderIdArb(world)) : fc.constant({ text: '' });
  const query = op.parameters.filter((p) => p.in === 'query');
  const headerParams = op.parameters.filter((p) => p.in === 'header').map((p) => p.name.toLowerCase());
  const wantsIdempotency = op.method === 'POST' && op.path.startsWith('/api/v1');
  return fc
    .record({
      method: fc.oneof({ weight: 14, arbitrary: fc.constant(op.method) }, { weight: 1, arbitrary: otherMethodArb(op.method) }),
      mangle: mangleArb,
      id: idArb,
      query: queryArb(query, hints),
      key: keyKindArb(isPublisher ? { publisher: 6, otherPublisher: 3 } : {}),
      pick: fc.nat(),
      unknown: unknownKeyArb,
      requestId: requestIdArb,
      idem: wantsIdempotency || headerParams.includes('idempotency-key') ? idempotencyArb : fc.constant(undefined),
      body: op.body ? bodyArb(op.body.schema, hints) : strayBodyArb,
    })
    .map((r) => {
      const cleanPath = op.path.replace('{id}', r.id.text);
      const path = mangle(cleanPath, r.mangle);
      const req = assemble({
        op: opName,
        method: r.method,
        path,
        query: r.query.parts,
        key: r.key,
        auth: authHeader(world, r.key, r.pick, r.unknown),
        requestId: r.requestId,
        body: r.body,
        extraHeaders: { 'idempotency-key': r.idem },
        notes: [r.mangle !== 'none' ? `path ${r.mangle}` : '', r.method !== op.method ? `method ${r.method}` : '', r.query.note],
      });
      // Ids the router itself refuses (over 100 characters, malformed percent-encoding) never reach a route;
      // an empty last id names the collection's path, another route (DELETE there is a 405 for any key).
      const routable = r.id.text.length <= 100 && !/^(?:\.|%2e){1,2}$/i.test(r.id.text) && !(r.id.text === '' && op.path.endsWith('{id}'));
      const clean = r.mangle === 'none' && r.method === op.method && routable && isDecodable(r.id.text);
      if (clean && op.secured) {
        const live = liveKey(world, r.key);
        const ws = workspaceOf(world, r.key);
        const pub = publisherOf(world, r.key);
        if (!live) req.expectStatus = { statuses: [401], why: `key kind ${r.key} on a secured route` };
        else if (isPublisher && pub === null) req.expectStatus = { statuses: [403], why: 'a workspace key on a publisher route' };
        else if (!isPublisher && ws === null) req.expectStatus = { statuses: [403], why: 'a publisher key on a buyer route' };
        else if (SPENDING.has(opName) && !world.keys[r.key as RealKeyKind].canSpend) req.expectStatus = { statuses: [403], why: 'a read-only key on a spending route' };
        // The id is an order's only on order paths (a webhook endpoint's id is its own); the
        // events feed's order_id filter names an order too (docs/events.md).
        const o = op.path.includes('/orders/') ? r.id.order : op.path.endsWith('/events') ? filteredOrder(world, r.query.parts) : undefined;
        if (live && o) {
          if (!isPublisher && ws !== null && o.workspaceId !== ws) req.crossTenant = `order ${o.id} of workspace ${o.workspaceId} with a key of workspace ${ws}`;
          if (isPublisher && pub !== null && o.publisherId !== pub) req.crossTenant = `order ${o.id} of publisher ${o.publisherId} with a key of publisher ${pub}`;
        }
      }
      if (clean && !op.secured && op.method === 'GET' && /^\/(healthz|readyz)$/.test(op.path)) req.expectStatus = { statuses: [200], why: 'a health check' };
      return req;
    });
}

/** Interface B: parameters in the query, a JSON or form body, or Authorization; keys of every kind. */
function catalogArb(op: Operation, world: World): fc.Arbitrary<FuzzRequest> {
  const opName = `${op.method} ${op.path}`;
  const needsItem = op.path === '/api/items/item';
  const needsCode = op.path === '/api/purchases/validation';
  const itemArb = fc.oneof(
    { weight: 5, arbitrary: fc.constantFrom(...world.items).map((i) => ({ value: i.id as unknown, item: i })) },
    { weight: 2, arbitrary: fc.constantFrom(...ID_STRINGS).map((s) => ({ value: decodeSafe(s) as unknown, item: undefined })) },
    { weight: 2, arbitrary: wrongValue.map((v) => ({ value: v, item: undefined })) },
    { weight: 1, arbitrary: fc.integer().map((v) => ({ value: v as unknown, item: undefined })) },
  );
  const codeArb = fc.oneof(
    { weight: 5, arbitrary: fc.constantFrom(...world.codes).map((c) => ({ value: c.code as unknown, code: c })) },
    { weight: 2, arbitrary: fc.uuid().map((u) => ({ value: u as unknown, code: undefined })) },
    { weight: 1, arbitrary: fc.constantFrom(...world.codes).map((c) => ({ value: ` ${c.code.toUpperCase()}\t` as unknown, code: undefined })) },
    { weight: 1, arbitrary: fc.constantFrom('x'.repeat(65), `${'a'.repeat(64)}`, '', '   ').map((v) => ({ value: v as unknown, code: undefined })) },
    { weight: 3, arbitrary: wrongValue.map((v) => ({ value: v, code: undefined })) },
  );
  type Where = 'query' | 'body' | 'both';
  const whereArb = fc.constantFrom<Where>('query', 'query', 'body', 'both');
  const formatArb = fc.oneof(
    { weight: 6, arbitrary: fc.constant('json') },
    { weight: 5, arbitrary: fc.constant('form') },
    { weight: 5, arbitrary: fc.constant('none') },
    { weight: 1, arbitrary: fc.constantFrom('multipart', 'text', 'malformed', 'deep', 'oversize', 'json-array', 'json-null') },
  );
  return fc
    .record({
      method: fc.oneof({ weight: 12, arbitrary: fc.constant(op.method) }, { weight: 1, arbitrary: otherMethodArb(op.method) }),
      mangle: fc.oneof({ weight: 20, arbitrary: fc.constant<Mangle>('none') }, { weight: 1, arbitrary: fc.constantFrom<Mangle>('trailing-slash', 'upper', 'extra-segment', 'double-slash') }),
      key: keyKindArb({ read: 8, otherRead: 3 }),
      keyWhere: fc.constantFrom<'query' | 'body' | 'bearer' | 'query+bearer' | 'query+body' | 'none'>('query', 'query', 'query', 'body', 'bearer', 'query+bearer', 'query+body', 'none'),
      conflictKey: fc.oneof({ weight: 6, arbitrary: fc.constant<KeyKind | undefined>(undefined) }, { weight: 1, arbitrary: keyKindArb() }),
      pick: fc.nat(),
      unknown: unknownKeyArb,
      item: needsItem ? itemArb : fc.constant(undefined),
      itemWhere: whereArb,
      code: needsCode ? codeArb : fc.constant(undefined),
      codeWhere: whereArb,
      dup: fc.oneof({ weight: 8, arbitrary: fc.constant<unknown>(undefined) }, { weight: 1, arbitrary: fc.oneof(wrongValue, fc.constantFrom(...world.items.map((i) => i.id))) }),
      format: formatArb,
      extra: fc.oneof({ weight: 6, arbitrary: fc.constant<[string, unknown][]>([]) }, { weight: 1, arbitrary: fc.array(fc.tuple(fc.constantFrom('__proto__', 'constructor', 'status', 'x', 'item_id[]'), wrongValue), { minLength: 1, maxLength: 3 }) }),
      queryFragment: fc.oneof({ weight: 10, arbitrary: fc.constant<string | undefined>(undefined) }, { weight: 1, arbitrary: fc.constantFrom(...MALFORMED_QUERY_FRAGMENTS) }),
      requestId: requestIdArb,
    })
    .map((r) => {
      const query: string[] = [];
      const body: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
      const put = (name: string, value: unknown, where: 'query' | 'body') => {
        if (where === 'query') query.push(`${enc(name)}=${enc(typeof value === 'string' ? value : stringify(value))}`);
        else body[name] = value;
      };
      const key = rawKey(world, r.key, r.pick, r.unknown);
      let auth: string | undefined;
      if (key !== undefined) {
        if (r.keyWhere.includes('query')) put('api_key', key, 'query');
        if (r.keyWhere.includes('body')) put('api_key', key, 'body');
        if (r.keyWhere.includes('bearer')) auth = `Bearer ${key}`;
      }
      const conflict = r.conflictKey !== undefined ? rawKey(world, r.conflictKey, r.pick + 1, r.unknown) : undefined;
      if (conflict !== undefined) put('api_key', conflict, r.keyWhere === 'body' ? 'query' : 'body');
      const place = (name: string, v: { value: unknown } | undefined, where: Where) => {
        if (!v) return;
        if (where !== 'body') put(name, v.value, 'query');
        if (where !== 'query') put(name, v.value, 'body');
      };
      place('item_id', r.item, r.itemWhere);
      place('purchase_code', r.code, r.codeWhere);
      if (r.dup !== undefined) put(needsCode ? 'purchase_code' : 'item_id', r.dup, 'query');
      for (const [k, v] of r.extra) put(k, v, 'body');
      if (r.queryFragment) query.push(r.queryFragment);

      let choice: BodyChoice;
      const hasBodyFields = Object.keys(body).length > 0;
      switch (r.format) {
        case 'json':
          choice = { body: stringify(body), contentType: 'application/json', note: 'json body' };
          break;
        case 'form':
          choice = { body: formEncode(body), contentType: 'application/x-www-form-urlencoded', note: 'form body' };
          break;
        case 'multipart':
          choice = { body: multipartEncode(body), contentType: 'multipart/form-data; boundary=----fuzzboundary', note: 'multipart body' };
          break;
        case 'text':
          choice = { body: stringify(body), contentType: 'text/plain', note: 'text/plain body' };
          break;
        case 'malformed':
          choice = { body: MALFORMED_JSON[r.pick % MALFORMED_JSON.length], contentType: r.pick % 2 ? 'application/json' : 'application/x-www-form-urlencoded', note: 'malformed body' };
          break;
        case 'deep':
          choice = { body: '{"api_key":'.repeat(2000) + '1' + '}'.repeat(2000), contentType: 'application/json', note: 'deep body' };
          break;
        case 'oversize':
          choice = { body: `api_key=${'a'.repeat(1024 * 1024 + 10)}`, contentType: 'application/x-www-form-urlencoded', note: 'oversized form body' };
          break;
        case 'json-array':
          choice = { body: stringify([body]), contentType: 'application/json', note: 'json array body' };
          break;
        case 'json-null':
          choice = { body: 'null', contentType: 'application/json', note: 'json null body' };
          break;
        default:
          // No body: whatever was meant for it goes to the query string.
          for (const [k, v] of Object.entries(body)) query.push(`${enc(k)}=${enc(typeof v === 'string' ? v : stringify(v))}`);
          choice = { note: hasBodyFields ? 'body fields moved to the query' : 'no body' };
      }
      const path = mangle(op.path, r.mangle);
      const req = assemble({
        op: opName,
        method: r.method,
        path,
        query,
        key: r.key,
        auth,
        requestId: r.requestId,
        body: choice,
        notes: [`api_key in ${r.keyWhere}`, conflict !== undefined ? `second api_key (${r.conflictKey})` : '', r.mangle !== 'none' ? `path ${r.mangle}` : '', r.method !== op.method ? `method ${r.method}` : '', r.queryFragment ? 'malformed query' : ''],
      });
      const clean = r.mangle === 'none' && (r.method === op.method || (op.method === 'GET' && r.method === 'HEAD'));
      const keyCertain = conflict === undefined && r.keyWhere !== 'none' && !r.queryFragment;
      if (clean && keyCertain && r.format === 'none' && r.keyWhere === 'query' && r.extra.length === 0) {
        const k = r.key in world.keys ? world.keys[r.key as RealKeyKind] : undefined;
        if (!k || k.revoked || k.canSpend || k.workspaceId === null) req.expectStatus = { statuses: [401], why: `Interface B with key kind ${r.key}` };
      }
      const ws = workspaceOf(world, r.key);
      if (clean && keyCertain && liveKey(world, r.key) && ws !== null && r.dup === undefined) {
        if (r.item?.item && r.item.item.workspaceId !== ws) req.crossTenant = `item ${r.item.item.id} of workspace ${r.item.item.workspaceId} with a key of workspace ${ws}`;
        if (r.code?.code && r.code.code.workspaceId !== ws) req.crossTenant = `purchase code of workspace ${r.code.code.workspaceId} with a key of workspace ${ws}`;
        if (r.code?.code?.refunded) req.crossTenant = 'a refunded purchase code';
      }
      return req;
    });
}

function isDecodable(s: string): boolean {
  try {
    decodeURIComponent(s);
    return true;
  } catch {
    return false;
  }
}

function decodeSafe(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/** MCP: malformed JSON-RPC, every method, every tool with mutated arguments, batches, headers. */
function mcpArb(world: World, tools: McpTool[], hints: Hints): fc.Arbitrary<FuzzRequest> {
  const idArb = fc.oneof(
    { weight: 6, arbitrary: fc.integer({ min: 0, max: 1000 }) as fc.Arbitrary<unknown> },
    { weight: 2, arbitrary: fc.string({ maxLength: 10 }) },
    { weight: 1, arbitrary: fc.constantFrom<unknown>(null, {}, [], true, 1.5, -1, 2 ** 60, 'x'.repeat(10_000)) },
  );
  const envelope = (method: unknown, params: unknown) =>
    fc
      .tuple(
        idArb,
        fc.oneof({ weight: 10, arbitrary: fc.constant<unknown>('2.0') }, { weight: 1, arbitrary: fc.constantFrom<unknown>('1.0', 2, 2.0, null, '', undefined) }),
        fc.oneof({ weight: 12, arbitrary: fc.constant('none') }, { weight: 1, arbitrary: fc.constantFrom('no-id', 'extra', 'result-and-method') }),
      )
      .map(([id, jsonrpc, twist]) => {
        const m: Record<string, unknown> = { jsonrpc, id, method, params };
        if (params === undefined) delete m.params;
        if (jsonrpc === undefined) delete m.jsonrpc;
        if (twist === 'no-id') delete m.id;
        if (twist === 'extra') Object.defineProperty(m, '__proto__', { value: { x: 1 }, enumerable: true });
        if (twist === 'result-and-method') m.result = {};
        return m;
      });
  const toolCall = tools.length
    ? fc
        .tuple(
          fc.constantFrom(...tools),
          fc.oneof({ weight: 12, arbitrary: fc.constant('ok') }, { weight: 1, arbitrary: fc.constantFrom('name-wrong-type', 'unknown-tool', 'args-array', 'args-string', 'args-null', 'no-args', 'meta') }),
        )
        .chain(([tool, twist]) =>
          fc.tuple(mutatedArb(tool.inputSchema, hints), fc.constant(tool), fc.constant(twist), wrongValue),
        )
        .chain(([args, tool, twist, wrong]) => {
          const params: Record<string, unknown> = { name: tool.name, arguments: args.value };
          if (twist === 'name-wrong-type') params.name = wrong;
          if (twist === 'unknown-tool') params.name = `${tool.name}-nope`;
          if (twist === 'args-array') params.arguments = [args.value];
          if (twist === 'args-string') params.arguments = stringify(args.value);
          if (twist === 'args-null') params.arguments = null;
          if (twist === 'no-args') delete params.arguments;
          if (twist === 'meta') params._meta = { progressToken: wrong };
          return envelope('tools/call', params).map((m) => ({ message: m as unknown, note: `tools/call ${tool.name} (${args.note}${twist !== 'ok' ? `, ${twist}` : ''})`, tool: tool.name, args: args.value }));
        })
    : fc.constant({ message: {} as unknown, note: 'no tools', tool: undefined as string | undefined, args: undefined as unknown });
  const initializeParams = fc.oneof(
    fc.constant<unknown>({ protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'fuzz', version: '1' } }),
    fc.record({ protocolVersion: fc.oneof(fc.string(), hostileString, fc.constant('1999-01-01')), capabilities: wrongValue, clientInfo: wrongValue }, { requiredKeys: [] }),
  );
  const otherMethod = fc
    .tuple(
      fc.constantFrom<unknown>(
        'initialize',
        'tools/list',
        'tools/call',
        'ping',
        'resources/list',
        'resources/read',
        'resources/templates/list',
        'prompts/list',
        'prompts/get',
        'completion/complete',
        'logging/setLevel',
        'notifications/initialized',
        'notifications/cancelled',
        'sampling/createMessage',
        'foo/bar',
        '',
        '__proto__',
        'tools/list/../call',
        123,
        null,
        ['tools/list'],
      ),
      fc.oneof(
        { weight: 3, arbitrary: fc.constant<unknown>(undefined) },
        { weight: 2, arbitrary: fc.constant<unknown>({}) },
        { weight: 2, arbitrary: initializeParams },
        { weight: 2, arbitrary: wrongValue },
        { weight: 1, arbitrary: fc.record({ cursor: hostileString, name: hostileString, uri: hostileString, level: hostileString }, { requiredKeys: [] }) },
        { weight: 1, arbitrary: hugeString.map((s) => ({ blob: s }) as unknown) },
      ),
    )
    .chain(([method, params]) => envelope(method, params).map((m) => ({ message: m as unknown, note: `method ${stringify(method).slice(0, 40)}`, tool: undefined as string | undefined, args: undefined as unknown })));
  const single = fc.oneof({ weight: 3, arbitrary: toolCall }, { weight: 2, arbitrary: otherMethod });
  type Payload = { text?: string; note: string; tool?: string; args?: unknown };
  const payloadArb: fc.Arbitrary<Payload> = fc.oneof(
    { weight: 12, arbitrary: single.map((s): Payload => ({ text: stringify(s.message), note: s.note, ...(s.tool ? { tool: s.tool, args: s.args } : {}) })) },
    { weight: 2, arbitrary: fc.array(single, { minLength: 0, maxLength: 5 }).map((xs): Payload => ({ text: stringify(xs.map((x) => x.message)), note: `batch of ${xs.length}` })) },
    { weight: 1, arbitrary: fc.array(single, { minLength: 100, maxLength: 200 }).map((xs): Payload => ({ text: stringify(xs.map((x) => x.message)), note: `batch of ${xs.length}` })) },
    { weight: 2, arbitrary: fc.constantFrom(...MALFORMED_JSON, '', 'null', '[]', '[[]]', '"x"', '42', 'true', '{}', '[1,2]').map((t): Payload => ({ text: t, note: 'malformed JSON-RPC text' })) },
    { weight: 1, arbitrary: deepJsonText.map((t): Payload => ({ text: t, note: `deep JSON (${t.length} chars)` })) },
    { weight: 1, arbitrary: oversizedBodyText.map((t): Payload => ({ text: t, note: `oversized (${t.length} bytes)` })) },
    { weight: 1, arbitrary: fc.constant<Payload>({ note: 'no body' }) },
  );
  return fc
    .record({
      method: fc.oneof({ weight: 20, arbitrary: fc.constant('POST') }, { weight: 2, arbitrary: fc.constantFrom('GET', 'DELETE') }, { weight: 1, arbitrary: fc.constantFrom('PUT', 'PATCH', 'HEAD', 'OPTIONS') }),
      payload: payloadArb,
      key: keyKindArb({ read: 8, spend: 6 }),
      pick: fc.nat(),
      unknown: unknownKeyArb,
      accept: fc.oneof({ weight: 8, arbitrary: fc.constant<string | undefined>(MCP_ACCEPT) }, { weight: 1, arbitrary: fc.constantFrom<string | undefined>(undefined, 'application/json', 'text/event-stream', '*/*', 'text/html', 'application/json;q=0, text/event-stream;q=0') }),
      contentType: fc.oneof({ weight: 10, arbitrary: fc.constant<string | undefined>('application/json') }, { weight: 1, arbitrary: fc.constantFrom(...CONTENT_TYPES) }),
      protocol: fc.oneof({ weight: 8, arbitrary: fc.constant<string | undefined>(undefined) }, { weight: 1, arbitrary: fc.constantFrom<string | undefined>('2025-06-18', '2025-03-26', '1999-01-01', 'garbage', '') }),
      session: fc.oneof({ weight: 10, arbitrary: fc.constant<string | undefined>(undefined) }, { weight: 1, arbitrary: fc.constantFrom<string | undefined>('abc', '../../etc/passwd', 'x'.repeat(300)) }),
      requestId: requestIdArb,
      mangle: fc.oneof({ weight: 30, arbitrary: fc.constant<Mangle>('none') }, { weight: 1, arbitrary: fc.constantFrom<Mangle>('trailing-slash', 'upper', 'extra-segment') }),
    })
    .map((r) => {
      const req = assemble({
        op: r.payload.tool ? `MCP tools/call ${r.payload.tool}` : 'MCP',
        method: r.method,
        path: mangle('/mcp', r.mangle),
        query: [],
        key: r.key,
        auth: authHeader(world, r.key, r.pick, r.unknown),
        requestId: r.requestId,
        body: { ...(r.payload.text !== undefined ? { body: r.payload.text } : {}), ...(r.contentType !== undefined ? { contentType: r.contentType } : {}), note: r.payload.note },
        extraHeaders: { accept: r.accept, 'mcp-protocol-version': r.protocol, 'mcp-session-id': r.session },
        notes: [r.method !== 'POST' ? `method ${r.method}` : '', r.accept !== MCP_ACCEPT ? `accept ${r.accept ?? 'none'}` : '', r.contentType !== 'application/json' ? `content-type ${r.contentType ?? 'none'}` : ''],
      });
      const clean = r.mangle === 'none';
      const known = r.key in world.keys ? world.keys[r.key as RealKeyKind] : undefined;
      if (clean && ['POST', 'GET', 'DELETE'].includes(r.method) && (!known || known.revoked || known.workspaceId === null)) {
        req.expectStatus = { statuses: [401], why: `/mcp with key kind ${r.key}` };
      }
      const ws = workspaceOf(world, r.key);
      const args = r.payload.args as Record<string, unknown> | undefined;
      if (clean && ws !== null && liveKey(world, r.key) && args && typeof args === 'object' && !Array.isArray(args) && typeof args.order_id === 'number') {
        const o = world.orders.find((x) => x.id === args.order_id);
        if (o && o.workspaceId !== ws) req.crossTenant = `tool ${r.payload.tool} on order ${o.id} of workspace ${o.workspaceId} with a key of workspace ${ws}`;
      }
      return req;
    });
}

/** Paths no route serves, under every prefix, with every method. */
function randomPathArb(world: World): fc.Arbitrary<FuzzRequest> {
  const segment = fc.oneof(
    fc.constantFrom(...ID_STRINGS),
    hostileString.filter((s) => s.length < 300).map(enc),
    fc.constantFrom('orders', 'outlets', 'me', 'ledger', 'publisher', 'items', '..', '.', '%2e%2e', '', 'approve', 'openapi.json', '.env', '.git', 'node_modules'),
  );
  return fc
    .record({
      prefix: fc.constantFrom('/', '/api/', '/api/v1/', '/api/v1/publisher/', '/api/v1/orders/1/', '/api/items/', '/api/account/', '/api/purchases/', '/mcp/', '/API/V1/', '/docs/', '/healthz/', '//', '/api/v1/outlets/'),
      segs: fc.array(segment, { maxLength: 4 }),
      method: fc.constantFrom(...ALL_METHODS),
      key: keyKindArb(),
      pick: fc.nat(),
      unknown: unknownKeyArb,
      body: strayBodyArb,
      requestId: requestIdArb,
    })
    .map((r) =>
      assemble({
        op: 'random path',
        method: r.method,
        path: r.prefix + r.segs.join('/'),
        query: [],
        key: r.key,
        auth: authHeader(world, r.key, r.pick, r.unknown),
        requestId: r.requestId,
        body: r.body,
        notes: [],
      }),
    );
}

/** Every generator, weighted so each operation gets a fair share. */
export function requestArb(world: World, ops: Operation[], tools: McpTool[]): fc.Arbitrary<FuzzRequest> {
  const hints = hintsFor(world);
  const gens: fc.WeightedArbitrary<FuzzRequest>[] = [];
  for (const op of ops) {
    const isCatalog = CATALOG_PATH.test(op.path);
    const isOps = !op.path.startsWith('/api/');
    gens.push({ weight: isOps ? 1 : isCatalog ? 4 : 3, arbitrary: isCatalog ? catalogArb(op, world) : operationArb(op, world, hints) });
  }
  if (tools.length) gens.push({ weight: 16, arbitrary: mcpArb(world, tools, hints) });
  gens.push({ weight: 3, arbitrary: randomPathArb(world) });
  gens.push({
    weight: 1,
    arbitrary: fc.constantFrom('/openapi.json', '/docs', '/docs/', '/docs/static/index.html', '/docs/json').map(
      (url): FuzzRequest => ({ op: 'GET docs', method: 'GET', url, headers: {}, key: 'none', note: '' }),
    ),
  });
  return fc.oneof(...gens);
}

// ---------------------------------------------------------------------------------------------
// Checks

export interface Response {
  statusCode: number;
  headers: Record<string, string | string[] | number | undefined>;
  body: string;
}

const LEAKS: [string, RegExp][] = [
  ['stack trace', /"stack"\s*:|(?:\n|\\n)\s*at [\w.<>$[\] ]+ \(|\bat (?:file:\/\/|\/)[^\s)]+:\d+:\d+/],
  ['internal path', /node_modules|\/src\/[\w/-]+\.[jt]s|\/work\/|\/home\/|C:\\/],
  ['SQL', /syntax error at or near|\bSELECT\s+[\w*,. ]+\s+FROM\b|\bINSERT INTO\b|\bUPDATE\s+\w+\s+SET\b|\bDELETE FROM\b/i],
  ['database error', /violates (?:check|foreign key|unique|not-null) constraint|duplicate key value|relation "[^"]+" does not exist|invalid input syntax for|out of range for type|column "[^"]+"|\bpg_[a-z_]+\b|ECONNREFUSED|could not serialize/i],
  ['JS error', /\b(?:TypeError|ReferenceError|RangeError|SyntaxError|ZodError)\b|Unexpected token|JSON at position|Maximum call stack|Cannot (?:read|set) propert|is not a function|is not iterable|undefined is not|\[object Object\]/],
  ['framework internals', /FST_ERR|FastifyError|drizzle|ERR_[A-Z_]{4,}/],
];

const CATALOG_MESSAGES = new Map<string, number[]>([
  [catalogMsg.invalidRequest, [400, 401]],
  [catalogMsg.itemIdRequired, [400]],
  [catalogMsg.itemIdInteger, [400]],
  [catalogMsg.purchaseCodeRequired, [400]],
  [catalogMsg.noItems, [404]],
  [catalogMsg.itemNotFound, [404]],
  [catalogMsg.invalidPurchaseCode, [404]],
  [catalogMsg.notFound, [404]],
  [catalogMsg.methodNotAllowed, [405]],
  [catalogMsg.payloadTooLarge, [413]],
  [catalogMsg.tooManyRequests, [429]],
]);

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const header = (res: Response, name: string) => {
  const v = res.headers[name];
  return Array.isArray(v) ? v.join(', ') : v === undefined ? undefined : String(v);
};

/** Interface A's error shape (docs/http.md). */
function checkAError(res: Response, body: unknown, out: string[]): void {
  if (!isObject(body)) return void out.push(`error body is not a JSON object`);
  const { message, code, request_id } = body;
  if (typeof message !== 'string' || message.length === 0) out.push('error without a message');
  if (typeof code !== 'string' || !/^[a-z]+(?:_[a-z]+)*$/.test(code)) return void out.push(`error code ${stringify(code)} is not snake_case`);
  // A replay (Idempotency-Key) sends the first response's body as it was, with that request's id.
  const replayed = header(res, 'idempotent-replayed') === 'true';
  if (replayed ? typeof request_id !== 'string' || request_id.length === 0 : request_id !== header(res, 'x-request-id')) {
    out.push(`request_id ${stringify(request_id)} differs from X-Request-Id ${header(res, 'x-request-id')}${replayed ? ' (a replay)' : ''}`);
  }
  const expected = (httpStatusOf as Record<string, number>)[code];
  if (expected === undefined) out.push(`unknown error code ${code}`);
  else if (expected !== res.statusCode) out.push(`code ${code} answered with ${res.statusCode} (its status is ${expected})`);
  if (res.statusCode === 401 && header(res, 'www-authenticate') !== 'Bearer') out.push('401 without WWW-Authenticate: Bearer');
  if (res.statusCode === 429 && (typeof body.retry_after !== 'number' || !header(res, 'retry-after'))) out.push('429 without retry_after / Retry-After');
  if (code === 'invalid_input') {
    const errors = body.errors;
    if (!isObject(errors) || Object.keys(errors).length === 0) out.push('invalid_input without errors');
    else for (const [k, v] of Object.entries(errors)) if (!Array.isArray(v) || v.length === 0 || v.some((x) => typeof x !== 'string')) out.push(`errors.${k} is not a list of strings`);
  }
  if (code === 'insufficient_balance' && typeof body.needed_cents !== 'number') out.push('402 without needed_cents');
  if (code === 'conflict' && typeof body.status !== 'string') out.push('409 conflict without the order status');
}

function checkJsonRpcMessage(m: unknown, out: string[], notes: string[], where = 'response'): void {
  if (!isObject(m)) return void out.push(`${where} is not a JSON-RPC object`);
  if (m.jsonrpc !== '2.0') out.push(`${where} without jsonrpc "2.0"`);
  const hasResult = 'result' in m;
  const hasError = 'error' in m;
  if (hasResult === hasError) return void out.push(`${where} has ${hasResult ? 'both result and error' : 'neither result nor error'}`);
  if (hasError) {
    const e = m.error;
    if (!isObject(e) || !Number.isInteger(e.code) || typeof e.message !== 'string') out.push(`${where}: malformed JSON-RPC error ${stringify(e).slice(0, 200)}`);
    else if (e.code === -32603) {
      if (isZodIssueList(e.message)) notes.push('SDK answers invalid request params with -32603 Internal error and the zod issues as message (JSON-RPC says -32602)');
      else out.push(`${where}: JSON-RPC internal error: ${String(e.message).slice(0, 200)}`);
    }
    return;
  }
  const r = m.result;
  if (isObject(r) && r.isError === true) {
    if (r.structuredContent !== undefined) out.push(`${where}: tool error with structuredContent`);
    const content = r.content;
    const first = Array.isArray(content) ? (content[0] as { type?: string; text?: string } | undefined) : undefined;
    if (!Array.isArray(content) || content.length !== 1 || first?.type !== 'text' || typeof first.text !== 'string') {
      out.push(`${where}: tool error is not one text item`);
      return;
    }
    try {
      const parsed = JSON.parse(first.text) as unknown;
      if (!isObject(parsed) || typeof parsed.code !== 'string' || typeof parsed.message !== 'string') out.push(`${where}: tool error text is not {code, message}`);
      else if (!(parsed.code in httpStatusOf)) out.push(`${where}: tool error code ${parsed.code} is not a REST code`);
      else if ((httpStatusOf as Record<string, number>)[parsed.code]! >= 500) out.push(`${where}: tool error ${parsed.code} (a ${(httpStatusOf as Record<string, number>)[parsed.code]} in REST terms)`);
    } catch {
      out.push(`${where}: tool error text is not JSON`);
    }
  }
}

function isZodIssueList(message: unknown): boolean {
  if (typeof message !== 'string' || !message.trimStart().startsWith('[')) return false;
  try {
    const list = JSON.parse(message) as unknown;
    return Array.isArray(list) && list.length > 0 && list.every((i) => isObject(i) && typeof i.code === 'string' && Array.isArray(i.path));
  } catch {
    return false;
  }
}

/** Results in an MCP response that are successful tool results (no isError). */
function mcpSuccesses(parsed: unknown): number {
  const list = Array.isArray(parsed) ? parsed : [parsed];
  return list.filter((m) => isObject(m) && isObject(m.result) && m.result.isError !== true && ('content' in m.result || 'structuredContent' in m.result)).length;
}

function parseSse(text: string): unknown[] {
  const out: unknown[] = [];
  for (const block of text.split(/\n\n/)) {
    const data = block
      .split('\n')
      .filter((l) => l.startsWith('data:'))
      .map((l) => l.slice(5).trim())
      .join('\n');
    if (data) out.push(JSON.parse(data));
  }
  return out;
}

export interface Verdict {
  violations: string[];
  /** Known, accepted deviations worth reporting (not failures). */
  notes: string[];
  /** A 2xx that may legitimately have moved money. */
  mayMoveMoney: boolean;
}

/**
 * `earlier`: the text of every request sent before this one in the run. A match found verbatim in
 * one of them is data the fuzzer stored (an SQL-looking draft title, say) read back, not a leak.
 */
export function checkResponse(req: FuzzRequest, res: Response, earlier: readonly string[] = []): Verdict {
  const out: string[] = [];
  const notes: string[] = [];
  const surface = surfaceOf(req.url);
  const status = res.statusCode;
  if (status >= 500) out.push(`${status} answer`);
  const rid = header(res, 'x-request-id');
  if (!rid) out.push('no X-Request-Id');
  else if (req.headers['x-request-id'] !== undefined && /^[A-Za-z0-9._-]{1,128}$/.test(req.headers['x-request-id']) && rid !== req.headers['x-request-id']) {
    out.push(`X-Request-Id ${rid} instead of the caller's ${req.headers['x-request-id']}`);
  }
  const isDocs = req.op === 'GET docs' || /^\/docs(\/|$)/.test(serverPath(req.url));
  if (!isDocs) {
    const requestText = `${req.url}\n${stringify(req.headers)}\n${req.body ?? ''}`;
    for (const [what, re] of LEAKS) {
      const m = re.exec(res.body);
      if (m && !re.test(requestText) && !re.test(decodeSafe(requestText)) && !earlier.some((t) => t.includes(m[0]))) out.push(`${what} in the body: …${res.body.slice(Math.max(0, m.index - 60), m.index + 80)}…`);
    }
  }

  const ctype = header(res, 'content-type') ?? '';
  let parsed: unknown;
  let hasBody = res.body.length > 0 && req.method !== 'HEAD';
  if (hasBody && !isDocs) {
    try {
      if (ctype.startsWith('text/event-stream')) parsed = parseSse(res.body);
      else if (/^application\/(?:[\w.+-]+\+)?json/.test(ctype)) parsed = JSON.parse(res.body);
      else out.push(`body in ${ctype || 'no content type'}, not JSON`);
    } catch {
      out.push('body is not valid JSON');
      hasBody = false;
    }
  }

  let mayMoveMoney = false;
  const path = serverPath(req.url);
  if (!isDocs && req.method !== 'HEAD') {
    switch (surface) {
      case 'A':
      case 'publisher':
      case 'ops':
        if (status >= 400) checkAError(res, parsed, out);
        else if (status >= 200 && status < 300 && surface !== 'ops' && !(isObject(parsed) && 'data' in parsed)) out.push(`${status} without {data}`);
        if (status >= 200 && status < 300 && req.method === 'POST' && MONEY_ROUTES.some((re) => re.test(path))) mayMoveMoney = true;
        break;
      case 'B':
        if (!isObject(parsed)) out.push('Interface B body is not a JSON object');
        else if (status >= 400) {
          const keys = Object.keys(parsed).sort().join(',');
          if (keys !== 'msg,status' || parsed.status !== 'error' || typeof parsed.msg !== 'string') out.push(`Interface B error is not {status:"error", msg}: ${res.body.slice(0, 200)}`);
          else {
            const allowed = CATALOG_MESSAGES.get(parsed.msg);
            if (!allowed) out.push(`Interface B msg ${stringify(parsed.msg)} is not one of the contract's`);
            else if (!allowed.includes(status)) out.push(`Interface B msg "${parsed.msg}" with status ${status}`);
          }
          if (status === 429 && !header(res, 'retry-after')) out.push('429 without Retry-After');
          if (status === 405 && !header(res, 'allow')) out.push('405 without Allow');
        } else if (parsed.status !== 'success') out.push(`Interface B ${status} without status "success"`);
        break;
      case 'mcp':
        if (status === 202) {
          if (res.body.length > 0) out.push('202 with a body');
        } else if (status >= 400) {
          // Auth, rate limit and body limits answer in Interface A's shape; transport errors in JSON-RPC's.
          if (isObject(parsed) && 'jsonrpc' in parsed) checkJsonRpcMessage(parsed, out, notes, `${status} body`);
          else checkAError(res, parsed, out);
          if (status === 401 && !(isObject(parsed) && parsed.code === 'unauthenticated')) out.push('MCP 401 not in Interface A shape');
        } else if (status === 200) {
          const list = ctype.startsWith('text/event-stream') ? (parsed as unknown[]) : Array.isArray(parsed) ? parsed : [parsed];
          if (Array.isArray(parsed) && parsed.length === 0) out.push('empty JSON-RPC batch answer');
          list.forEach((m, i) => checkJsonRpcMessage(m, out, notes, list.length > 1 ? `response[${i}]` : 'response'));
          if (MONEY_TOOLS.some((t) => req.body?.includes(`"${t}"`)) && mcpSuccesses(parsed) > 0) mayMoveMoney = true;
        } else out.push(`unexpected MCP status ${status}`);
        break;
    }
  }

  if (req.expectStatus && !req.expectStatus.statuses.includes(status)) {
    out.push(`expected ${req.expectStatus.statuses.join('/')} (${req.expectStatus.why}), got ${status}`);
  }
  if (req.crossTenant) {
    const succeeded =
      surface === 'mcp' ? status === 200 && mcpSuccesses(parsed) > 0 : status >= 200 && status < 300;
    if (succeeded) out.push(`another tenant's resource answered ${status}: ${req.crossTenant}`);
  }
  return { violations: out, notes: [...new Set(notes)], mayMoveMoney };
}

// ---------------------------------------------------------------------------------------------
// Ledger

/** Everything money: entries, transactions and every account balance. */
export async function ledgerFingerprint(pool: pg.Pool): Promise<string> {
  const { rows } = await pool.query<{ f: string }>(
    `SELECT (SELECT count(*) FROM ledger_entries)::text || '/' || (SELECT count(*) FROM ledger_transactions)::text || '/' ||
            COALESCE((SELECT string_agg(id::text || ':' || balance::text, ',' ORDER BY id) FROM ledger_accounts), '') AS f`,
  );
  return rows[0]!.f;
}

/** The invariants of docs/orders.md (test/helpers/ledger-invariants.ts, without vitest). */
export async function ledgerInvariantViolations(pool: pg.Pool): Promise<string[]> {
  const q = async (sql: string) => (await pool.query(sql)).rows as Record<string, unknown>[];
  const out: string[] = [];
  const [total] = await q('SELECT COALESCE(sum(amount), 0)::bigint AS s FROM ledger_entries');
  if (Number(total?.s) !== 0) out.push(`entries sum to ${String(total?.s)}`);
  const unbalanced = await q('SELECT transaction_id, sum(amount) AS s FROM ledger_entries GROUP BY transaction_id HAVING sum(amount) <> 0');
  if (unbalanced.length) out.push(`unbalanced transactions: ${stringify(unbalanced)}`);
  const drift = await q(`SELECT a.id, a.kind, a.balance, COALESCE(sum(e.amount), 0)::bigint AS entries
      FROM ledger_accounts a LEFT JOIN ledger_entries e ON e.account_id = a.id GROUP BY a.id HAVING a.balance <> COALESCE(sum(e.amount), 0)`);
  if (drift.length) out.push(`balances differ from their entries: ${stringify(drift)}`);
  const negative = await q(`SELECT id, kind, balance FROM ledger_accounts WHERE kind NOT IN ('external', 'adjustments') AND balance < 0`);
  if (negative.length) out.push(`negative balances: ${stringify(negative)}`);
  const held = await q(`SELECT a.workspace_id, a.balance, COALESCE(o.open, 0)::bigint AS open FROM ledger_accounts a
      LEFT JOIN (SELECT workspace_id, sum(price) AS open FROM orders WHERE status NOT IN ('completed', 'declined', 'expired', 'cancelled') GROUP BY workspace_id) o
        ON o.workspace_id = a.workspace_id
     WHERE a.kind = 'held' AND a.balance <> COALESCE(o.open, 0)`);
  if (held.length) out.push(`held differs from open orders: ${stringify(held)}`);
  const inPayout = await q(`SELECT a.publisher_id, a.balance, COALESCE(p.waiting, 0)::bigint AS waiting FROM ledger_accounts a
      LEFT JOIN (SELECT publisher_id, sum(amount_cents) AS waiting FROM payouts WHERE status = 'pending' GROUP BY publisher_id) p
        ON p.publisher_id = a.publisher_id
     WHERE a.kind = 'in_payout' AND a.balance <> COALESCE(p.waiting, 0)`);
  if (inPayout.length) out.push(`in_payout differs from pending payouts: ${stringify(inPayout)}`);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Runner

export interface Violation {
  index: number;
  op: string;
  rule: string;
  request: FuzzRequest;
  status: number;
  body: string;
}

export interface FuzzReport {
  seed: number;
  sent: number;
  durationMs: number;
  byStatus: Record<string, number>;
  bySurface: Record<string, Record<string, number>>;
  /** Requests and 2xx answers per generator: how deep the run got. */
  byOp: Record<string, { sent: number; ok: number }>;
  /** How often the stricter oracles applied. */
  oracles: { expectStatus: number; crossTenant: number };
  violations: Violation[];
  /** Violations beyond the ones kept (same rule and operation). */
  suppressed: number;
  /** Requests inject() itself refused to build (not sent). */
  notSent: { count: number; examples: string[] };
  moneyMoves: number;
  /** Accepted deviations: how often, and the first request that showed each. */
  notes: Record<string, { count: number; example: FuzzRequest; body: string }>;
  mcp: { available: boolean; reason?: string; tools: number };
  finalChecks: string[];
}

export interface FuzzTarget {
  app: App;
  pool: pg.Pool;
  clock: ManualClock;
}

export interface FuzzOptions {
  numRuns: number;
  seed: number;
  /** Called every `progressEvery` requests. */
  onProgress?: (sent: number, report: FuzzReport) => void;
  progressEvery?: number;
  /** Per-request timeout. */
  timeoutMs?: number;
}

/** The MCP tools as the server lists them, or why MCP is skipped. */
export async function discoverMcp(app: App, world: World): Promise<{ tools: McpTool[]; reason?: string }> {
  try {
    const res = await app.inject({
      method: 'POST',
      url: '/mcp',
      headers: { authorization: `Bearer ${world.keys.read.raw}`, 'content-type': 'application/json', accept: MCP_ACCEPT },
      payload: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    if (res.statusCode !== 200) return { tools: [], reason: `POST /mcp tools/list answered ${res.statusCode}: ${res.body.slice(0, 300)}` };
    const tools = (res.json() as { result?: { tools?: McpTool[] } }).result?.tools;
    if (!Array.isArray(tools) || tools.length === 0) return { tools: [], reason: `tools/list returned no tools: ${res.body.slice(0, 300)}` };
    return { tools };
  } catch (err) {
    return { tools: [], reason: `POST /mcp failed: ${String(err)}` };
  }
}

export async function fetchOperations(app: App): Promise<Operation[]> {
  const res = await app.inject({ method: 'GET', url: '/openapi.json' });
  if (res.statusCode !== 200) throw new Error(`GET /openapi.json answered ${res.statusCode}`);
  return listOperations(res.json() as { paths: Record<string, Record<string, unknown>> });
}

const KEEP_PER_RULE = 3;

function ruleKey(op: string, rule: string): string {
  // Group "the same problem" together: numbers and quoted values vary between examples.
  return `${op} | ${rule.replace(/\d+/g, 'N').replace(/…[\s\S]*…/, '…').slice(0, 120)}`;
}

export async function runFuzz(target: FuzzTarget, world: World, opts: FuzzOptions): Promise<FuzzReport> {
  const { app, pool, clock } = target;
  const ops = await fetchOperations(app);
  const mcp = await discoverMcp(app, world);
  const report: FuzzReport = {
    seed: opts.seed,
    sent: 0,
    durationMs: 0,
    byStatus: {},
    bySurface: {},
    byOp: {},
    oracles: { expectStatus: 0, crossTenant: 0 },
    violations: [],
    suppressed: 0,
    notSent: { count: 0, examples: [] },
    moneyMoves: 0,
    notes: {},
    mcp: { available: mcp.tools.length > 0, ...(mcp.reason ? { reason: mcp.reason } : {}), tools: mcp.tools.length },
    finalChecks: [],
  };
  const kept = new Map<string, number>();
  const record = (v: Violation) => {
    const k = ruleKey(v.op, v.rule);
    const n = kept.get(k) ?? 0;
    kept.set(k, n + 1);
    if (n < KEEP_PER_RULE) report.violations.push(v);
    else report.suppressed++;
  };

  // Anything the server (or a library in it) prints as a warning during a request is a finding:
  // node-postgres, for one, prints (console.error) on statement names PostgreSQL would truncate.
  const warnings: string[] = [];
  // What was sent, decoded: data the API may legitimately read back later (see checkResponse).
  const sentTexts: string[] = [];
  const originalWarn = console.warn;
  const originalError = console.error;
  console.warn = console.error = (...args: unknown[]) => {
    warnings.push(args.map((a) => (typeof a === 'string' ? a : stringify(a))).join(' '));
  };
  const onWarning = (w: Error) => warnings.push(`${w.name}: ${w.message}`);
  process.on('warning', onWarning);

  const started = Date.now();
  let fingerprint = await ledgerFingerprint(pool);
  let index = 0;
  const timeoutMs = opts.timeoutMs ?? 20_000;

  const execute = async (req: FuzzRequest) => {
    const i = index++;
    // Lets time-windowed guards (invalid purchase codes) reset now and then.
    if (i > 0 && i % 50 === 0) clock.advance(61_000);
    let res: Response;
    try {
      const text = `${req.url}\n${req.body ?? ''}`;
      // Over 256 KB it is an oversized body that no route stores.
      if (text.length <= 262_144) sentTexts.push(text, decodeSafe(text));
      const injected = app.inject({ method: req.method as 'GET', url: req.url, headers: req.headers, ...(req.body !== undefined ? { payload: req.body } : {}) });
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), timeoutMs)));
      const r = await Promise.race([injected, timeout]);
      clearTimeout(timer);
      if (r === 'timeout') {
        record({ index: i, op: req.op, rule: `no answer within ${timeoutMs} ms`, request: req, status: 0, body: '' });
        report.sent++;
        return;
      }
      res = r;
    } catch (err) {
      // inject() validates what it is given (e.g. header characters); such requests are never sent.
      report.notSent.count++;
      if (report.notSent.examples.length < 5) report.notSent.examples.push(`${req.op}: ${String(err).slice(0, 160)}`);
      return;
    }
    report.sent++;
    const surface = surfaceOf(req.url);
    const s = String(res.statusCode);
    report.byStatus[s] = (report.byStatus[s] ?? 0) + 1;
    (report.bySurface[surface] ??= {})[s] = (report.bySurface[surface]![s] ?? 0) + 1;
    const perOp = (report.byOp[req.op] ??= { sent: 0, ok: 0 });
    perOp.sent++;
    if (res.statusCode >= 200 && res.statusCode < 300) perOp.ok++;
    if (req.expectStatus) report.oracles.expectStatus++;
    if (req.crossTenant) report.oracles.crossTenant++;

    const verdict = checkResponse(req, res, sentTexts);
    if (warnings.length) {
      verdict.violations.push(`console warning or error printed while answering: ${warnings.join(' / ').slice(0, 300)}`);
      warnings.length = 0;
    }
    for (const rule of verdict.violations) record({ index: i, op: req.op, rule, request: req, status: res.statusCode, body: res.body });
    for (const note of verdict.notes) {
      const n = (report.notes[note] ??= { count: 0, example: req, body: res.body });
      n.count++;
    }

    const after = await ledgerFingerprint(pool);
    if (after !== fingerprint) {
      if (verdict.mayMoveMoney) {
        report.moneyMoves++;
        for (const problem of await ledgerInvariantViolations(pool)) {
          record({ index: i, op: req.op, rule: `ledger invariant broken after a money move: ${problem}`, request: req, status: res.statusCode, body: res.body });
        }
      } else {
        record({ index: i, op: req.op, rule: `ledger or balances changed by a ${res.statusCode} that may not move money`, request: req, status: res.statusCode, body: res.body });
      }
      fingerprint = after;
    }
    if (opts.onProgress && opts.progressEvery && report.sent % opts.progressEvery === 0) opts.onProgress(report.sent, report);
  };

  try {
    await fc.assert(
      fc.asyncProperty(requestArb(world, ops, mcp.tools), async (req) => {
        await execute(req);
        return true;
      }),
      { numRuns: opts.numRuns, seed: opts.seed, endOnFailure: true },
    );
  } finally {
    console.warn = originalWarn;
    console.error = originalError;
    process.off('warning', onWarning);
  }

  // The server is healthy afterwards, and the ledger is whole.
  const health = await app.inject({ method: 'GET', url: '/healthz' });
  if (health.statusCode !== 200) report.finalChecks.push(`/healthz answered ${health.statusCode}`);
  const me = await app.inject({ method: 'GET', url: '/api/v1/me', headers: { authorization: `Bearer ${world.keys.read.raw}` } });
  if (me.statusCode !== 200 || !isObject((me.json() as { data?: unknown }).data)) report.finalChecks.push(`GET /api/v1/me answered ${me.statusCode}: ${me.body.slice(0, 300)}`);
  const b = await app.inject({ method: 'GET', url: `/api/account/details?api_key=${world.keys.read.raw}` });
  if (b.statusCode !== 200) report.finalChecks.push(`GET /api/account/details answered ${b.statusCode}: ${b.body.slice(0, 300)}`);
  if (report.mcp.available) {
    const m = await discoverMcp(app, world);
    if (m.reason) report.finalChecks.push(`MCP after the run: ${m.reason}`);
  }
  for (const problem of await ledgerInvariantViolations(pool)) report.finalChecks.push(`ledger: ${problem}`);
  report.durationMs = Date.now() - started;
  return report;
}

// ---------------------------------------------------------------------------------------------
// Reporting

const clip = (s: string, n: number) => (s.length > n ? `${s.slice(0, n)}… (${s.length} chars)` : s);

/** The request as an inject() call, keys replaced by their kind. */
export function describeRequest(req: FuzzRequest, world?: World): string {
  const redact = (s: string) => {
    if (!world) return s;
    let out = s;
    for (const [kind, k] of Object.entries(world.keys)) out = out.split(k.raw).join(`<${kind} key>`);
    return out;
  };
  const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, clip(redact(v), 200)]));
  const lines = [`${req.method} ${clip(redact(req.url), 400)}`, `  key: ${req.key}; ${req.note}`, `  headers: ${JSON.stringify(headers)}`];
  if (req.body !== undefined) lines.push(`  body: ${JSON.stringify(clip(redact(req.body), 400))}`);
  return lines.join('\n');
}

export function failed(report: FuzzReport): boolean {
  return report.violations.length > 0 || report.finalChecks.length > 0;
}

export function formatReport(report: FuzzReport, world?: World, verbose = false): string {
  const lines: string[] = [];
  const total = Object.values(report.byStatus).reduce((a, b) => a + b, 0);
  lines.push(`fuzz: ${report.sent} requests in ${(report.durationMs / 1000).toFixed(1)} s, seed ${report.seed} (FUZZ_SEED=${report.seed} repeats the run)`);
  lines.push(`  by status: ${Object.entries(report.byStatus).sort(([a], [b]) => Number(a) - Number(b)).map(([s, n]) => `${s}: ${n}`).join(', ')} (total ${total})`);
  for (const [surface, counts] of Object.entries(report.bySurface).sort()) {
    const n = Object.values(counts).reduce((a, b) => a + b, 0);
    lines.push(`  ${surface.padEnd(9)} ${String(n).padStart(6)}  ${Object.entries(counts).sort(([a], [b]) => Number(a) - Number(b)).map(([s, c]) => `${s}: ${c}`).join(', ')}`);
  }
  const opsOk = Object.values(report.byOp).filter((o) => o.ok > 0).length;
  lines.push(`  generators: ${Object.keys(report.byOp).length}, ${opsOk} of them reached a 2xx; auth-precedence oracle on ${report.oracles.expectStatus} requests, cross-tenant oracle on ${report.oracles.crossTenant}`);
  if (verbose) {
    for (const [op, o] of Object.entries(report.byOp).sort(([a], [b]) => a.localeCompare(b))) lines.push(`    ${op.padEnd(48)} ${String(o.sent).padStart(6)} sent ${String(o.ok).padStart(6)} 2xx`);
  }
  lines.push(`  money moved by ${report.moneyMoves} legitimate 2xx answers; MCP ${report.mcp.available ? `fuzzed (${report.mcp.tools} tools)` : `SKIPPED: ${report.mcp.reason}`}`);
  if (report.notSent.count) lines.push(`  ${report.notSent.count} generated requests were refused by inject() itself and not sent, e.g. ${report.notSent.examples[0]}`);
  for (const [note, n] of Object.entries(report.notes)) {
    lines.push(`  note (not a failure), ${n.count}×: ${note}; e.g.`);
    lines.push(describeRequest(n.example, world).replace(/^/gm, '    '));
    lines.push(`    → ${clip(n.body, 300)}`);
  }
  for (const c of report.finalChecks) lines.push(`  FINAL CHECK FAILED: ${c}`);
  if (report.violations.length) {
    lines.push(`  ${report.violations.length + report.suppressed} violations (${report.suppressed} more of the same kind not shown):`);
    for (const v of report.violations) {
      lines.push(`  #${v.index} ${v.op}: ${v.rule}`);
      lines.push(describeRequest(v.request, world).replace(/^/gm, '    '));
      lines.push(`    → ${v.status} ${clip(v.body, 400)}`);
    }
  } else lines.push('  no violations');
  return lines.join('\n');
}
