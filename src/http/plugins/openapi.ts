import { STATUS_CODES } from 'node:http';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import helmet from '@fastify/helmet';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { createJsonSchemaTransform, createJsonSchemaTransformObject } from 'fastify-type-provider-zod';
import type { z } from 'zod';
import { applyDocumentAs } from '../../schemas/param-docs.js';

// Just the parts of an OpenAPI 3.1 document this file touches (openapi-types is only a
// dependency of @fastify/swagger, not of this project).
type Ref = { $ref: string };
type SecurityRequirement = Record<string, string[]>;
interface Response {
  description: string;
  headers?: Record<string, Ref | object>;
  content?: Record<string, unknown>;
}
interface Parameter {
  in: string;
  name: string;
  required?: boolean;
  description?: string;
  schema?: { type?: string };
}
interface Operation {
  tags?: string[];
  security?: SecurityRequirement[];
  parameters?: (Parameter | Ref)[];
  requestBody?: { required?: boolean; description?: string; content?: Record<string, { schema?: { anyOf?: { type?: string }[]; [key: string]: unknown } }> };
  responses?: Record<string, Response | Ref>;
}
interface Document {
  tags?: { name: string }[];
  security?: SecurityRequirement[];
  paths?: Record<string, Partial<Record<string, Operation>> | undefined>;
  components?: { schemas?: Record<string, unknown>; headers?: Record<string, unknown> } & Record<string, unknown>;
}

export const OPENAPI_PATH = '/openapi.json';
export const DOCS_PREFIX = '/docs';

const headerRef = (name: keyof typeof responseHeaders) => ({ $ref: `#/components/headers/${name}` });

/** Headers the cross-cutting plugins (request id, rate limit, auth) put on responses. */
const responseHeaders = {
  'X-Request-Id': {
    description: "The caller's X-Request-Id when it is 1..128 characters of [A-Za-z0-9._-], else a new one.",
    schema: { type: 'string', maxLength: 128 },
  },
  'X-RateLimit-Limit': {
    description: 'Requests allowed per minute for this key (per client IP for unknown keys).',
    schema: { type: 'integer', minimum: 1 },
  },
  'X-RateLimit-Remaining': {
    description: 'Requests left in the current one-minute window.',
    schema: { type: 'integer', minimum: 0 },
  },
  'Retry-After': {
    description: 'Seconds to wait before retrying.',
    schema: { type: 'integer', minimum: 0 },
  },
  'WWW-Authenticate': {
    description: 'The authentication scheme to use.',
    schema: { type: 'string', const: 'Bearer' },
  },
  'Idempotent-Replayed': {
    description: 'true when this is the stored answer to an earlier request with the same Idempotency-Key (absent otherwise).',
    schema: { type: 'string', const: 'true' },
  },
};

/**
 * The seller API reads api_key, item_id and purchase_code from the query string, a form body or a
 * JSON body, GET included (docs/interface-b.md). OpenAPI 3.1 allows a body on GET, so a catalog
 * operation without one gets an optional body naming api_key and every parameter its query takes,
 * and no query parameter is required on its own. A key in a body is no security scheme OpenAPI can
 * name: the empty requirement `{}` beside the query and bearer schemes stands for it (a request
 * with no key anywhere is still 401).
 */
function describeCatalogInputs(op: Operation): void {
  const query = (op.parameters ?? []).filter((p): p is Parameter => !('$ref' in p) && p.in === 'query');
  for (const p of query.filter((p) => p.required)) {
    p.required = false;
    p.description = `${p.description ?? ''} Required, here or in the body.`.trim();
  }
  if (!op.requestBody) {
    const properties: Record<string, object> = {
      api_key: { type: 'string', description: 'The API key, when not in the query string or an Authorization: Bearer header.' },
    };
    for (const p of query) {
      // A JSON body may give an integer as a number or as a string of digits.
      properties[p.name] = p.schema?.type === 'integer' ? { anyOf: [p.schema, { type: 'string', pattern: '^\\s*\\d+\\s*$' }], description: p.description } : { ...p.schema, description: p.description };
    }
    const schema = { type: 'object', properties };
    op.requestBody = {
      required: false,
      description: 'The parameters may come in a body instead of the query string, on GET too.',
      content: { 'application/x-www-form-urlencoded': { schema }, 'application/json': { schema } },
    };
  }
  op.security = [...(op.security ?? []), {}];
}

/** The statuses an Idempotency-Key records and replays (2xx, 402, 409 from the order's state). */
const replayable = (code: number) => (code >= 200 && code < 300) || code === 402 || code === 409;

const methods = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

