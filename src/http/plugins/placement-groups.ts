import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { type PlaceDeps, type PlacementGroups, placementGroups } from '../../domain/orders/place-orders.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** The line placements of this app's pool wait in and go together from (REST, MCP and the console place through it). */
    placementGroups: PlacementGroups;
  }
}

/**
 * The placement groups of this app: made once, on the app's pool, clock and deadlines, and handed
 * to every adapter that places orders, so none of them can bring its own. Nothing to close: by
 * the time the app closes every request has been answered, so no placement is waiting.
 */
export const placementGroupsPlugin = fp(
  async function placementGroupsPlugin(app: FastifyInstance, opts: PlaceDeps) {
    app.decorate('placementGroups', placementGroups(opts));
  },
  { name: 'placement-groups' },
);
