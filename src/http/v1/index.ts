import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type pg from 'pg';
import type { Db } from '../../db/client.js';
import { ledgerRoutes } from './ledger.js';
import { meRoutes } from './me.js';
import { outletRoutes } from './outlets.js';

export const v1Routes: FastifyPluginAsyncZod<{ pool: pg.Pool; db: Db; publicBaseUrl: string | undefined }> = async (app, { pool, publicBaseUrl }) => {
  await app.register(meRoutes, { pool });
  await app.register(ledgerRoutes, { pool, publicBaseUrl });
  await app.register(outletRoutes, { pool, publicBaseUrl });
};
