import type { MemberRole } from '../../common/enums.js';
import { forbidden } from '../errors.js';

/**
 * What each role may do in a workspace or publisher account: the one table the console asks
 * before every page and action (docs/people.md). Reads cover every page of the target, keys
 * listed by prefix included.
 */
export type Permission =
  | 'read'
  | 'manage_orders' // submit content, approve drafts, cancel, message (a publisher's: accept, draft, publish…)
  | 'spend' // pay with the workspace's money: place an order, approve a placement (as a spending key does)
  | 'manage_read_only_keys' // create, revoke, roll keys that cannot spend (publisher keys too)
  | 'manage_spending_keys' // create, revoke, roll keys with "Can place orders"
  | 'manage_rules' // approval rules
  | 'manage_webhooks'
  | 'manage_members' // invite, change roles, remove
  | 'manage_billing'; // add funds: top-up requests and their cancelling (docs/billing.md)

export const rolePermissions: Readonly<Record<MemberRole, readonly Permission[]>> = {
  owner: ['read', 'manage_orders', 'spend', 'manage_read_only_keys', 'manage_spending_keys', 'manage_rules', 'manage_webhooks', 'manage_members', 'manage_billing'],
  member: ['read', 'manage_orders', 'manage_read_only_keys'],
  viewer: ['read'],
};

export function can(role: MemberRole | null | undefined, permission: Permission): boolean {
  return role ? rolePermissions[role].includes(permission) : false;
}

/**
 * Why a role that may not `spend` is refused each spending action, said once: the console asks
 * before it shows a form, and the domain asks again inside the paying transaction.
 */
const spendRefusals = {
  place: "Only the workspace's owners can place orders: placing spends the workspace's balance.",
  approvePlacement: "Only the workspace's owners can approve a placement: approving pays the publisher.",
  decide: "Only the workspace's owners can approve or decline a request: approving spends the workspace's balance.",
} as const;

/** 403 with the action's reason unless `role` may spend the workspace's money. */
export function requireSpend(role: MemberRole | null | undefined, doing: keyof typeof spendRefusals): void {
  if (!can(role, 'spend')) throw forbidden(spendRefusals[doing]);
}
