import type { Harness } from './app.js';
import { publisherWithOutlet } from './catalog.js';
import { bearer, workspaceWithKeys } from './fixtures.js';
import { sweepDeadlines } from '../../src/domain/orders/sweep.js';
import { durationsFrom } from '../../src/domain/orders/states.js';

export const DAY = 86_400_000;
/** A timestamp as the API writes it: ISO 8601 UTC to the second. */
export const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
export const articleFor = (url: string, anchor = 'our product') =>
  `# A useful article\n\n${'Plenty of words here to satisfy the count. '.repeat(10)}\n\nRead about [${anchor}](${url}).`;

/** Order helpers over one app harness: requests as buyer and publisher, balances, the sweep. */
export function orderKit(h: Harness) {
  let seq = 0;
  const pool = h.database.pool;
  return {
    place: (key: string, body: Record<string, unknown>, idem = `k-${++seq}`) =>
      h.app.inject({ method: 'POST', url: '/api/v1/orders', headers: { ...bearer(key), 'idempotency-key': idem }, payload: body }),
    buyer: (key: string, path: string, payload?: unknown) =>
      h.app.inject({ method: 'POST', url: `/api/v1/orders/${path}`, headers: bearer(key), ...(payload ? { payload: payload as object } : {}) }),
    pub: (key: string, path: string, payload?: unknown) =>
      h.app.inject({ method: 'POST', url: `/api/v1/publisher/orders/${path}`, headers: bearer(key), ...(payload ? { payload: payload as object } : {}) }),
    sweep: () => sweepDeadlines(pool, h.clock.now(), durationsFrom(h.config)),
    async balances(workspaceId: number) {
      const { rows } = await pool.query(`SELECT kind, balance FROM ledger_accounts WHERE workspace_id = $1`, [workspaceId]);
      return Object.fromEntries(rows.map((r) => [r.kind, r.balance])) as { available: number; held: number };
    },
    async payable(publisherId: number) {
      const { rows } = await pool.query(`SELECT balance FROM ledger_accounts WHERE publisher_id = $1`, [publisherId]);
      return rows[0].balance as number;
    },
    async fees() {
      const { rows } = await pool.query(`SELECT balance FROM ledger_accounts WHERE kind = 'fees'`);
      return rows[0].balance as number;
    },
    /** A workspace with a balance and a publisher whose one outlet carries these offers. */
    async setup(offers: Parameters<typeof publisherWithOutlet>[1] = [{}], balance = 1_000_000, domain?: string) {
      const ws = await workspaceWithKeys(h.database.db, { balanceCents: balance });
      const p = await publisherWithOutlet(h.database, offers, domain);
      return { ws, p };
    },
  };
}
