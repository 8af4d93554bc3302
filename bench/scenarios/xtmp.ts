import type { Scenario } from './types.js';
export const healthz: Scenario = { name: 'healthz', description: 'x', requests: () => [{ method: 'GET', path: '/healthz' }], target: { ratio: 0.9, against: 'bare' } };
export const unauth: Scenario = { name: 'unauth', description: 'x', requests: () => [{ method: 'GET', path: '/api/v1/me' }], expectStatus: 401, target: { ratio: 0.9, against: 'bare' } };
