// The values of the database's enum types, read by both the table definitions (src/db/schema) and
// the domain, which builds its validation and vocabulary on them. Kept here so the database layer
// never imports the domain.

export const outletTypes = ['blog', 'news', 'magazine', 'niche_site', 'press'] as const;
export const offerFormats = ['guest_post', 'sponsored_article', 'link_insertion', 'press_release'] as const;
export const contentByValues = ['buyer', 'publisher'] as const;
export const linkTypes = ['dofollow', 'nofollow'] as const;

export const orderStatuses = [
  'awaiting_content',
  'awaiting_acceptance',
  'writing',
  'draft_review',
  'publishing',
  'live_review',
  'completed',
  'link_lost',
  'declined',
  'expired',
  'cancelled',
  'link_refunded',
] as const;

export type OutletType = (typeof outletTypes)[number];
export type OfferFormat = (typeof offerFormats)[number];
export type OrderStatus = (typeof orderStatuses)[number];

/** A person's role in a workspace or publisher account (docs/people.md). */
export const memberRoles = ['owner', 'member', 'viewer'] as const;
export type MemberRole = (typeof memberRoles)[number];

/** What an approval request asks a person to let a key do (docs/approvals.md). */
export const approvalActions = ['place_orders', 'approve_placement'] as const;
export const approvalStatuses = ['pending', 'approved', 'declined', 'expired', 'cancelled', 'failed'] as const;
/** Why a key's spending action waits for a person: the key's own flag, or the workspace's threshold. */
export const approvalReasons = ['key_needs_approval', 'above_approval_limit'] as const;
export type ApprovalAction = (typeof approvalActions)[number];
export type ApprovalStatus = (typeof approvalStatuses)[number];
export type ApprovalReason = (typeof approvalReasons)[number];

/** What a link mailed to a person's address is for (docs/mail.md): confirming it, or a new password. */
export const userTokenPurposes = ['verify_email', 'reset_password'] as const;
export type UserTokenPurpose = (typeof userTokenPurposes)[number];

/** A mail in the outbox: waiting, sent, written to the log (no SMTP_URL), or given up. */
export const mailStatuses = ['pending', 'sent', 'logged', 'failed'] as const;
export type MailStatus = (typeof mailStatuses)[number];

/** A request to add funds (docs/billing.md): waiting for the money, credited, withdrawn by the workspace, or refused by staff. */
export const topUpStatuses = ['pending', 'confirmed', 'cancelled', 'rejected'] as const;
export type TopUpStatus = (typeof topUpStatuses)[number];

/** A publisher's payout (docs/billing.md): asked and waiting to be sent, sent by staff, or failed (the money back in payable). */
export const payoutStatuses = ['pending', 'sent', 'failed'] as const;
export type PayoutStatus = (typeof payoutStatuses)[number];

/** Where a publisher is paid: a bank account (IBAN, or account and routing numbers) or a PayPal address. */
export const payoutMethods = ['bank', 'paypal'] as const;
export type PayoutMethod = (typeof payoutMethods)[number];
