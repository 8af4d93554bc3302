export type Ability = 'read' | 'plan' | 'manage_content' | 'place_orders' | 'approve_placements' | 'publish' | 'manage_webhooks';

/** What "Can place orders" adds to a workspace key's abilities. */
export const SPENDING_ABILITIES: readonly Ability[] = ['place_orders', 'approve_placements'];

/**
 * What a key may do. `manage_webhooks` (create, delete, rotate, resend) is every key's but one a
 * console `member` made: a member may make read-only keys, and must not gain an owner's power
 * over the webhooks through them.
 */
export function abilitiesFor(key: { publisherId: number | null; canPlaceOrders: boolean; canManageWebhooks: boolean }): Ability[] {
  const webhooks: Ability[] = key.canManageWebhooks ? ['manage_webhooks'] : [];
  if (key.publisherId !== null) return ['publish', ...webhooks];
  const base: Ability[] = ['read', 'plan', 'manage_content'];
  return [...base, ...(key.canPlaceOrders ? SPENDING_ABILITIES : []), ...webhooks];
}