/**
 * Adds what the route schemas cannot say themselves, the same way for every operation:
 * - headers set by the request-id, rate-limit and auth plugins (X-Request-Id on every response;
 *   X-RateLimit-* on every non-5xx, non-401 response of an authenticated operation; Retry-After on 429;
 *   WWW-Authenticate on 401 of bearer routes), as references to components.headers;
 * - a reason phrase instead of @fastify/swagger's "Default Response".
 * Then drops top-level tags no operation uses, and component schemas nothing refers to
 * (fastify-type-provider-zod emits an input and an output variant of every registered schema,
 * e.g. `ErrorInput` beside `Error`).
 */
function finishDocument(doc: Document): void {
  doc.components = { ...doc.components, headers: { ...doc.components?.headers, ...responseHeaders } };
  const operations = Object.values(doc.paths ?? {}).flatMap((item) => methods.flatMap((m) => item?.[m] ?? []));
  for (const op of operations) {
    const security = op.security ?? doc.security ?? [];
    const authenticated = security.some((req) => Object.keys(req).length > 0);
    const bearer = security.some((req) => 'bearerAuth' in req);
    // The seller API reads its body before its key: a 400 or 413 there counts in the address's bucket
    // and carries no key's rate-limit headers.
    const catalog = op.tags?.includes('Catalog') ?? false;
    const idempotency = op.parameters?.find((p): p is Parameter => !('$ref' in p) && p.in === 'header' && p.name === 'idempotency-key');
    // A body that may be null may be left out (the no-body actions); the seller API takes every
    // parameter from the query string as well as from a body.
    const content = Object.values(op.requestBody?.content ?? {});
    if (op.requestBody && (catalog || (content.length > 0 && content.every((c) => c.schema?.anyOf?.some((s) => s.type === 'null'))))) {
      op.requestBody.required = false;
    }
    for (const [status, value] of Object.entries(op.responses ?? {})) {
      if ('$ref' in value) continue;
      const code = Number(status);
      if (value.description === 'Default Response') value.description = STATUS_CODES[code] ?? 'Response';
      if (code === 400 && idempotency?.required) value.description = `${value.description} Or no Idempotency-Key: this operation requires one.`;
      const headers: Record<string, Ref> = { 'X-Request-Id': headerRef('X-Request-Id') };
      if (idempotency && replayable(code)) headers['Idempotent-Replayed'] = headerRef('Idempotent-Replayed');
      // Not documented on 401: there they would describe the address's bucket, not a key's.
      if (authenticated && code < 500 && code !== 401 && !(catalog && (code === 400 || code === 413))) {
        headers['X-RateLimit-Limit'] = headerRef('X-RateLimit-Limit');
        headers['X-RateLimit-Remaining'] = headerRef('X-RateLimit-Remaining');
      }
      if (code === 429) headers['Retry-After'] = headerRef('Retry-After');
      if (code === 401 && bearer) headers['WWW-Authenticate'] = headerRef('WWW-Authenticate');
      value.headers = { ...headers, ...value.headers };
    }
    if (catalog) describeCatalogInputs(op);
  }
  const usedTags = new Set(operations.flatMap((op) => op.tags ?? []));
  if (doc.tags) doc.tags = doc.tags.filter((tag) => usedTags.has(tag.name));
  pruneUnusedSchemas(doc);
}

const schemaRefPrefix = '#/components/schemas/';

function collectSchemaRefs(value: unknown, into: Set<string>): void {
  if (Array.isArray(value)) {
    for (const v of value) collectSchemaRefs(v, into);
  } else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if (k === '$ref' && typeof v === 'string' && v.startsWith(schemaRefPrefix)) into.add(v.slice(schemaRefPrefix.length));
      else collectSchemaRefs(v, into);
    }
  }
}

function pruneUnusedSchemas(doc: Document): void {
  const schemas = doc.components?.schemas;
  if (!schemas) return;
  const used = new Set<string>();
  collectSchemaRefs({ ...doc, components: { ...doc.components, schemas: undefined } }, used);
  // Follow references between component schemas until nothing new turns up.
  for (let before = -1; before !== used.size; ) {
    before = used.size;
    for (const name of [...used]) collectSchemaRefs(schemas[name], used);
  }
  for (const name of Object.keys(schemas)) if (!used.has(name)) delete schemas[name];
}

/**
 * Runs for every schema node as zod converts it. An override replaces the library's default, whose
 * only part that applies to these schemas (OpenAPI 3.1, no dates) is kept: a union drops the
 * empty branches zod emits for members it cannot represent. Parameters parsed from strings are
 * then documented as the values they carry (schemas/param-docs.ts).
 */
