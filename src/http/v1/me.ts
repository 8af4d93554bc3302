import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type pg from 'pg';
import { z } from 'zod';
import { getMe } from '../../domain/workspaces/me-query.js';
import type { WorkspaceSettingsCache } from '../../domain/workspaces/settings-cache.js';
import { workspacePrincipal } from '../plugins/auth.js';
import { authErrors, bearerSecurity, errorResponses } from '../../schemas/common.js';
import { meData } from '../../schemas/me.js';

export const meRoutes: FastifyPluginAsyncZod<{ pool: pg.Pool; settings: WorkspaceSettingsCache }> = async (app, { pool, settings }) => {
  app.get(
    '/me',
    {
      schema: {
        operationId: 'getMe',
        summary: 'The workspace behind the key: balance, held funds, brand kits, approval rules and what the key may do.',
        tags: ['Workspace'],
        security: bearerSecurity,
        response: { 200: z.object({ data: meData }), ...errorResponses(...authErrors) },
      },
    },
    async (request) => ({ data: await getMe(pool, settings, workspacePrincipal(request)) }),
  );
};
