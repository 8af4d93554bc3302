import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type pg from 'pg';
import type { Clock } from '../../domain/clock.js';
import { createWorkspacesModule, type WorkspacesModule } from '../../domain/workspaces/workspaces-module.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** The workspaces module of this app (REST `/me`, the MCP tools and the console read through it). */
    workspaces: WorkspacesModule;
  }
}

/**
 * The workspaces module of this app, made once on its pool and clock: one settings cache and one
 * balance reader for every adapter. Nothing to close: the cache holds only values, and the
 * reader's waiting reads have all been answered once the app's requests are.
 */
export const workspacesPlugin = fp(
  async function workspacesPlugin(app: FastifyInstance, opts: { pool: pg.Pool; clock: Clock }) {
    app.decorate('workspaces', createWorkspacesModule(opts));
  },
  { name: 'workspaces' },
);