function overrideSchema(ctx: { zodSchema: z.core.$ZodType; jsonSchema: Record<string, unknown> }): void {
  const json = ctx.jsonSchema;
  if (ctx.zodSchema._zod.def.type === 'union' && Array.isArray(json.anyOf)) {
    json.anyOf = json.anyOf.filter((branch) => Object.keys(branch as object).length > 0);
  }
  applyDocumentAs(json);
}

const zodToJsonConfig = { override: overrideSchema };
const jsonSchemaTransform = createJsonSchemaTransform({ zodToJsonConfig });
const jsonSchemaTransformObject = createJsonSchemaTransformObject({ zodToJsonConfig });

/**
 * A list that also exports CSV (route config `csv`, docs/http.md): its 200 answers JSON by default
 * and `text/csv` when asked, every matching row with these columns.
 */
function withCsv(responses: Record<string, unknown>, columns: readonly string[]): Record<string, unknown> {
  const json = responses['200'] as Record<string, unknown> & { description?: string };
  const { description, ...schema } = json;
  return {
    ...responses,
    200: {
      description: description ?? 'OK',
      content: {
        'application/json': { schema },
        'text/csv': {
          schema: {
            type: 'string',
            description:
              `With Accept: text/csv: every row matching the filters (page and per_page ignored), streamed; RFC 4180, CRLF, a header line. ` +
              `Columns: ${columns.join(', ')}. A nested field is named by its path; an array is its JSON; null is an empty cell; ` +
              `text starting with = + - @, a tab or a carriage return gets a leading apostrophe (numbers never do).`,
          },
        },
      },
    },
  };
}

const signatureHeader = (name: string, description: string) => ({ name, in: 'header', required: true, description, schema: { type: 'string' } });

/** What the service POSTs to a workspace's or a publisher's webhook endpoints (docs/events.md): the feed's event, signed by Standard Webhooks 1.0. */
function webhookDoc(owner: 'workspace' | 'publisher', schema: 'WebhookEvent' | 'PublisherWebhookEvent') {
  const feed = owner === 'workspace' ? 'GET /api/v1/events' : 'GET /api/v1/publisher/events';
  return {
    post: {
      operationId: owner === 'workspace' ? 'receiveEvent' : 'receivePublisherEvent',
      summary: `An event, sent to every enabled endpoint of its ${owner} that takes its type.`,
      description:
        `The body is the event as ${feed} shows it, with \`timestamp\` (= created_at) as Standard Webhooks names it. Answer any 2xx ` +
        'within WEBHOOK_TIMEOUT_MS; anything else is retried with backoff. Deliveries repeat (at least once): deduplicate on webhook-id.',
      tags: ['Events'],
      security: [],
      parameters: [
        signatureHeader('webhook-id', 'The event id; the same on every attempt and resend.'),
        signatureHeader('webhook-timestamp', 'Unix seconds of this attempt.'),
        signatureHeader('webhook-signature', 'v1,<base64 HMAC-SHA256 of "id.timestamp.body"> with the endpoint secret; two, space-separated, during a rotation.'),
      ],
      requestBody: { required: true, content: { 'application/json': { schema: { $ref: `#/components/schemas/${schema}` } } } },
      responses: { '200': { description: 'Any 2xx: delivered.' } },
    },
  };
}

const webhookDocs = { event: webhookDoc('workspace', 'WebhookEvent'), publisherEvent: webhookDoc('publisher', 'PublisherWebhookEvent') };

/**
 * The OpenAPI document is generated from the same zod schemas the routes validate with, served
 * at /openapi.json, with a reference page at /docs. Both are public and neither is documented.
 */
