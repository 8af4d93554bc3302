import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type pg from 'pg';
import type { Db } from '../../db/client.js';
import { meRoutes } from './me.js';

export const v1Routes: FastifyPluginAsyncZod<{ pool: pg.Pool; db: Db }> = async (app, { pool }) => {
  await app.register(meRoutes, { pool });
};
