import type { Ability } from './abilities.js';
import type { KeyLimits } from './budget.js';

/** Who is calling: resolved from an API key, passed to every domain call that needs it. */
export interface Principal {
  keyId: number;
  name: string;
  prefix: string;
  canPlaceOrders: boolean;
  abilities: Ability[];
  workspaceId: number | null;
  publisherId: number | null;
  /**
   * Whether the key's spending waits for a person (docs/approvals.md), as resolved: what /me shows.
   * The placement reads the flag again in its own transaction, so a change applies at once there.
   */
  needsApproval?: boolean;
  /** A spending key's budget and expiry as resolved (docs/budgets.md); absent when it has neither. */
  budget?: { limits: KeyLimits; expiresAt: Date | null } | undefined;
}

export interface WorkspacePrincipal extends Principal {
  workspaceId: number;
}
