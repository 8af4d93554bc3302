import { withTransaction, type Db } from '../../db/handle.js';
import { recordEvents } from '../events/record.js';
import { creditTopUp } from '../ledger/ledger-service.js';
import { formatCents } from '../money/format.js';

/** The `workspace.topped_up` event's data: the money added and the available balance after it. */
export interface TopUpView {
  workspace_id: number;
  amount: number;
  amount_formatted: string;
  balance: number;
  balance_formatted: string;
}

/** Money entering a workspace (the admin's top-up), with its `workspace.topped_up` event in the same transaction. */
export function topUpWorkspace(pool: Db, workspaceId: number, cents: number, now: number): Promise<TopUpView> {
  return withTransaction(pool, async (tx) => {
    const { balanceCents } = await creditTopUp(tx, workspaceId, cents);
    const { rows } = await tx.query<{ currency: string; per_usd: number }>({
      name: 'workspace_currency',
      text: 'SELECT w.currency, fx.per_usd::float8 AS per_usd FROM workspaces w JOIN fx_rates fx ON fx.currency = w.currency WHERE w.id = $1',
      values: [workspaceId],
    });
    const { currency, per_usd } = rows[0]!;
    const data: TopUpView = {
      workspace_id: workspaceId,
      amount: cents,
      amount_formatted: formatCents(cents, currency, per_usd),
      balance: balanceCents,
      balance_formatted: formatCents(balanceCents, currency, per_usd),
    };
    await recordEvents(tx, [{ type: 'workspace.topped_up', owner: { party: 'buyer', workspaceId }, actor: 'system', data }], now);
    return data;
  });
}
