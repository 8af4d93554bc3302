import type { Scenario } from './types.js';

export const me: Scenario = {
  name: 'me',
  description: 'GET /api/v1/me with the demo read-only key',
  requests: (ctx) => [{ method: 'GET', path: '/api/v1/me', headers: { authorization: `Bearer ${ctx.readOnlyKey}` } }],
  target: { ratio: 0.9, against: 'one-query' },
};
