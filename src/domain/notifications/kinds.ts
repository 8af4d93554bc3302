import { type MemberRole, memberRoles } from '../../common/enums.js';
import { notificationMailKinds } from '../mail/outbox.js';
import { can, type Permission } from '../users/permissions.js';

// What a person can be told (docs/mail.md, "Notifications"): each kind is a mail kind of the
// outbox, belongs to one side (a workspace's people, a publisher's) or both, and goes only to the
// roles that can act on it (the role table's permission). How each person takes it is their
// setting, per membership: right away, in the daily digest, or not at all.

export const notificationKinds = notificationMailKinds;
export type NotificationKind = (typeof notificationKinds)[number];

/** A membership's side: a workspace's (buyers) or a publisher account's. */
export type TargetKind = 'workspace' | 'publisher';

export interface KindInfo {
  /** The sides whose people it goes to. */
  sides: readonly TargetKind[];
  /** Who may receive it at all: the roles the role table gives this permission (approving spends: owners). */
  permission: Permission;
  /** Its name on the Notifications page and in the mails' small print. */
  label: string;
  /** What it is, on the page. */
  help: string;
}

export const kindInfo: Record<NotificationKind, KindInfo> = {
  order_to_accept: { sides: ['publisher'], permission: 'read', label: 'A new order to accept', help: 'An order was placed on one of your outlets with everything needed: accept or decline it.' },
  content_in: { sides: ['publisher'], permission: 'read', label: 'Content in', help: "The buyer sent the article an order was waiting for: accept or decline it." },
  draft_ready: { sides: ['workspace'], permission: 'read', label: 'A draft to review', help: 'A publisher submitted a draft: approve it or ask for changes.' },
  placement_live: { sides: ['workspace'], permission: 'read', label: 'A placement live to review', help: 'A publisher published your placement: review and approve it.' },
  link_lost: { sides: ['publisher'], permission: 'read', label: 'A link lost', help: 'A check of a placement you published no longer finds its link: put it back before the buyer is refunded.' },
  approval_request: { sides: ['workspace'], permission: 'spend', label: 'An approval request waiting', help: "An agent's order waits for a person who may spend to approve or decline it." },
  deadline_reminder: { sides: ['workspace', 'publisher'], permission: 'read', label: 'A deadline in 24 hours', help: 'An order waiting for your side reaches its deadline within a day.' },
  budget_exhausted: { sides: ['workspace'], permission: 'manage_spending_keys', label: "A key's budget used up", help: 'A spending key used its daily or monthly budget: it places no more orders until the budget resets.' },
  webhook_disabled: { sides: ['workspace', 'publisher'], permission: 'manage_webhooks', label: 'A webhook endpoint disabled', help: 'Deliveries to an endpoint kept failing and it was disabled: it gets no more events.' },
  key_expiring: { sides: ['workspace', 'publisher'], permission: 'manage_read_only_keys', label: 'A key expiring within 7 days', help: 'A key stops working within a week: roll it or make a new one.' },
  funds_added: { sides: ['workspace'], permission: 'manage_billing', label: 'Funds added', help: 'The payment for a top-up arrived and is in the available balance.' },
  payout_requested: { sides: ['publisher'], permission: 'manage_billing', label: 'Payout requested', help: 'A payout of the payable balance was asked for: the operator sends it.' },
  payout_sent: { sides: ['publisher'], permission: 'manage_billing', label: 'Payout sent', help: 'The operator sent a payout, with the bank’s reference.' },
  payout_failed: { sides: ['publisher'], permission: 'manage_billing', label: 'Payout failed', help: 'A payout could not be sent: its money is back in the payable balance.' },
};

/** How a person takes a kind of notification. */
export const notificationModes = ['now', 'digest', 'off'] as const;
export type NotificationMode = (typeof notificationModes)[number];
export const modeLabels: Record<NotificationMode, string> = { now: 'Right away', digest: 'Daily digest', off: 'Off' };

/** Owners and members hear right away of what needs them; viewers, who act on nothing, hear nothing unless they ask. */
export const defaultMode = (role: MemberRole): NotificationMode => (role === 'viewer' ? 'off' : 'now');

/** The roles that may receive `kind` (for `permission`, when a notification narrows it: a spending key's expiry is an owner's). */
export const rolesFor = (permission: Permission): MemberRole[] => memberRoles.filter((r) => can(r, permission));

/** The kinds a person with `role` in a `side` can receive: the rows of their Notifications page. */
export const kindsFor = (side: TargetKind, role: MemberRole): NotificationKind[] =>
  notificationKinds.filter((k) => kindInfo[k].sides.includes(side) && can(role, kindInfo[k].permission));

const isMode = (v: unknown): v is NotificationMode => typeof v === 'string' && (notificationModes as readonly string[]).includes(v);

/** A person's mode for `kind` in one membership: their setting, else the role's default. */
export function modeOf(settings: Record<string, unknown> | null | undefined, kind: NotificationKind, role: MemberRole): NotificationMode {
  const set = settings?.[kind];
  return isMode(set) ? set : defaultMode(role);
}

export const isNotificationKind = (v: string): v is NotificationKind => (notificationKinds as readonly string[]).includes(v);
