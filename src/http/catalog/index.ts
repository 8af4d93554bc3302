import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { CatalogModule } from '../../domain/catalog/catalog-module.js';
import type { DomainError } from '../../domain/errors.js';
import type { WorkspacePrincipal } from '../../domain/keys/principal.js';
import type { AuthService } from '../plugins/auth.js';
import { BODY_LIMITS } from '../body-limits.js';
import { msg } from '../../schemas/catalog.js';
import { itemsBody, purchaseBodies } from './encode.js';
import { catalogError, renderCatalogError } from './errors.js';
import { apiKey, type CatalogInput, catalogInput, itemId, parseForm, parseJson, purchaseCode } from './params.js';
import {
  accountResponse,
  apiKeyBodyField,
  catalogSecurity,
  commonErrors,
  errorResponse,
  itemResponse,
  itemsResponse,
  validationResponse,
} from '../../schemas/catalog.js';

export interface CatalogRoutesOptions {
  catalog: CatalogModule;
  auth: AuthService;
}

// Parameters may arrive in the query, a form or JSON body or a header, so the route schemas only
// document them; params.ts validates them in the documented order (401, then 400, then 404).
const documentOnly = () => (data: unknown) => ({ value: data });

const config = { auth: 'catalog' as const, renderError: renderCatalogError };
// Three scalar parameters: a body of a few kilobytes is plenty, and it is read before the key is known.
const bodyLimit = BODY_LIMITS.catalog;

const paramNote = 'Every parameter may also be sent in a form or JSON body (GET included); api_key also as Authorization: Bearer.';

/**
 * Sends a body already encoded (encode.ts); a string with a JSON content type is sent as is by
 * Fastify, without a second serialisation.
 */
function sendJson(reply: FastifyReply, body: string): FastifyReply {
  return reply.type('application/json; charset=utf-8').send(body);
}

/** The key's workspace: a known, non-spending workspace key, counted in the key's rate-limit bucket. */
async function principalOf(auth: AuthService, request: FastifyRequest, reply: FastifyReply, input: CatalogInput): Promise<WorkspacePrincipal> {
  const raw = apiKey(input);
  const principal = await auth.authenticate(request, reply, raw);
  // Spending keys would travel in query strings; publisher keys have no catalog (docs/http.md, docs/interface-b.md).
  if (!principal || principal.workspaceId === null || principal.canPlaceOrders) throw catalogError('unauthenticated', msg.invalidRequest);
  return principal as WorkspacePrincipal;
}

