import { createHash } from 'node:crypto';
import { asc, eq } from 'drizzle-orm';
import { fxRates, workspaces } from '../../db/schema/index.js';
import { DomainError, invalidInput, notFound } from '../errors.js';
import { type Db, orm, withTransaction } from '../../db/handle.js';
import { createWorkspaceAccounts, creditTopUp } from '../ledger/ledger-service.js';

export interface NewWorkspace {
  name: string;
  currency?: string;
  balanceCents?: number;
  ownerFirstName?: string;
  ownerLastName?: string;
  ownerEmail?: string;
  username?: string;
  avatarUrl?: string;
  coverUrl?: string;
}

export interface ApprovalRules {
  max_order_cents: number | null;
  /** A key's order above this total waits for a person's approval (docs/approvals.md); null = never. */
  approval_above_cents: number | null;
  auto_approve_drafts: boolean;
}

function slug(name: string): string {
  return name.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '') || 'workspace';
}

/**
 * The profile pictures the seller API's account details show (URLs, per the seed), when none are
 * given: the owner's Gravatar, which answers for any address (an identicon when it has none).
 */
export function gravatarUrl(email: string, size: number): string {
  const hash = createHash('sha256').update(email.trim().toLowerCase()).digest('hex');
  return `https://www.gravatar.com/avatar/${hash}?d=identicon&s=${size}`;
}

/** Owner fields default to values derived from the workspace name (docs/cli.md). */
function ownerDefaults(input: NewWorkspace) {
  const s = slug(input.name);
  const email = input.ownerEmail ?? `owner@${s}.example`;
  return {
    avatarUrl: input.avatarUrl ?? gravatarUrl(email, 200),
    coverUrl: input.coverUrl ?? gravatarUrl(email, 1200),
    ownerFirstName: input.ownerFirstName ?? input.name.split(/\s+/)[0] ?? input.name,
    ownerLastName: input.ownerLastName ?? 'Owner',
    username: input.username ?? s.replace(/-/g, '_'),
    email,
    contactEmail: email,
    profileHeading: input.name,
    profileDescription: `${input.name} sells digital goods.`,
  };
}

export async function assertCurrency(db: Db, currency: string): Promise<void> {
  const [row] = await orm(db).select({ c: fxRates.currency }).from(fxRates).where(eq(fxRates.currency, currency));
  if (!row) throw invalidInput({ currency: [`unknown currency ${currency}; \`fx list\` shows the FX table, \`fx set\` adds to it`] });
}

/** The workspace, its two accounts and its opening balance: all of them or, when one fails, none. */
export async function createWorkspace(db: Db, input: NewWorkspace) {
  await assertCurrency(db, (input.currency ?? 'USD').toUpperCase());
  return withTransaction(db, (tx) => insertWorkspace(db, tx, input));
}

/** createWorkspace's writes, in the caller's transaction (sign-up makes the user and the workspace together). */
export async function insertWorkspace(db: Db, tx: Db, input: NewWorkspace) {
  const currency = (input.currency ?? 'USD').toUpperCase();
  const insert = orm(db).insert(workspaces).values({ name: input.name, currency, ...ownerDefaults(input) }).returning({ id: workspaces.id }).toSQL();
  const { rows } = await tx.query<{ id: number }>(insert.sql, insert.params);
  const id = rows[0]!.id;
  await createWorkspaceAccounts(tx, id);
  const balanceCents = input.balanceCents && input.balanceCents > 0 ? (await creditTopUp(tx, id, input.balanceCents, 'balance_cents')).balanceCents : 0;
  return { id, name: input.name, currency, balance_cents: balanceCents };
}

export async function setApprovalRules(
  db: Db,
  workspaceId: number,
  rules: { maxOrderCents?: number | null; approvalAboveCents?: number | null; autoApproveDrafts?: boolean },
): Promise<{ approval_rules: ApprovalRules }> {
  const patch: Partial<typeof workspaces.$inferInsert> = {};
  if (rules.maxOrderCents !== undefined) patch.maxOrderCents = rules.maxOrderCents;
  if (rules.approvalAboveCents !== undefined) patch.approvalAboveCents = rules.approvalAboveCents;
  if (rules.autoApproveDrafts !== undefined) patch.autoApproveDrafts = rules.autoApproveDrafts;
  if (Object.keys(patch).length === 0) {
    throw new DomainError('invalid_input', 'Nothing to change.', {
      errors: { rules: ['give --max-order-cents, --approval-above-cents or --auto-approve-drafts'] },
    });
  }
  const [row] = await orm(db).update(workspaces).set(patch).where(eq(workspaces.id, workspaceId)).returning();
  if (!row) throw notFound('Workspace');
  return { approval_rules: rulesOf(row) };
}

const rulesOf = (row: { maxOrderCents: number | null; approvalAboveCents: number | null; autoApproveDrafts: boolean }): ApprovalRules => ({
  max_order_cents: row.maxOrderCents,
  approval_above_cents: row.approvalAboveCents,
  auto_approve_drafts: row.autoApproveDrafts,
});

/** The approval rules and the currency they are written in (the console's Approval rules page). */
export async function getApprovalRules(db: Db, workspaceId: number): Promise<ApprovalRules & { currency: string }> {
  const [row] = await orm(db)
    .select({
      maxOrderCents: workspaces.maxOrderCents,
      approvalAboveCents: workspaces.approvalAboveCents,
      autoApproveDrafts: workspaces.autoApproveDrafts,
      currency: workspaces.currency,
    })
    .from(workspaces)
    .where(eq(workspaces.id, workspaceId));
  if (!row) throw notFound('Workspace');
  return { ...rulesOf(row), currency: row.currency };
}

export async function requireWorkspace(db: Db, workspaceId: number): Promise<void> {
  const [row] = await orm(db).select({ id: workspaces.id }).from(workspaces).where(eq(workspaces.id, workspaceId));
  if (!row) throw notFound('Workspace');
}

/** The first workspace made (undefined: none yet): the search route's warm-up searches as it (http/search-route-warm-up.ts). */
export async function oldestWorkspaceId(db: Db): Promise<number | undefined> {
  const [row] = await orm(db).select({ id: workspaces.id }).from(workspaces).orderBy(asc(workspaces.id)).limit(1);
  return row?.id;
}
