import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { oauthBase } from '../../config.js';
import { DomainError, type FieldErrors, forbidden, invalidInput, notFound } from '../../domain/errors.js';
import { keyDetail } from '../../domain/keys/key-detail.js';
import { createKey, type KeyListing, listKeys, MAX_ROLL_GRACE_HOURS, revokeKey, rollKey, updateKey } from '../../domain/keys/key-service.js';
import { spendingPerDay } from '../../domain/orders/spending.js';
import { can } from '../../domain/users/permissions.js';
import { nameField } from '../../domain/users/user-input.js';
import { type ConsoleDeps, type ConsoleTarget, page, pathId, targetOf } from '../context.js';
import type { Views } from '../view-models.js';
import { asDate, asDollars, budgetFormValues, type BudgetFormValues, budgetRows, budgetSummary, formErrors, hasBudgetErrors, readBudgetForm } from './key-budget-form.js';
import { type Form, formText } from '../form.js';
import { spendingChart } from '../chart-specs.js';
import { exactTime, moment } from '../format.js';

/** The two key pages: API keys (every key of the target) and API access (a workspace's read-only keys, for the seller API). */
type Section = 'api-keys' | 'api-access';

const ownerOf = (t: ConsoleTarget) => (t.kind === 'workspace' ? { workspaceId: t.id } : { publisherId: t.id });

const STATES: Record<KeyListing['state'], string> = { active: 'Active', expiring: 'Expiring soon', expired: 'Expired', revoked: 'Revoked' };
const live = (k: KeyListing) => k.state === 'active' || k.state === 'expiring';

function baseUrl(deps: ConsoleDeps, request: FastifyRequest) {
  return (deps.config.PUBLIC_BASE_URL ?? `${request.protocol}://${request.host}`).replace(/\/$/, '');
}

function curlFor(section: Section, target: ConsoleTarget, base: string, key: string) {
  if (section === 'api-access') return `curl -s "${base}/api/account/details?api_key=${key}"`;
  const path = target.kind === 'workspace' ? '/api/v1/me' : '/api/v1/publisher/me';
  return `curl -s ${base}${path} -H "Authorization: Bearer ${key}"`;
}

/**
 * What an MCP client needs to use a new workspace key (docs/mcp.md): the header form, a
 * `mcpServers` entry for `/mcp` to paste, and for clients that sign in instead, the `/mcp/oauth`
 * URL, which is OAuth's own base (never the request's host: its resource must match exactly), or
 * why there is none.
 */
function agentSetup(deps: ConsoleDeps, base: string, key: string) {
  const config = { mcpServers: { marketplace: { type: 'http', url: `${base}/mcp`, headers: { Authorization: `Bearer ${key}` } } } };
  const oauth = oauthBase(deps.config);
  const text = JSON.stringify(config, null, 2);
  return {
    config: text,
    // A line more than the text: the key wraps in a narrow field.
    lines: text.split('\n').length + 1,
    ...(deps.oauth && 'url' in oauth
      ? // Without PUBLIC_BASE_URL the address is loopback: clients on this machine only.
        { oauthUrl: `${oauth.url}/mcp/oauth`, oauthLocal: !deps.config.PUBLIC_BASE_URL }
      : { oauthOff: 'off' in oauth ? oauth.off : 'OAuth is not configured' }),
  };
}

/** Whether the person may manage a key with (or without) "Can place orders" here: the domain's table of roles. */
function mayManage(target: ConsoleTarget, spending: boolean) {
  return can(target.role, spending ? 'manage_spending_keys' : 'manage_read_only_keys');
}

/**
 * Whether the person may revoke or roll this key: a key with more power than their role gives
 * (spending, or able to change webhooks) is an owner's to manage; a roll would hand its power on.
 */
function mayChange(target: ConsoleTarget, key: { can_place_orders: boolean; can_manage_webhooks: boolean }) {
  return mayManage(target, key.can_place_orders) && (!key.can_manage_webhooks || can(target.role, 'manage_webhooks'));
}

/**
 * A key that can place orders spends the workspace's money: its maker's address must be confirmed
 * (EMAIL_VERIFICATION=optional lets an unconfirmed person in, not this far; docs/mail.md).
 */
