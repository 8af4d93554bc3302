import { afterEach, describe, expect, it, vi } from 'vitest';
import { topUp } from '../../src/domain/ledger/ledger-service.js';
import { setupApp } from '../helpers/app.js';
import { bearer, workspaceWithKeys } from '../helpers/fixtures.js';

// Balance reads of concurrent requests share queries: each answer must still be its own
// workspace's balances, and a change committed before a request must show in its answer.
const h = await setupApp({ RATE_LIMIT_PER_MINUTE: 100_000 });
const me = (key: string) => h.app.inject({ method: 'GET', url: '/api/v1/me', headers: bearer(key) });

afterEach(() => vi.restoreAllMocks());

describe('GET /api/v1/me under concurrency — happy', () => {
  it("answers each workspace's own balances when many reads share queries, and sees a top-up made just before", async () => {
    const wss = await Promise.all(Array.from({ length: 8 }, (_, i) => workspaceWithKeys(h.database.pool, { balanceCents: 1_000 * (i + 1) })));
    const query = vi.spyOn(h.database.pool, 'query');
    const many = Array.from({ length: 10 }, () => wss).flat();
    const answers = await Promise.all(many.map((ws) => me(ws.readKey)));
    answers.forEach((res, i) => {
      expect(res.statusCode).toBe(200);
      expect(res.json().data).toMatchObject({ workspace: { id: many[i]!.workspaceId }, balance: 1_000 * ((i % 8) + 1), held: 0 });
    });
    const named = (name: string) => query.mock.calls.filter(([config]) => (config as { name?: string }).name === name).length;
    expect(named('workspaces_balances')).toBeGreaterThan(0);

    await topUp(h.database.pool, wss[0]!.workspaceId, 5);
    const after = await Promise.all([me(wss[0]!.readKey), me(wss[1]!.readKey), me(wss[0]!.spendKey)]);
    expect(after.map((r) => r.json().data.balance)).toEqual([1_005, 2_000, 1_005]);
  });
});
