import type pg from 'pg';
import type { BillingDeps } from '../billing/billing-deps.js';
import type { Clock } from '../clock.js';
import type { LinkChecker } from '../orders/link-checker.js';
import type { PlacementGroups } from '../orders/place-orders.js';
import type { Durations } from '../orders/states.js';
import type { SearchEngine } from '../outlets/search-engine.js';
import type { SecretBox } from '../webhooks/secret-box.js';
import type { WorkspacesModule } from '../workspaces/workspaces-module.js';

/**
 * The app's shared services, made once by the app (src/app.ts) and handed to every surface: the
 * REST routes, the MCP endpoint and its tools, the console. Each surface declares what it takes as
 * a `Pick` of this type and adds its own (a request's principal, a logger), so a service is named
 * and typed in one place.
 */
export interface Services {
  /** The app's pool: a `Db` for every domain call, and what the placement groups are sized by. */
  pool: pg.Pool;
  clock: Clock;
  /** The orders' deadlines. */
  durations: Durations;
  /** Outlet search: REST, MCP, the console and the planner ask the same engine. */
  search: SearchEngine;
  workspaces: WorkspacesModule;
  /** The placements of the app's pool, waiting and running (`placementGroups` in place-orders.ts). */
  placementGroups: PlacementGroups;
  /** The console's absolute base URL: where a person approves a key's request (`approve_url`). */
  approvalBaseUrl: string;
  linkChecker: LinkChecker;
  /** Seals webhook signing secrets. */
  webhookSecrets: SecretBox;
  /** Adding funds and the operations console (docs/billing.md). */
  billing: BillingDeps;
}
