import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { WorkspacesModule } from '../../domain/workspaces/workspaces-module.js';
import { workspacePrincipal } from '../plugins/auth.js';
import { authErrors, bearerSecurity, errorResponses } from '../../schemas/common.js';
import { meData } from '../../schemas/me.js';

export const meRoutes: FastifyPluginAsyncZod<{ workspaces: WorkspacesModule }> = async (app, { workspaces }) => {
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
    async (request) => ({ data: await workspaces.me(workspacePrincipal(request)) }),
  );
};
