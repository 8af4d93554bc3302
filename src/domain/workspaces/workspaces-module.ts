import type pg from 'pg';
import type { Clock } from '../clock.js';
import type { WorkspacePrincipal } from '../keys/principal.js';
import { getMe, workspaceSummary } from './me-query.js';
import { WorkspaceSettingsCache } from './settings-cache.js';

/** A workspace as its keys see it: `/me` and `get-balance` read the same settings cache. */
export function createWorkspacesModule(deps: { pool: pg.Pool; clock: Clock }) {
  const settings = new WorkspaceSettingsCache(deps.pool, deps.clock);
  return {
    settings,
    /** The workspace behind the key, its balances, brand kits and what the key may do. */
    me: (principal: WorkspacePrincipal) => getMe(deps.pool, settings, principal, deps.clock.now()),
    /** The workspace's balances and settings without a key: the console's overview. */
    summary: (workspaceId: number) => workspaceSummary(deps.pool, settings, workspaceId),
  };
}

export type WorkspacesModule = ReturnType<typeof createWorkspacesModule>;
