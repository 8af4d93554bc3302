import type { WorkspacePrincipal } from '../keys/principal.js';

/** A person signed in to the console, acting for a workspace they belong to (no API key involved). */
export interface WorkspaceMember {
  workspaceId: number;
  userId: number;
}

/** Who acts for the buyer: an API key (REST, MCP) or a member in the console. */
export type BuyerActor = WorkspacePrincipal | WorkspaceMember;

export const isMember = (p: BuyerActor): p is WorkspaceMember => 'userId' in p;
