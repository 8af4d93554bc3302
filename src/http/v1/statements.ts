import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { FastifyRequest } from 'fastify';
import type pg from 'pg';
import { z } from 'zod';
import type { Clock } from '../../domain/clock.js';
import { monthlyStatement, monthOf, type StatementOwner } from '../../domain/ledger/statements.js';
import { authErrors, bearerSecurity, errorResponses } from '../../schemas/common.js';
import { statement, statementQuery } from '../../schemas/statements.js';

export interface StatementRouteDeps {
  pool: pg.Pool;
  clock: Clock;
  party: 'buyer' | 'publisher';
  /** Whose statement: the key's workspace, or under /publisher the key's publisher. Nobody else's can be named. */
  owner: (request: FastifyRequest) => StatementOwner;
}

/** GET /statements?month=YYYY-MM: a workspace's or a publisher's monthly statement (docs/billing.md, "Papers"). */
export const statementRoutes: FastifyPluginAsyncZod<StatementRouteDeps> = async (app, { pool, clock, party, owner }) => {
  app.get(
    '/statements',
    {
      ...(party === 'publisher' ? { config: { auth: 'publisher' as const } } : {}),
      schema: {
        operationId: party === 'buyer' ? 'getStatement' : 'publisherGetStatement',
        summary:
          party === 'buyer'
            ? "The workspace's statement for a month (UTC): each account's opening balance, every movement, closing balance."
            : "The publisher's statement for a month (UTC): each account's opening balance, every movement, closing balance.",
        description: 'Reconciles with the ledger to the cent: opening + movements = closing, and closing is the balance at the month’s end. A month not yet begun is a 422.',
        tags: [party === 'buyer' ? 'Workspace' : 'Publisher'],
        security: bearerSecurity,
        querystring: statementQuery,
        response: { 200: z.object({ data: statement }), ...errorResponses(...authErrors, 422) },
      },
    },
    async (request) => {
      const now = clock.now();
      return { data: await monthlyStatement(pool, owner(request), request.query.month ?? monthOf(now), now) };
    },
  );
};
