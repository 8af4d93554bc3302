import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { jsonSchemaTransform } from 'fastify-type-provider-zod';

/**
 * The OpenAPI document is generated from the same zod schemas the routes validate with, served
 * at /openapi.json, with a reference page at /docs.
 */
export const openApi = fp(
  async function openApi(app: FastifyInstance, opts: { serverUrl?: string }) {
    await app.register(swagger, {
      openapi: {
        openapi: '3.1.0',
        info: {
          title: 'Marketplace API',
          version: '1.0.0',
          description:
            'Interface A (/api/v1, /mcp): buy sponsored content from verified publications. Amounts are integer US cents, fees included; *_formatted strings use the workspace currency.\n\n' +
            'Interface B (/api/account, /api/items, /api/purchases): a digital-goods seller reads its account and items and validates purchase codes.',
          license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
        },
        servers: [{ url: opts.serverUrl ?? 'http://127.0.0.1:3000', description: 'This server' }],
        tags: [
          { name: 'Workspace', description: 'The workspace behind the key.' },
          { name: 'Operations', description: 'Health and readiness.' },
        ],
        components: {
          securitySchemes: {
            bearerAuth: { type: 'http', scheme: 'bearer', description: 'An API key: mk_ followed by 32 characters.' },
          },
        },
      },
      transform: jsonSchemaTransform,
    });

    app.get('/openapi.json', { config: { auth: 'public' }, schema: { hide: true } }, async () => app.swagger());

    await app.register(async (docs) => {
      // Everything registered in this scope is the public reference page.
      docs.addHook('onRoute', (route) => {
        route.config = { ...(route.config ?? {}), auth: 'public' };
      });
      await docs.register(swaggerUi, { routePrefix: '/docs', uiConfig: { url: '/openapi.json' } as never });
    });
  },
  { name: 'openapi' },
);
