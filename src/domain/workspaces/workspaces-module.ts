import type pg from 'pg';
import type { Clock } from '../clock.js';
import type { WorkspacePrincipal } from '../keys/principal.js';
import { balanceReader, getMe, type WorkspaceReads, workspaceSummary } from './me-query.js';
import { WorkspaceSettingsCache } from './settings-cache.js';

/**
 * A workspace as its keys see it: `/me`, `get-balance`, the MCP quotes and the console's overview
 * read the same settings cache and gather their balance reads in one reader. Made once per pool
 * (the app's `workspaces` plugin).
 */
export function createWorkspacesModule(deps: { pool: pg.Pool; clock: Clock }) {
  const settings = new WorkspaceSettingsCache(deps.pool, deps.clock);
  const reads: WorkspaceReads = { pool: deps.pool, settings, balances: balanceReader(deps.pool) };
  return {
    settings,
    /** The workspace behind the key, its balances, brand kits and what the key may do (its budget as of `now`). */
    me: (principal: WorkspacePrincipal, now: number = deps.clock.now()) => getMe(reads, principal, now),
    /** The workspace's balances and settings without a key: the console's overview. */
    summary: (workspaceId: number) => workspaceSummary(reads, workspaceId),
  };
}

export type WorkspacesModule = ReturnType<typeof createWorkspacesModule>;
