import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { forbidden, invalidInput, notFound } from '../../domain/errors.js';
import { MAX_BALANCE_CENTS } from '../../domain/ledger/limits.js';
import { formatCents } from '../../domain/money/format.js';
import { can } from '../../domain/users/permissions.js';
import { getApprovalRules, setApprovalRules } from '../../domain/workspaces/workspace-service.js';
import { type ConsoleDeps, page, targetOf } from '../context.js';
import { type Form, formText } from '../form.js';

// Settings → Approval rules (workspaces only): the maximum order and automatic draft approval,
// changed by the same domain call as the admin CLI's `workspace rules`. Owners change them;
// everyone else sees them.

const text = (form: Form, name: string) => formText(form, name).trim();

/** "250" or "250.50" US dollars (orders are priced in USD cents, like the API's max_order_cents) → cents; empty → no limit. */
function parseMaximum(raw: string): number | null {
  if (raw === '') return null;
  const m = /^(\d{1,13})(?:\.(\d{1,2}))?$/.exec(raw.replaceAll(',', ''));
  const cents = m ? Number(m[1]) * 100 + Number((m[2] ?? '').padEnd(2, '0')) : NaN;
  if (!Number.isSafeInteger(cents) || cents > MAX_BALANCE_CENTS) {
    throw invalidInput({ max_order: ['must be an amount such as 250 or 250.50, or empty for no limit'] });
  }
  return cents;
}

const asDecimal = (cents: number | null) => (cents === null ? '' : (cents / 100).toFixed(2));

export async function approvalRulePages(app: FastifyInstance, { deps }: { deps: ConsoleDeps }) {
  const rulesPage = async (request: FastifyRequest, reply: FastifyReply, data: Record<string, unknown> = {}) => {
    const target = targetOf(request);
    if (target.kind !== 'workspace') throw notFound('Page');
    const rules = await getApprovalRules(deps.db, target.id);
    return page(request, reply, 'approval-rules', {
      title: 'Approval rules',
      section: 'approval-rules',
      action: `${target.href}/settings/approval-rules`,
      manage: can(target.role, 'manage_rules'),
      currency: rules.currency,
      current: {
        max: rules.max_order_cents === null ? 'No limit' : formatCents(rules.max_order_cents, 'USD', 1),
        auto: rules.auto_approve_drafts ? 'On' : 'Off',
      },
      form: { max_order: asDecimal(rules.max_order_cents), auto_approve_drafts: rules.auto_approve_drafts },
      ...data,
    });
  };

  app.get('/settings/approval-rules', async (request, reply) => rulesPage(request, reply));

  app.post('/settings/approval-rules', async (request, reply) => {
    const target = targetOf(request);
    if (target.kind !== 'workspace') throw notFound('Page');
    if (!can(target.role, 'manage_rules')) throw forbidden('Only an owner can change the approval rules.');
    const form = (request.body ?? {}) as Form;
    let maxOrderCents: number | null;
    try {
      maxOrderCents = parseMaximum(text(form, 'max_order'));
    } catch (err) {
      reply.code(422);
      const errors = (err as { details: { errors: Record<string, string[]> } }).details.errors;
      return rulesPage(request, reply, { errors, problem: 'The rules were not changed: check the fields below.', form: { max_order: text(form, 'max_order'), auto_approve_drafts: Boolean(form.auto_approve_drafts) } });
    }
    await setApprovalRules(deps.db, target.id, { maxOrderCents, autoApproveDrafts: text(form, 'auto_approve_drafts') !== '' });
    return rulesPage(request, reply, { notice: 'Approval rules saved. Keys see them within 5 seconds.' });
  });
}