export const catalogRoutes: FastifyPluginAsyncZod<CatalogRoutesOptions> = async (app, { catalog, auth }) => {
  const { codeGuard } = catalog;
  const purchaseBody = purchaseBodies();
  // Refused before its key is read (a body too large or unparseable): counted in the address's
  // bucket like a request without a key, so such a flood is answered 429 too.
  const refuseBeforeKey = async (request: FastifyRequest, error: DomainError): Promise<never> => {
    await auth.countAddress(request);
    throw error;
  };
  const parsed = (request: FastifyRequest, read: () => unknown, done: (err: Error | null, body?: unknown) => void) => {
    let body: unknown;
    try {
      body = read();
    } catch {
      refuseBeforeKey(request, catalogError('bad_request', msg.invalidRequest)).catch((err: Error) => done(err, undefined));
      return;
    }
    done(null, body);
  };
  // A body over the limit is a 413 whatever its media type (Fastify measures only bodies it parses).
  app.addHook('onRequest', async (request) => {
    const length = Number(request.headers['content-length']);
    if (length > request.routeOptions.bodyLimit) await refuseBeforeKey(request, catalogError('payload_too_large', msg.payloadTooLarge));
  });
  // JSON as the buyer API reads it, except that a parameter given twice is seen (parseJson).
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) =>
    parsed(request, () => parseJson(body as string), done),
  );
  // Any other media type is read (so a chunked body over the limit is a 413, as a declared one is)
  // and refused, unless it is only whitespace: no body, as on GET (params.ts, parseBody).
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (request, body, done) =>
    parsed(
      request,
      () => {
        if ((body as Buffer).toString('utf8').trim() !== '') throw new Error('a body in a media type the seller API does not read');
        return undefined;
      },
      done,
    ),
  );
  // Forms are read only here: the buyer API keeps refusing them (this plugin is encapsulated).
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (request, body, done) =>
    parsed(request, () => parseForm(body as string), done),
  );

  app.get(
    '/api/account/details',
    {
      config,
      bodyLimit,
      validatorCompiler: documentOnly,
      schema: {
        operationId: 'getAccountDetails',
        summary: "The key's account: owner name, username, e-mail, available balance and public profile.",
        description: paramNote,
        tags: ['Catalog'],
        security: catalogSecurity,
        response: { 200: accountResponse.describe('The account.'), ...commonErrors },
      },
    },
    async (request, reply) => {
      const principal = await principalOf(auth, request, reply, await catalogInput(request));
      const account = await catalog.account(principal.workspaceId);
      if (!account) throw catalogError('unauthenticated', msg.invalidRequest);
      return { status: 'success' as const, data: account };
    },
  );

  app.get(
    '/api/items/all',
    {
      config,
      bodyLimit,
      validatorCompiler: documentOnly,
      schema: {
        operationId: 'listCatalogItems',
        summary: 'Every item the workspace sells, oldest first; not paginated.',
        description: paramNote,
        tags: ['Catalog'],
        security: catalogSecurity,
        response: {
          200: itemsResponse.describe('The items.'),
          ...commonErrors,
          404: errorResponse('The workspace has no items.', msg.noItems),
        },
      },
    },
    async (request, reply) => {
      const principal = await principalOf(auth, request, reply, await catalogInput(request));
      const items = await catalog.items(principal.workspaceId);
      if (items.length === 0) throw catalogError('not_found', msg.noItems);
      return sendJson(reply, itemsBody(items));
    },
  );

  app.get(
    '/api/items/item',
    {
      config,
      bodyLimit,
      validatorCompiler: documentOnly,
      schema: {
        operationId: 'getCatalogItem',
        summary: 'One item of the workspace by item_id.',
        description: paramNote,
        tags: ['Catalog'],
        security: catalogSecurity,
        querystring: z.object({
          item_id: z.int().min(1).max(2_147_483_647).describe('The item id (an integer in 1..2147483647).'),
        }),
        response: {
          200: itemResponse.describe('The item.'),
          ...commonErrors,
          400: errorResponse(
            'item_id missing or not an integer in 1..2147483647, or an unparseable body.',
            msg.itemIdRequired,
            msg.itemIdInteger,
            msg.invalidRequest,
          ),
          404: errorResponse("No item with that id among the workspace's items.", msg.itemNotFound),
        },
      },
    },
    async (request, reply) => {
      const input = await catalogInput(request);
      const principal = await principalOf(auth, request, reply, input);
      const item = await catalog.item(principal.workspaceId, itemId(input));
      if (item === undefined) throw catalogError('not_found', msg.itemNotFound);
      return { status: 'success' as const, item };
    },
  );

  app.post(
    '/api/purchases/validation',
    {
      config,
      bodyLimit,
      validatorCompiler: documentOnly,
      schema: {
        operationId: 'validatePurchaseCode',
        summary: 'The purchase behind a purchase code, when it is a sale of this workspace that was not refunded.',
        description:
          `${paramNote} At most 30 "Invalid purchase code" answers per key per minute; after that every ` +
          'validation by the key answers 429 until the minute is over, valid codes included.',
        tags: ['Catalog'],
        security: catalogSecurity,
        consumes: ['application/x-www-form-urlencoded', 'application/json'],
        querystring: z.object({
          purchase_code: z.string().optional().describe('The purchase code to check (trimmed), when not sent in the body.'),
        }),
        body: z.object({
          purchase_code: z.string().optional().describe('The purchase code to check (trimmed), when not sent in the query string.'),
          api_key: apiKeyBodyField,
        }),
        response: {
          200: validationResponse.describe('The code is valid.'),
          ...commonErrors,
          400: errorResponse('purchase_code missing or empty, or an unparseable body.', msg.purchaseCodeRequired, msg.invalidRequest),
          404: errorResponse(
            "Unknown, another seller's, refunded, ill-formed (not a UUID) or over 64 characters.",
            msg.invalidPurchaseCode,
          ),
          429: errorResponse(
            'Rate limit exceeded, or 30 invalid codes answered within the minute; retry after Retry-After seconds.',
            msg.tooManyRequests,
          ),
        },
      },
    },
    async (request, reply) => {
      const input = await catalogInput(request);
      const principal = await principalOf(auth, request, reply, input);
      const code = purchaseCode(input);
      const [guard, purchase] = await Promise.all([
        codeGuard.check(String(principal.keyId)),
        code === undefined ? undefined : catalog.purchase(principal.workspaceId, code),
      ]);
      if (guard.blocked) {
        reply.header('retry-after', guard.retryAfterSeconds);
        throw catalogError('rate_limited', msg.tooManyRequests);
      }
      if (purchase !== undefined) return sendJson(reply, purchaseBody(purchase));
      const after = await codeGuard.fail(String(principal.keyId));
      if (after.blocked) {
        reply.header('retry-after', after.retryAfterSeconds);
        throw catalogError('rate_limited', msg.tooManyRequests);
      }
      throw catalogError('not_found', msg.invalidPurchaseCode);
    },
  );
};
