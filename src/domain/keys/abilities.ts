export type Ability = 'read' | 'plan' | 'manage_content' | 'place_orders' | 'approve_placements' | 'publish';

export function abilitiesFor(key: { publisherId: number | null; canPlaceOrders: boolean }): Ability[] {
  if (key.publisherId !== null) return ['publish'];
  const base: Ability[] = ['read', 'plan', 'manage_content'];
  return key.canPlaceOrders ? [...base, 'place_orders', 'approve_placements'] : base;
}
