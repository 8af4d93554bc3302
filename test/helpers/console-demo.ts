import type { FastifyInstance } from 'fastify';
import type pg from 'pg';
import type { Clock } from '../../src/domain/clock.js';
import { sequenceEvents } from '../../src/domain/events/sequencer.js';
import { createKey } from '../../src/domain/keys/key-service.js';
import { createInvitation } from '../../src/domain/users/invitations.js';
import { addMember } from '../../src/domain/users/memberships.js';
import { createUser } from '../../src/domain/users/user-service.js';
import { seedDemoIfEmpty } from '../../src/demo/seed.js';

// The demo of `npm start` with what a console shows once it has been used for a while: orders in
// several states on both sides, an approval request waiting, a key with a budget, a webhook
// endpoint, a second member and an invitation. Made through the API as an agent would (and the
// domain calls the console makes), with no vitest in it: the phone test
// (test/console/browser-phone.test.ts) and the Lighthouse script (scripts/lighthouse.mjs) both
// visit the pages it lists.

/** The host the demo's webhook endpoint names; the app must resolve it (OUTBOUND_RESOLVE, loopback allowed). */
export const DEMO_HOOK_HOST = 'hooks.demo.example';

/** Settings the app needs for `seedConsoleDemo`: the webhook endpoint's host resolves, to nothing that answers. */
export const consoleDemoConfig = {
  OUTBOUND_ALLOW_LOOPBACK: true,
  OUTBOUND_RESOLVE: new Map([[DEMO_HOOK_HOST, '127.0.0.1']]),
  RATE_LIMIT_PER_MINUTE: 100_000,
} as const;

export interface ConsolePage {
  /** A short name: the screenshot's file name and the line of a report. */
  name: string;
  path: string;
  /** Signed out (the sign-in page); every other page is the demo user's. */
  signedOut?: boolean;
}

export interface ConsoleDemo {
  user: { email: string; password: string; id: number };
  workspaceId: number;
  publisherId: number;
  /** Every page of the console a signed-in owner of the workspace and the publisher reaches, with ids from the demo. */
  pages: ConsolePage[];
}

type Inject = FastifyInstance['inject'];

const ARTICLE = (url: string) =>
  `# Ten places to work from on the road\n\n${'A calm café with good coffee and a reliable connection makes a day of work feel like a holiday. '.repeat(12)}\n\n` +
  `We plan our trips with [our travel planner](${url}), which keeps the bookings and the meetings in one place.`;

/**
 * Seeds the demo into the app's empty database, then uses it: answers the demo user (with the
 * password to sign in) and the pages to visit. The app's background workers may be off: the
 * event feed is sequenced here.
 */
