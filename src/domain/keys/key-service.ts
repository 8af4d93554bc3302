import { and, eq, isNull } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { apiKeys, publishers } from '../../db/schema/index.js';
import { notFound } from '../errors.js';
import { requireWorkspace } from '../workspaces/workspace-service.js';
import { generateRawKey, hashKey, visiblePrefix } from './key-format.js';

export type KeyOwner = { workspaceId: number; canPlaceOrders?: boolean } | { publisherId: number };

/** Creates a key; the raw key is returned here and never again (only its hash is stored). */
export async function createKey(db: Db, owner: KeyOwner & { name?: string }) {
  if ('workspaceId' in owner) {
    await requireWorkspace(db, owner.workspaceId);
  } else {
    const [p] = await db.select({ id: publishers.id }).from(publishers).where(eq(publishers.id, owner.publisherId));
    if (!p) throw notFound('Publisher');
  }
  const raw = generateRawKey();
  const canPlaceOrders = 'workspaceId' in owner ? Boolean(owner.canPlaceOrders) : false;
  const [row] = await db
    .insert(apiKeys)
    .values({
      workspaceId: 'workspaceId' in owner ? owner.workspaceId : null,
      publisherId: 'publisherId' in owner ? owner.publisherId : null,
      name: owner.name ?? (canPlaceOrders ? 'Spending key' : 'Read-only key'),
      prefix: visiblePrefix(raw),
      keyHash: hashKey(raw),
      canPlaceOrders,
    })
    .returning();
  return { id: row!.id, key: raw, prefix: row!.prefix, can_place_orders: row!.canPlaceOrders };
}

export async function revokeKey(db: Db, id: number) {
  const [row] = await db
    .update(apiKeys)
    .set({ revokedAt: new Date() })
    .where(and(eq(apiKeys.id, id), isNull(apiKeys.revokedAt)))
    .returning({ id: apiKeys.id });
  if (!row) {
    const [exists] = await db.select({ id: apiKeys.id }).from(apiKeys).where(eq(apiKeys.id, id));
    if (!exists) throw notFound('Key');
  }
  return { id, revoked: true as const };
}
