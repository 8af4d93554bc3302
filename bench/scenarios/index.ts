import { mcp } from './mcp.js';
import { mcpPing } from './mcp-ping.js';
import { hostile } from './hostile.js';
import { me } from './me.js';
import { ordersMany, ordersMany50, ordersOne } from './orders.js';
import { ordersWebhooks } from './orders-webhooks.js';
import { search1mBroad, search1mFresh, search1mMixed, searchBroad, searchFresh, searchMixed } from './search.js';
import type { Scenario } from './types.js';
import { validation, validationForm } from './validation.js';

export type { BackgroundLoad, BenchContext, BenchRequest, Ceiling, Scenario, ScenarioObserver } from './types.js';

/** Every scenario `npm run bench -- <name>` knows; add new ones here. */
export const scenarios: readonly Scenario[] = [me, validation, validationForm, hostile, mcp, mcpPing, ordersMany, ordersMany50, ordersOne, ordersWebhooks, searchMixed, searchBroad, searchFresh, search1mMixed, search1mBroad, search1mFresh];

/** Names that stand for several scenarios, e.g. `npm run bench -- orders`. */
export const scenarioGroups: Readonly<Record<string, readonly Scenario[]>> = {
  orders: [ordersMany, ordersMany50, ordersOne],
  search: [searchMixed, searchBroad, searchFresh],
  'search-1m': [search1mMixed, search1mBroad, search1mFresh],
};

export function findScenario(name: string): Scenario | undefined {
  return scenarios.find((s) => s.name === name);
}