function refuseUnconfirmedSpender(request: FastifyRequest) {
  if (!request.consoleUser!.emailVerified) throw forbidden('Confirm your email address first: a key that can place orders needs a confirmed address. The link was mailed to you; "Send again" is on the Check your email page (/app/check-email).');
}

/** The "Orders need a person's approval" box: ticked or not; sent twice is refused, not read as either. */
const readNeedsApproval = (form: Form) => formText(form, 'needs_approval') !== '';

function parseGrace(raw: string): number {
  const hours = Number(raw.trim() === '' ? NaN : raw);
  if (!Number.isInteger(hours) || hours < 0 || hours > MAX_ROLL_GRACE_HOURS) throw invalidInput({ grace_hours: [`must be a whole number of hours from 0 to ${MAX_ROLL_GRACE_HOURS}`] });
  return hours;
}

export async function keyPages(app: FastifyInstance, { deps }: { deps: ConsoleDeps }) {
  const sections: Section[] = ['api-keys', 'api-access'];
  for (const section of sections) {
    const apiAccess = section === 'api-access';
    const texts = apiAccess
      ? {
          heading: 'API access',
          intro:
            'Read-only keys for the seller API (/api/account, /api/items, /api/purchases: account details, items, purchase validation). Keys are stored hashed, so an existing key cannot be shown again: see its prefix and last use here, or generate a new one.',
          createHeading: 'Generate a key',
          createButton: 'Generate key',
        }
      : {
          heading: 'API keys',
          intro: 'Keys for the buyer API (/api/v1) and the MCP server (/mcp): the ones to hand to an agent or a script that searches, plans and orders. Only the visible prefix of each key is kept.',
          createHeading: 'Create a key',
          createButton: 'Create key',
        };
    /**
     * The two pages list the same workspace keys for two APIs; each says how it differs from the
     * other, and links to it, so nobody has to guess which one an agent's key comes from.
     */
    const splitOf = (target: ConsoleTarget) => {
      if (target.kind !== 'workspace') return undefined;
      return apiAccess
        ? {
            text: 'Not the same as',
            link: 'API keys',
            href: `${target.href}/settings/api-keys`,
            after: ': these are the read-only keys of this workspace, also listed there, where keys for agents (the buyer API and the MCP server) are made. A key that can place orders never works on the seller API.',
          }
        : {
            text: 'Not the same as',
            link: 'API access',
            href: `${target.href}/settings/api-access`,
            after: ': that page lists the read-only keys again for the seller API (/api/account, /api/items, /api/purchases: selling digital goods), where a key that can place orders never works.',
          };
    };

    const keysOf = async (target: ConsoleTarget) => {
      const all = await listKeys(deps.pool, ownerOf(target), deps.clock);
      return apiAccess ? all.filter((k) => !k.can_place_orders) : all;
    };
    /** The key id of the path; one that cannot be a key's (not a PostgreSQL integer) is 404. */
    const keyIdOf = (request: FastifyRequest) => pathId((request.params as { keyId: string }).keyId, 'Key');
    /** A live key of this target that this page lists and the person may manage; else 404, 409 or 403. */
    const keyOf = async (request: FastifyRequest) => {
      const target = targetOf(request);
      const id = keyIdOf(request);
      const key = (await keysOf(target)).find((k) => k.id === id);
      if (!key) throw notFound('Key');
      if (!live(key)) throw new DomainError('conflict', `The key ${key.prefix}… is ${key.state} already.`);
      if (!mayChange(target, key)) throw forbidden('Your role cannot change this key.');
      return key;
    };

    const listPage = async (request: FastifyRequest, reply: FastifyReply, data: Partial<Views['keys']> = {}) => {
      const target = targetOf(request);
      if (section === 'api-access' && target.kind !== 'workspace') throw notFound('Page');
      const now = deps.clock.now();
      const keys = (await keysOf(target)).map((k) => ({
        id: k.id,
        name: k.name,
        prefix: k.prefix,
        canPlaceOrders: k.can_place_orders,
        created: moment(k.created_at, now),
        lastUsed: moment(k.last_used_at, now, 'Never'),
        expires: moment(k.expires_at, now, 'Never'),
        state: STATES[k.state],
        budget: budgetSummary(k),
        actions: live(k) && mayChange(target, k),
        href: `${target.href}/settings/${section}/${k.id}`,
      }));
      const spendingRole = !apiAccess && target.kind === 'workspace' && mayManage(target, true);
      const showSpendingBox = spendingRole && request.consoleUser!.emailVerified;
      return page(request, reply, 'keys', {
        title: texts.heading,
        section,
        ...texts,
        // A publisher's keys are for the publisher API only: the MCP server answers them 401.
        ...(target.kind === 'publisher' ? { intro: 'Keys for the publisher API (/api/v1/publisher): orders to accept, write, publish and re-check from code. Only the visible prefix of each key is kept.' } : {}),
        split: splitOf(target),
        base: `${target.href}/settings/${section}`,
        keys,
        showSpending: !apiAccess && target.kind === 'workspace',
        showSpendingBox,
        // An owner whose address is not confirmed is told why the box is missing.
        confirmToSpend: spendingRole && !request.consoleUser!.emailVerified,
        mayCreate: mayManage(target, false),
        askExpiry: !apiAccess,
        ...data,
        // A budget refused on a form that does not show the budget fields (forged) still shows why.
        showBudget: showSpendingBox || hasBudgetErrors(data.errors as FieldErrors | undefined),
        // Likewise the approval box.
        showApproval: showSpendingBox || Boolean((data.errors as FieldErrors | undefined)?.needs_approval),
      });
    };

    const shown = async (request: FastifyRequest, reply: FastifyReply, created: { id: number; key: string; prefix: string }, name: string, extra: Partial<Views['key-shown']> = {}) => {
      const target = targetOf(request);
      // What was stored (a rolled key's budget and approval are the old key's), read back.
      const detail = await keyDetail(deps.pool, ownerOf(target), created.id, deps.clock);
      const base = baseUrl(deps, request);
      // The raw key is in this page only: no cache may keep it.
      reply.header('cache-control', 'no-store');
      return page(request, reply, 'key-shown', {
        title: 'Your new key',
        heading: 'Your new key',
        section,
        created: { ...created, name },
        facts: {
          canPlaceOrders: detail.can_place_orders,
          budget: budgetSummary(detail),
          needsApproval: detail.needs_approval,
          expires: detail.expires_at ? exactTime(detail.expires_at) : 'Never',
        },
        // The MCP server is for workspace keys; the seller API's keys are not handed to agents.
        agent: !apiAccess && target.kind === 'workspace' ? agentSetup(deps, base, created.key) : undefined,
        keyHref: `${target.href}/settings/${section}/${created.id}`,
        curl: curlFor(section, target, base, created.key),
        back: `${target.href}/settings/${section}`,
        backLabel: texts.heading,
        ...extra,
      });
    };

    app.get(`/settings/${section}`, async (request, reply) => listPage(request, reply));

    app.post(`/settings/${section}`, async (request, reply) => {
      const target = targetOf(request);
      if (apiAccess && target.kind !== 'workspace') throw notFound('Page');
      const form = (request.body ?? {}) as Form;
      const name = formText(form, 'name').trim();
      const spending = !apiAccess && target.kind === 'workspace' && form.can_place_orders !== undefined && form.can_place_orders !== '';
      if (!mayManage(target, spending)) {
        throw forbidden(spending ? 'Only an owner can create a key that can place orders.' : 'Your role cannot create keys here.');
      }
      if (spending) refuseUnconfirmedSpender(request);
      const values = budgetFormValues(form);
      if (apiAccess) values.expires_on = ''; // API access keys are made without an expiry
      let needsApproval = false;
      try {
        const errors: FieldErrors = {};
        const named = nameField.safeParse(name);
        if (!named.success) errors.name = [named.error.issues[0]!.message];
        let budget: ReturnType<typeof readBudgetForm> | undefined;
        try {
          budget = readBudgetForm(values, { limitsAsked: false });
        } catch (err) {
          Object.assign(errors, formErrors(err, values));
        }
        try {
          needsApproval = readNeedsApproval(form);
        } catch (err) {
          Object.assign(errors, formErrors(err, values));
        }
        if (Object.keys(errors).length || !budget) throw invalidInput(errors);
        const created = await createKey(
          deps.pool,
          {
            ...(target.kind === 'workspace' ? { workspaceId: target.id, canPlaceOrders: spending } : { publisherId: target.id }),
            name,
            expiresAt: budget.expiresAt,
            limits: budget.limits,
            // On a key that cannot spend the domain refuses it, named on the form.
            needsApproval,
            // A member's key must not give them an owner's power over the webhooks (through the API).
            canManageWebhooks: can(target.role, 'manage_webhooks'),
            // Who was shown it: removing them offers to revoke it.
            createdBy: request.consoleUser!.id,
          },
          deps.clock,
        );
        return shown(request, reply, created, name);
      } catch (err) {
        const errors = formErrors(err, values);
        if (!errors) throw err;
        reply.code(422);
        return listPage(request, reply, {
          form: { name, can_place_orders: spending, needs_approval: needsApproval, ...values },
          errors,
          problem: 'The key was not created: check the fields below.',
        });
      }
    });

    /** A key's page: its budget (a spending key's) and, for a person who may change the key, the form. */
    const keyPage = async (
      request: FastifyRequest,
      reply: FastifyReply,
      data: { form?: BudgetFormValues; needsApproval?: boolean; errors?: FieldErrors; notice?: string; problem?: string } = {},
    ) => {
      const target = targetOf(request);
      if (apiAccess && target.kind !== 'workspace') throw notFound('Page');
      const key = await keyDetail(deps.pool, ownerOf(target), keyIdOf(request), deps.clock);
      const now = deps.clock.now();
      // A spending key's days against its daily limit, in US dollars as its budget is.
      const spending =
        key.budget && target.kind === 'workspace'
          ? spendingChart('key-spending', await spendingPerDay(deps.pool, { workspaceId: target.id, keyId: key.id }, now), { currency: 'USD', perUsd: 1 }, { cents: key.budget.day.limit_cents, words: 'Daily limit' })
          : null;
      if (apiAccess && key.can_place_orders) throw notFound('Key');
      const back = `${target.href}/settings/${section}`;
      return page(request, reply, 'key', {
        title: key.name,
        section,
        key: {
          ...key,
          created: moment(key.created_at, now),
          lastUsed: moment(key.last_used_at, now, 'Never'),
          expires: moment(key.expires_at, now, 'Never'),
          stateLabel: STATES[key.state],
        },
        rows: key.budget ? budgetRows(key.budget, now) : [],
        spending,
        manage: live(key) && mayChange(target, key),
        // A limit forged onto a key without a budget is refused; the fields show to say so.
        limitFields: key.budget !== null || hasBudgetErrors(data.errors),
        // Only a spending key has orders to wait for; a flag forged onto another is refused and shown.
        approvalForm: key.can_place_orders || Boolean(data.errors?.needs_approval),
        approvalAction: `${back}/${key.id}/approval`,
        needsApproval: data.needsApproval ?? key.needs_approval,
        revokeHref: `${back}/${key.id}/revoke`,
        rollHref: `${back}/${key.id}/roll`,
        back,
        backLabel: texts.heading,
        action: `${back}/${key.id}`,
        form: data.form ?? {
          order_limit_usd: asDollars(key.budget?.order_limit_cents ?? null),
          daily_limit_usd: asDollars(key.budget?.day.limit_cents ?? null),
          monthly_limit_usd: asDollars(key.budget?.month.limit_cents ?? null),
          expires_on: asDate(key.expires_at),
        },
        errors: data.errors ?? {},
        ...(data.notice ? { notice: data.notice } : {}),
        ...(data.problem ? { problem: data.problem } : {}),
      });
    };

    app.get(`/settings/${section}/:keyId`, async (request, reply) => keyPage(request, reply));

    app.post(`/settings/${section}/:keyId`, async (request, reply) => {
      const target = targetOf(request);
      const key = await keyOf(request);
      const values = budgetFormValues((request.body ?? {}) as Form);
      try {
        // An empty limit field clears that limit; a key that cannot spend has no limit fields.
        const { limits, expiresAt } = readBudgetForm(values, { limitsAsked: key.can_place_orders });
        // The date field shows the expiry's day: left as shown, a key expiring at another time of
        // that day (a rolled key's grace) keeps its instant.
        const expiry = values.expires_on === asDate(key.expires_at) ? {} : { expiresAt };
        await updateKey(deps.pool, key.id, { ...limits, ...expiry }, deps.clock, ownerOf(target));
      } catch (err) {
        const errors = formErrors(err, values);
        if (!errors) throw err;
        reply.code(422);
        const whole = errors.key ? `The key was not changed: ${errors.key.join('; ')}.` : 'The key was not changed: check the fields below.';
        return keyPage(request, reply, { form: values, errors, problem: whole });
      }
      return keyPage(request, reply, { notice: `Saved ${key.name}'s budget and expiry. A placement reads them at once; GET /api/v1/me may show the old ones for up to 5 seconds.` });
    });

    // Whether the key's orders wait for a person: its own form, so saving the budget never changes it.
    app.post(`/settings/${section}/:keyId/approval`, async (request, reply) => {
      const target = targetOf(request);
      const key = await keyOf(request);
      const form = (request.body ?? {}) as Form;
      let needsApproval: boolean | undefined;
      try {
        needsApproval = readNeedsApproval(form);
        await updateKey(deps.pool, key.id, { needsApproval }, deps.clock, ownerOf(target));
      } catch (err) {
        if (!(err instanceof DomainError) || err.code !== 'invalid_input') throw err;
        reply.code(422);
        return keyPage(request, reply, { errors: err.details.errors as FieldErrors, ...(needsApproval !== undefined ? { needsApproval } : {}), problem: 'The key was not changed: check the fields below.' });
      }
      const now = needsApproval ? `${key.name}'s orders now wait for a person's approval.` : `${key.name}'s orders no longer wait for a person's approval.`;
      return keyPage(request, reply, { notice: `${now} A placement reads it at once; GET /api/v1/me may show the old value for up to 5 seconds.` });
    });

    app.get(`/settings/${section}/:keyId/revoke`, async (request, reply) => {
      const target = targetOf(request);
      const key = await keyOf(request);
      const back = `${target.href}/settings/${section}`;
      return page(request, reply, 'key-revoke', { title: `Revoke ${key.name}`, section, key, back, action: `${back}/${key.id}/revoke` });
    });

    app.post(`/settings/${section}/:keyId/revoke`, async (request, reply) => {
      const target = targetOf(request);
      const key = await keyOf(request);
      await revokeKey(deps.pool, key.id, ownerOf(target));
      return listPage(request, reply, { notice: `Revoked ${key.name} (${key.prefix}…).` });
    });

    app.get(`/settings/${section}/:keyId/roll`, async (request, reply) => {
      const target = targetOf(request);
      const key = await keyOf(request);
      const back = `${target.href}/settings/${section}`;
      return page(request, reply, 'key-roll', { title: `Roll ${key.name}`, section, key, back, action: `${back}/${key.id}/roll`, form: { grace_hours: '24' } });
    });

    app.post(`/settings/${section}/:keyId/roll`, async (request, reply) => {
      const target = targetOf(request);
      const key = await keyOf(request);
      // A roll makes a new key with the old one's power.
      if (key.can_place_orders) refuseUnconfirmedSpender(request);
      const form = (request.body ?? {}) as Form;
      const back = `${target.href}/settings/${section}`;
      let hours: number;
      try {
        hours = parseGrace(formText(form, 'grace_hours'));
      } catch (err) {
        if (!(err instanceof DomainError)) throw err;
        reply.code(422);
        return page(request, reply, 'key-roll', { title: `Roll ${key.name}`, section, key, back, action: `${back}/${key.id}/roll`, form: { grace_hours: formText(form, 'grace_hours') }, errors: err.details.errors as FieldErrors });
      }
      const rolled = await rollKey(deps.pool, ownerOf(target), key.id, hours, deps.clock, request.consoleUser!.id);
      const until = hours === 0 ? 'The old key has stopped working.' : `The old key ${key.prefix}… keeps working until ${exactTime(new Date(deps.clock.now() + hours * 3_600_000))}.`;
      return shown(request, reply, rolled, key.name, { rolled: until });
    });
  }
}
