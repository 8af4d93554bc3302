import type { Redis } from 'ioredis';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { MemberRole } from '../common/enums.js';
import type { Config } from '../config.js';
import { notFound } from '../domain/errors.js';
import type { OAuthInteractions } from '../domain/oauth/interactions.js';
import { csrfUserInfo } from './cookies.js';
import * as fmt from './format.js';
import { pathIdText } from '../schemas/outlets.js';
import type { Services } from '../domain/services/services.js';
import type { ConsoleTarget, SignedIn } from './signed-in.js';
import type { PageCommon, ViewName, Views } from './view-models.js';

export type { ConsoleTarget, SignedIn };


/** What the console is built from: the same handles the API's routes get. */
export interface ConsoleDeps
  extends Pick<Services, 'pool' | 'clock' | 'workspaces' | 'durations' | 'linkChecker' | 'placementGroups' | 'search' | 'webhookSecrets' | 'billing'> {
  config: Config;
  redis?: Redis;
  /** The OAuth server's interactions (docs/oauth.md); absent when OAuth is off (`oauthBase` in config.ts). */
  oauth?: OAuthInteractions;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * false: a POST the console takes without its form token (the CSRF check), for a route whose
     * URL carries what authorises it (the one-click unsubscribe a mail client posts, RFC 8058).
     */
    formToken?: boolean;
  }
  interface FastifyRequest {
    /** The signed-in person (set by the gate in front of every signed-in route). */
    consoleUser: SignedIn | null;
    consoleTargets: ConsoleTarget[];
    /** The workspace or publisher account of a /app/w/:id or /app/p/:id page, the person's membership checked. */
    consoleTarget: ConsoleTarget | null;
    /** A workspace page's count of approval requests waiting (the navigation shows it), read when the page is rendered. */
    consolePendingApprovals: (() => Promise<number>) | null;
    /** The key of the CSRF tokens' session binding (app_secrets), read before the route runs. */
    consoleCsrfKey: string;
  }
}

export const targetHref = (kind: 'workspace' | 'publisher', id: number) => `/app/${kind === 'workspace' ? 'w' : 'p'}/${id}`;

export function toTarget(m: { kind: 'workspace' | 'publisher'; id: number; name: string; role: MemberRole }): ConsoleTarget {
  return { ...m, href: targetHref(m.kind, m.id), kindLabel: m.kind === 'workspace' ? 'Workspace' : 'Publisher account' };
}

/**
 * A row id from the path (a key, a member, a grant): digits within PostgreSQL's integer, or a 404
 * naming `what`, as for one that does not exist.
 */
export function pathId(raw: string | undefined, what: string): number {
  // The API's id rule, written as a page's address writes it: one address per page, so `01` is no page.
  const id = pathIdText.safeParse(raw);
  if (!id.success || String(id.data) !== raw) throw notFound(what);
  return id.data;
}

/** A list's `?page=`: a page number from 1 to 999,999, else the first page (a list never refuses its own links). */
export function pageNumber(raw: unknown): number {
  return typeof raw === 'string' && /^[1-9][0-9]{0,5}$/.test(raw) ? Number(raw) : 1;
}

/** The target of the current page; the gate has already answered 404 when there is none. */
export function targetOf(request: FastifyRequest): ConsoleTarget {
  const t = request.consoleTarget;
  if (!t) throw new Error('targetOf called outside a target page');
  return t;
}

/**
 * The navigation's count of approval requests waiting, for a workspace's page; null elsewhere,
 * and when it cannot be read (an error page, the database unreachable: the page is shown without it).
 */
async function pendingApprovals(request: FastifyRequest): Promise<number | null> {
  const count = request.consolePendingApprovals;
  if (!count) return null;
  try {
    return await count();
  } catch (err) {
    request.log.warn({ err }, 'the count of pending approval requests could not be read');
    return null;
  }
}

/**
 * A page: the layout's common data (who is signed in, the switcher, the form token) and the
 * formatting helpers (`it.fmt`) added. The view's name picks its model (view-models.ts).
 */
export async function page<V extends ViewName>(request: FastifyRequest, reply: FastifyReply, view: V, data: Views[V]) {
  const model: PageCommon = {
    csrf: reply.generateCsrf({ userInfo: csrfUserInfo(request) }),
    user: request.consoleUser,
    memberships: request.consoleTargets,
    target: request.consoleTarget,
    pendingApprovals: await pendingApprovals(request),
    form: {},
    errors: {},
    fmt,
  };
  return reply.view(view, { ...model, ...data });
}