export const openApi = fp(
  async function openApi(app: FastifyInstance, opts: { serverUrl?: string; secure?: boolean }) {
    await app.register(swagger, {
      openapi: {
        openapi: '3.1.0',
        info: {
          title: 'Marketplace API',
          version: '1.0.0',
          description:
            'The buyer API (/api/v1, /mcp): buy sponsored content from verified publications. Amounts are integer US cents, fees included; *_formatted strings use the workspace currency.\n\n' +
            'The seller API (/api/account, /api/items, /api/purchases): a digital-goods seller reads its account and items and validates purchase codes.\n\n' +
            'Departures from the specification, for the link guarantee (docs/link-guarantee.md): order states link_lost (the publisher restores the link by deadlines.restore_by) and link_refunded (final); order fields live_checks, live_checked_at, guarantee_ends_at and deadlines.restore_by; at review_by a placement is paid only if its last link check passed, otherwise it returns to publishing once and then expires with a refund; approval pays the publisher into pending, which becomes payable when the guarantee window ends with the link alive (GET /api/v1/publisher/me).\n\n' +
            'Every response carries X-Request-Id. Authenticated responses carry X-RateLimit-Limit and X-RateLimit-Remaining (one bucket per key, per minute); a 429 carries Retry-After.',
          license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
        },
        // Without PUBLIC_BASE_URL, relative: clients resolve it against wherever they fetched the
        // document, so /docs tries requests on the host and port that served it.
        servers: [{ url: opts.serverUrl ?? '/', description: 'This server' }],
        // Every tag an operation may use; those no operation uses are dropped from the document.
        tags: [
          { name: 'Workspace', description: 'The workspace behind the key: balance, approval rules, brand kits, ledger.' },
          { name: 'Outlets', description: 'Publications and the offers they sell.' },
          { name: 'Plans', description: 'Pick offers for a goal within a budget; buys nothing.' },
          { name: 'Orders', description: 'Buy offers, follow each order through review and publication.' },
          { name: 'Approval requests', description: "A key's spending actions that wait for a person's approval in the console (docs/approvals.md)." },
          { name: 'Top-ups', description: "Adding funds: a request with a reference and payment instructions, credited once the operator's staff confirm the money received (docs/billing.md)." },
          { name: 'Events', description: 'What happened, as a feed to page or follow, and as signed webhooks (docs/events.md).' },
          { name: 'Publisher', description: "A publisher's side of its orders, events and webhooks (publisher keys)." },
          { name: 'MCP', description: 'The Model Context Protocol endpoint (stateless streamable HTTP).' },
          { name: 'Catalog', description: 'The seller API: the seller account, its items and purchase-code validation.' },
          { name: 'Operations', description: 'Health and readiness.' },
        ],
        components: {
          securitySchemes: {
            bearerAuth: { type: 'http', scheme: 'bearer', description: 'An API key: mk_ followed by 32 characters.' },
            // The seller API: the same keys (non-spending only), sent as the api_key parameter (query, or a
            // form or JSON body, which OpenAPI cannot name as a scheme: each catalog operation adds
            // the empty requirement {} for it, describeCatalogInputs) or as a bearer token.
            apiKeyQuery: {
              type: 'apiKey',
              in: 'query',
              name: 'api_key',
              description:
                'The seller API: the API key as the api_key parameter. It is also accepted in a form or JSON body, which no security scheme can name: the empty requirement {} of each seller API operation stands for it. Spending keys are refused.',
            },
            apiKeyBearer: {
              type: 'http',
              scheme: 'bearer',
              description: 'The seller API: the same api_key as Authorization: Bearer. Errors keep the seller API\'s shape.',
            },
          },
        },
      },
      // Operations that need a key created with "Can place orders" say so (x-requires-spending-key),
      // for readers, generated clients and the security suite that walks the document.
      transform: (input) => {
        const out = jsonSchemaTransform(input);
        const csv = input.route.config?.csv;
        if (csv) out.schema = { ...out.schema, response: withCsv(out.schema.response as Record<string, unknown>, csv) };
        if (input.route.config?.spending) return { ...out, schema: { ...out.schema, 'x-requires-spending-key': true } };
        return out;
      },
      // Puts schemas registered with an id (zod's global registry, `.meta({ id })`) under
      // components.schemas, then adds the shared headers.
      transformObject: (input) => {
        const doc = Object.assign(jsonSchemaTransformObject(input), { webhooks: webhookDocs });
        finishDocument(doc as Document);
        return doc;
      },
    });

    app.get(OPENAPI_PATH, { config: { auth: 'public' }, schema: { hide: true } }, async () => app.swagger());

    await app.register(async (docs) => {
      // Everything registered in this scope is the public reference page. @fastify/swagger-ui
      // marks its own routes hidden, and its page always loads `<prefix>/json` (uiConfig.url is
      // overridden), so that route sends the browser to the one document at /openapi.json.
      docs.addHook('onRoute', (route) => {
        route.config = { ...(route.config ?? {}), auth: 'public' };
        if (route.url === `${DOCS_PREFIX}/json`) {
          route.handler = async (_request, reply) => reply.redirect(OPENAPI_PATH);
        }
      });
      // The reference page under helmet's headers and its default content security policy (no
      // inline script; Swagger UI loads its scripts as files and styles its elements inline).
      await docs.register(helmet, {
        contentSecurityPolicy: { directives: { upgradeInsecureRequests: opts.secure ? [] : null } },
        strictTransportSecurity: opts.secure ?? false,
      });
      await docs.register(swaggerUi, { routePrefix: DOCS_PREFIX });
    });
  },
  { name: 'openapi' },
);
