import type { Scenario } from './types.js';

// Interface B's hot path: the key and its limits come from memory, the purchase, its item and
// their currencies from one prepared statement (perf-notes: judged against one prepared SELECT).
export const validation: Scenario = {
  name: 'validation',
  description: 'POST /api/purchases/validation (JSON body) with the demo read-only key and the demo purchase code',
  requests: (ctx) => [
    { method: 'POST', path: '/api/purchases/validation', json: { api_key: ctx.readOnlyKey, purchase_code: ctx.purchaseCode } },
  ],
  target: { ratio: 0.9, against: 'one-query' },
  setup: async (ctx) => {
    if (!ctx.purchaseCode) throw new Error('validation: the demo seed printed no purchase code');
  },
};