export async function seedConsoleDemo(app: { inject: Inject; searchEngine: { catchUp(): Promise<void> } }, pool: pg.Pool, opts: { feeRate: number; clock: Clock }): Promise<ConsoleDemo> {
  const demo = await seedDemoIfEmpty({ pool }, opts.feeRate);
  if (!demo?.user) throw new Error('seedConsoleDemo needs an empty database');
  // The search engine learns of the demo's outlets from PostgreSQL's notifications.
  await app.searchEngine.catchUp();
  const { workspaceId: ws, publisherId: pub } = demo;
  const now = () => opts.clock.now();
  const userId = (await pool.query<{ id: number }>('SELECT id FROM users WHERE email = $1', [demo.user.email])).rows[0]!.id;

  let seq = 0;
  const call = async (key: string, method: 'GET' | 'POST', url: string, payload?: object, expected = [200, 201]) => {
    const res = await app.inject({
      method,
      url,
      headers: { authorization: `Bearer ${key}`, ...(method === 'POST' && url === '/api/v1/orders' ? { 'idempotency-key': `console-demo-${++seq}` } : {}) },
      ...(payload ? { payload } : {}),
    });
    if (!expected.includes(res.statusCode)) throw new Error(`${method} ${url}: ${res.statusCode} ${res.body.slice(0, 300)}`);
    return res.json().data;
  };

  // Offers of a few outlets, the publisher's and the buyer's writing both.
  const outlets = (await call(demo.readOnlyKey, 'GET', '/api/v1/outlets?per_page=8&sort=price')) as Array<{ id: number }>;
  const offers: Array<{ id: number; content_by: string; outletId: number }> = [];
  for (const o of outlets) {
    const outlet = (await call(demo.readOnlyKey, 'GET', `/api/v1/outlets/${o.id}`)) as { offers: Array<{ id: number; content_by: string }> };
    for (const f of outlet.offers) offers.push({ id: f.id, content_by: f.content_by, outletId: o.id });
  }
  const byPublisher = offers.filter((f) => f.content_by === 'publisher');
  const byBuyer = offers.filter((f) => f.content_by === 'buyer');
  if (byPublisher.length < 3 || byBuyer.length < 3) throw new Error('the demo outlets offer too few of each kind');

  const target = 'https://demo.example/travel-planner';
  const place = async (offer: { id: number }, extra: object = {}) =>
    ((await call(demo.spendingKey, 'POST', '/api/v1/orders', { offer_ids: [offer.id], target_url: target, anchor_text: 'our travel planner', brief: 'Remote work while travelling: a practical angle, please.', ...extra })) as Array<{ id: number }>)[0]!.id;
  const pubPost = (id: number, action: string, body?: object) => call(demo.publisherKey, 'POST', `/api/v1/publisher/orders/${id}/${action}`, body);
  const buyerPost = (id: number, action: string, body?: object) => call(demo.readOnlyKey, 'POST', `/api/v1/orders/${id}/${action}`, body);
  const withContent = { content_title: 'Ten places to work from on the road', content: ARTICLE(target) };

  // Waiting for the publisher to accept; waiting for the buyer's article; being written; a draft to review;
  // declined; cancelled; in publishing with a message.
  await place(byPublisher[0]!);
  const awaitingContent = await place(byBuyer[0]!);
  const writing = await place(byPublisher[1]!);
  await pubPost(writing, 'accept');
  const draft = await place(byPublisher[2]!);
  await pubPost(draft, 'accept');
  await pubPost(draft, 'draft', { title: 'Working from the road: ten places that work', body: ARTICLE(target) });
  await buyerPost(draft, 'messages', { body: 'Could the second section name a few cities?' });
  const declined = await place(byBuyer[1]!, withContent);
  await pubPost(declined, 'decline', { reason: 'We do not publish travel content this month.' });
  const publishing = await place(byBuyer[2]!, withContent);
  await pubPost(publishing, 'accept');
  await pubPost(publishing, 'messages', { body: 'Scheduled for Thursday morning.' });
  await buyerPost(awaitingContent, 'cancel');
  const awaiting = await place(byBuyer[3] ?? byBuyer[0]!);

  // An agent's key whose orders wait for a person: one request waiting.
  const agent = await createKey(pool, { workspaceId: ws, name: 'Travel agent (MCP)', canPlaceOrders: true, needsApproval: true, limits: { orderLimitCents: 50_000, dailyLimitCents: 100_000, monthlyLimitCents: 1_000_000 } }, opts.clock);
  const asked = await call(agent.key, 'POST', '/api/v1/orders', { offer_ids: [byPublisher[0]!.id], target_url: target, anchor_text: 'our travel planner' }, [202]);
  const approvalId = (asked as { id: number }).id;

  // A webhook endpoint (its host resolves to a port nothing listens on), a member and an invitation.
  const hook = (await call(demo.readOnlyKey, 'POST', '/api/v1/webhook-endpoints', { url: `https://${DEMO_HOOK_HOST}/marketplace/events` })) as { id: number };
  const member = await createUser(pool, { email: 'sam@demo.example', name: 'Sam Member', password: 'sam demo password' });
  await addMember(pool, { workspaceId: ws }, member.id, 'member');
  await createInvitation(pool, userId, { workspaceId: ws }, 'lee@demo.example', 'viewer', opts.clock);
  await sequenceEvents(pool, now());

  const outletId = byPublisher[0]!.outletId;
  const w = `/app/w/${ws}`;
  const p = `/app/p/${pub}`;
  const pages: ConsolePage[] = [
    { name: 'sign-in', path: '/app/sign-in', signedOut: true },
    { name: 'overview', path: w },
    { name: 'orders', path: `${w}/orders` },
    { name: 'order', path: `${w}/orders/${draft}` },
    { name: 'order-awaiting', path: `${w}/orders/${awaiting}` },
    { name: 'order-cancel', path: `${w}/orders/${awaiting}/cancel` },
    { name: 'approvals', path: `${w}/approvals` },
    { name: 'approval', path: `${w}/approvals/${approvalId}` },
    { name: 'outlets', path: `${w}/outlets?q=travel` },
    { name: 'outlet', path: `${w}/outlets/${outletId}` },
    { name: 'order-new', path: `${w}/outlets/${outletId}/offers/${byPublisher[0]!.id}` },
    { name: 'settings', path: `${w}/settings` },
    { name: 'api-keys', path: `${w}/settings/api-keys` },
    { name: 'key', path: `${w}/settings/api-keys/${agent.id}` },
    { name: 'key-revoke', path: `${w}/settings/api-keys/${agent.id}/revoke` },
    { name: 'key-roll', path: `${w}/settings/api-keys/${agent.id}/roll` },
    { name: 'api-access', path: `${w}/settings/api-access` },
    { name: 'approval-rules', path: `${w}/settings/approval-rules` },
    { name: 'connected-apps', path: `${w}/settings/connected-apps` },
    { name: 'webhooks', path: `${w}/settings/webhooks` },
    { name: 'webhook-deliveries', path: `${w}/settings/webhooks/${hook.id}/deliveries` },
    { name: 'webhook-rotate', path: `${w}/settings/webhooks/${hook.id}/rotate` },
    { name: 'members', path: `${w}/settings/members` },
    { name: 'member-remove', path: `${w}/settings/members/${member.id}/remove` },
    { name: 'notifications', path: `${w}/settings/notifications` },
    { name: 'desk-overview', path: p },
    { name: 'desk-orders', path: `${p}/orders` },
    { name: 'desk-order', path: `${p}/orders/${writing}` },
    { name: 'desk-publishing', path: `${p}/orders/${publishing}` },
    { name: 'desk-keys', path: `${p}/settings/api-keys` },
    { name: 'desk-members', path: `${p}/settings/members` },
    { name: 'not-found', path: `${w}/orders/999999` },
  ];
  return { user: { ...demo.user, id: userId }, workspaceId: ws, publisherId: pub, pages };
}
