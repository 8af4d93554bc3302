import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DomainError, type FieldErrors, forbidden, notFound } from '../../domain/errors.js';
import { MAX_BALANCE_CENTS } from '../../domain/ledger/limits.js';
import { formatCents } from '../../domain/money/format.js';
import { can } from '../../domain/users/permissions.js';
import { typedUsdCents } from '../../schemas/usd.js';
import { getApprovalRules, setApprovalRules } from '../../domain/workspaces/workspace-service.js';
import { type ConsoleDeps, page, targetOf } from '../context.js';
import type { Views } from '../view-models.js';
import { type Form, formText } from '../form.js';

// Settings → Approval rules (workspaces only): the maximum order, the amount above which a key's
// order waits for a person, and automatic draft approval, changed by the same domain call as the
// admin CLI's `workspace rules`. Owners change them; everyone else sees them.

const text = (form: Form, name: string) => formText(form, name).trim();

/** The form's two amounts, in US dollars (orders are priced in USD cents, like the API's *_cents rules), and what a bad one is told. */
const AMOUNTS = {
  max_order: 'must be an amount such as 250 or 250.50, or empty for no limit',
  approval_above: 'must be an amount such as 100 or 100.50, or empty for never',
} as const;
type AmountField = keyof typeof AMOUNTS;

/** US dollars as every form reads them → cents; empty → null (no limit, or never); undefined when it is neither. */
function dollarsToCents(raw: string, field: AmountField): number | null | undefined {
  if (raw === '') return null;
  const cents = typedUsdCents(AMOUNTS[field]).safeParse(raw);
  return cents.success && cents.data <= MAX_BALANCE_CENTS ? cents.data : undefined;
}

const asDecimal = (cents: number | null) => (cents === null ? '' : (cents / 100).toFixed(2));

export async function approvalRulePages(app: FastifyInstance, { deps }: { deps: ConsoleDeps }) {
  const rulesPage = async (request: FastifyRequest, reply: FastifyReply, data: Partial<Views['approval-rules']> = {}) => {
    const target = targetOf(request);
    if (target.kind !== 'workspace') throw notFound('Page');
    const rules = await getApprovalRules(deps.pool, target.id);
    const usd = (cents: number | null, none: string) => (cents === null ? none : formatCents(cents, 'USD', 1));
    return page(request, reply, 'approval-rules', {
      title: 'Approval rules',
      section: 'approval-rules',
      action: `${target.href}/settings/approval-rules`,
      manage: can(target.role, 'manage_rules'),
      current: {
        max: usd(rules.max_order_cents, 'No limit'),
        above: usd(rules.approval_above_cents, 'Never'),
        auto: rules.auto_approve_drafts ? 'On' : 'Off',
      },
      form: {
        max_order: asDecimal(rules.max_order_cents),
        approval_above: asDecimal(rules.approval_above_cents),
        auto_approve_drafts: rules.auto_approve_drafts,
      },
      ...data,
    });
  };

  app.get('/settings/approval-rules', async (request, reply) => rulesPage(request, reply));

  app.post('/settings/approval-rules', async (request, reply) => {
    const target = targetOf(request);
    if (target.kind !== 'workspace') throw notFound('Page');
    if (!can(target.role, 'manage_rules')) throw forbidden('Only an owner can change the approval rules.');
    const form = (request.body ?? {}) as Form;
    // Every amount is read before any is refused, so the page names each bad field at once.
    const errors: FieldErrors = {};
    const typed: Record<AmountField, string> = { max_order: '', approval_above: '' };
    const cents: Record<AmountField, number | null> = { max_order: null, approval_above: null };
    for (const field of Object.keys(AMOUNTS) as AmountField[]) {
      try {
        typed[field] = text(form, field);
      } catch (err) {
        if (!(err instanceof DomainError)) throw err;
        Object.assign(errors, err.details.errors);
        continue;
      }
      const value = dollarsToCents(typed[field], field);
      if (value === undefined) errors[field] = [AMOUNTS[field]];
      else cents[field] = value;
    }
    const autoApproveDrafts = text(form, 'auto_approve_drafts') !== '';
    if (Object.keys(errors).length) {
      reply.code(422);
      return rulesPage(request, reply, { errors, problem: 'The rules were not changed: check the fields below.', form: { ...typed, auto_approve_drafts: autoApproveDrafts } });
    }
    await setApprovalRules(deps.pool, target.id, { maxOrderCents: cents.max_order, approvalAboveCents: cents.approval_above, autoApproveDrafts });
    return rulesPage(request, reply, { notice: 'Approval rules saved. Keys see them within 5 seconds.' });
  });
}
