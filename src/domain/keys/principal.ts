import type { Ability } from './abilities.js';

/** Who is calling: resolved from an API key, passed to every domain call that needs it. */
export interface Principal {
  keyId: number;
  name: string;
  prefix: string;
  canPlaceOrders: boolean;
  abilities: Ability[];
  workspaceId: number | null;
  publisherId: number | null;
}

export interface WorkspacePrincipal extends Principal {
  workspaceId: number;
}
