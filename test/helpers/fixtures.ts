import type { Db } from '../../src/db/handle.js';
import { createKey } from '../../src/domain/keys/key-service.js';
import { createWorkspace } from '../../src/domain/workspaces/workspace-service.js';

export interface WorkspaceFixture {
  workspaceId: number;
  readKey: string;
  readKeyId: number;
  spendKey: string;
  spendKeyId: number;
}

let counter = 0;

/** A workspace with a balance, a read-only key and a spending key. */
export async function workspaceWithKeys(
  db: Db,
  opts: { currency?: string; balanceCents?: number; name?: string } = {},
): Promise<WorkspaceFixture> {
  const ws = await createWorkspace(db, {
    name: opts.name ?? `Test workspace ${++counter}`,
    currency: opts.currency ?? 'USD',
    balanceCents: opts.balanceCents ?? 100_000,
  });
  const read = await createKey(db, { workspaceId: ws.id });
  const spend = await createKey(db, { workspaceId: ws.id, canPlaceOrders: true });
  return { workspaceId: ws.id, readKey: read.key, readKeyId: read.id, spendKey: spend.key, spendKeyId: spend.id };
}

export const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
