import type { buildApp } from '../../src/app.js';
import type { Database } from '../../src/db/client.js';
import { createPurchase, importItems, refundPurchase } from '../../src/domain/catalog/catalog-writes.js';
import { createKey, revokeKey } from '../../src/domain/keys/key-service.js';
import { createProject } from '../../src/domain/workspaces/projects.js';
import { setApprovalRules } from '../../src/domain/workspaces/workspace-service.js';
import { publisherWithOutlet } from '../helpers/catalog.js';
import { workspaceWithKeys } from '../helpers/fixtures.js';
import { itemsOfEachKind } from '../http/catalog/fixtures.js';

// The data the fuzzer aims at: two buying workspaces with keys of every kind, a broke one, two
// publishers with outlets, orders of each workspace in every state, items, purchases (one
// refunded), projects and real MCP confirmation tokens. Everything is created through the domain
// services or the API itself, as a user would.

export type App = Awaited<ReturnType<typeof buildApp>>;

/** Keys the world holds, by who they belong to. */
export type RealKeyKind = 'read' | 'spend' | 'otherRead' | 'otherSpend' | 'poorSpend' | 'publisher' | 'otherPublisher' | 'revoked' | 'revokedSpend';
export type KeyKind = RealKeyKind | 'none' | 'malformed' | 'unknown';

export interface KeyInfo {
  raw: string;
  workspaceId: number | null;
  publisherId: number | null;
  canSpend: boolean;
  revoked: boolean;
}

export interface WorldOrder {
  id: number;
  workspaceId: number;
  publisherId: number;
  status: string;
}

export interface World {
  keys: Record<RealKeyKind, KeyInfo>;
  workspaces: { a: number; b: number; poor: number };
  publishers: { a: number; b: number };
  orders: WorldOrder[];
  outlets: { id: number; publisherId: number; domain: string }[];
  offers: { id: number; publisherId: number }[];
  items: { id: number; workspaceId: number }[];
  codes: { code: string; workspaceId: number; refunded: boolean }[];
  projects: { id: number; workspaceId: number }[];
  /** Real MCP confirmation tokens (quotes), to be replayed with other arguments. */
  tokens: string[];
}

const BUYER_URL = 'https://buyer.example/product';
export const article = (url = BUYER_URL) =>
  `# A useful article\n\n${'Plenty of words here to satisfy the count. '.repeat(10)}\n\nRead about [our product](${url}).`;

function bearer(key: string) {
  return { authorization: `Bearer ${key}` };
}

export async function seedWorld(app: App, database: Database): Promise<World> {
  const a = await workspaceWithKeys(database.pool, { name: 'Fuzz A', balanceCents: 5_000_000 });
  const b = await workspaceWithKeys(database.pool, { name: 'Fuzz B', currency: 'EUR', balanceCents: 5_000_000 });
  const poor = await workspaceWithKeys(database.pool, { name: 'Fuzz Poor', balanceCents: 0 });
  const revoked = await createKey(database.pool, { workspaceId: a.workspaceId });
  const revokedSpend = await createKey(database.pool, { workspaceId: a.workspaceId, canPlaceOrders: true });
  await revokeKey(database.pool, revoked.id);
  await revokeKey(database.pool, revokedSpend.id);

  const pa = await publisherWithOutlet(database, [{ content_by: 'publisher' }, { content_by: 'buyer', title: 'Buyer content' }]);
  const pb = await publisherWithOutlet(database, [{ content_by: 'publisher', format: 'sponsored_article' }, { content_by: 'buyer', format: 'link_insertion' }]);

  const ws = (id: number, canSpend: boolean, raw: string, revokedKey = false): KeyInfo => ({ raw, workspaceId: id, publisherId: null, canSpend, revoked: revokedKey });
  const pub = (id: number, raw: string): KeyInfo => ({ raw, workspaceId: null, publisherId: id, canSpend: false, revoked: false });
  const keys: Record<RealKeyKind, KeyInfo> = {
    read: ws(a.workspaceId, false, a.readKey),
    spend: ws(a.workspaceId, true, a.spendKey),
    otherRead: ws(b.workspaceId, false, b.readKey),
    otherSpend: ws(b.workspaceId, true, b.spendKey),
    poorSpend: ws(poor.workspaceId, true, poor.spendKey),
    publisher: pub(pa.publisherId, pa.publisherKey),
    otherPublisher: pub(pb.publisherId, pb.publisherKey),
    revoked: ws(a.workspaceId, false, revoked.key, true),
    revokedSpend: ws(a.workspaceId, true, revokedSpend.key, true),
  };

  // Orders in every state, for each (workspace, publisher) pair.
  const orders: WorldOrder[] = [];
  let idem = 0;
  const must = async (what: string, p: Promise<{ statusCode: number; body: string; json(): unknown }>) => {
    const res = await p;
    if (res.statusCode >= 300) throw new Error(`fuzz world: ${what} answered ${res.statusCode}: ${res.body.slice(0, 500)}`);
    return res.json() as { data: unknown };
  };
  const place = async (key: string, offerId: number) => {
    const body = await must(
      'place order',
      app.inject({
        method: 'POST',
        url: '/api/v1/orders',
        headers: { ...bearer(key), 'idempotency-key': `fuzz-seed-${++idem}` },
        payload: { offer_ids: [offerId], target_url: BUYER_URL, anchor_text: 'our product', brief: 'Seeded by the fuzzer.' },
      }),
    );
    return (body.data as { id: number }[])[0]!.id;
  };
  const buyer = (key: string, path: string, payload?: object) =>
    must(`buyer ${path}`, app.inject({ method: 'POST', url: `/api/v1/orders/${path}`, headers: bearer(key), ...(payload ? { payload } : {}) }));
  const publisher = (key: string, path: string, payload?: object) =>
    must(`publisher ${path}`, app.inject({ method: 'POST', url: `/api/v1/publisher/orders/${path}`, headers: bearer(key), ...(payload ? { payload } : {}) }));

  const pairs = [
    { w: a, p: pa },
    { w: a, p: pb },
    { w: b, p: pa },
    { w: b, p: pb },
  ];
  for (const { w, p } of pairs) {
    const [pubOffer, buyerOffer] = [p.offers[0]!.id, p.offers[1]!.id];
    const add = (id: number, status: string) => orders.push({ id, workspaceId: w.workspaceId, publisherId: p.publisherId, status });
    add(await place(w.spendKey, buyerOffer), 'awaiting_content');
    add(await place(w.spendKey, pubOffer), 'awaiting_acceptance');
    const writing = await place(w.spendKey, pubOffer);
    await publisher(p.publisherKey, `${writing}/accept`);
    add(writing, 'writing');
    const chain: number[] = [];
    for (let i = 0; i < 4; i++) {
      const id = await place(w.spendKey, pubOffer);
      await publisher(p.publisherKey, `${id}/accept`);
      await publisher(p.publisherKey, `${id}/draft`, { title: 'A draft for review', body: article() });
      chain.push(id);
    }
    add(chain[0]!, 'draft_review');
    await buyer(w.readKey, `${chain[1]}/approve-draft`);
    add(chain[1]!, 'publishing');
    for (const id of chain.slice(2)) {
      await buyer(w.readKey, `${id}/approve-draft`);
      await publisher(p.publisherKey, `${id}/publish`, { live_url: `https://${p.domain}/post-${id}` });
    }
    add(chain[2]!, 'live_review');
    await buyer(w.spendKey, `${chain[3]}/approve`);
    add(chain[3]!, 'completed');
    const declined = await place(w.spendKey, pubOffer);
    await publisher(p.publisherKey, `${declined}/decline`, { reason: 'Not a fit.' });
    add(declined, 'declined');
    const cancelled = await place(w.spendKey, pubOffer);
    await buyer(w.readKey, `${cancelled}/cancel`);
    add(cancelled, 'cancelled');
  }
  // Workspace B needs approval above 50 USD from now on (403 approval_required paths).
  await setApprovalRules(database.pool, b.workspaceId, { maxOrderCents: 5_000 });

  // Items and purchases of A and B.
  const items: World['items'] = [];
  const codes: World['codes'] = [];
  for (const w of [a, b]) {
    await importItems(database.pool, w.workspaceId, itemsOfEachKind(`fuzz${w.workspaceId}`));
    const { rows } = await database.pool.query<{ id: number }>('SELECT id FROM items WHERE workspace_id = $1 ORDER BY id', [w.workspaceId]);
    for (const r of rows) items.push({ id: r.id, workspaceId: w.workspaceId });
    const first = rows[0]!.id;
    codes.push({ code: (await createPurchase(database.pool, { itemId: first, license: 'regular', supportMonths: 6 })).purchase_code, workspaceId: w.workspaceId, refunded: false });
    codes.push({ code: (await createPurchase(database.pool, { itemId: rows[1]!.id, license: 'extended', supportMonths: null })).purchase_code, workspaceId: w.workspaceId, refunded: false });
    const refunded = (await createPurchase(database.pool, { itemId: first, license: 'regular', supportMonths: 6 })).purchase_code;
    await refundPurchase(database.pool, refunded);
    codes.push({ code: refunded, workspaceId: w.workspaceId, refunded: true });
  }

  const projects: World['projects'] = [];
  for (const w of [a, b]) {
    const project = await createProject(database.pool, w.workspaceId, `Fuzz project ${w.workspaceId}`);
    projects.push({ id: (project as { id: number }).id, workspaceId: w.workspaceId });
  }

  const { rows: outletRows } = await database.pool.query<{ id: number; publisher_id: number; domain: string }>('SELECT id, publisher_id, domain FROM outlets ORDER BY id');
  const { rows: offerRows } = await database.pool.query<{ id: number; publisher_id: number }>(
    'SELECT f.id, o.publisher_id FROM offers f JOIN outlets o ON o.id = f.outlet_id ORDER BY f.id',
  );

  // Real quotes: their tokens, sent later with other arguments or keys, must never spend.
  const tokens: string[] = [];
  const quote = async (key: string, name: string, args: Record<string, unknown>) => {
    const res = await app.inject({
      method: 'POST',
      url: '/mcp',
      headers: { ...bearer(key), 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      payload: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
    });
    const token = res.statusCode === 200 ? (res.json() as { result?: { structuredContent?: { confirmation_token?: string } } }).result?.structuredContent?.confirmation_token : undefined;
    if (token) tokens.push(token);
  };
  await quote(a.spendKey, 'place-orders', { offer_ids: [pa.offers[0]!.id], target_url: BUYER_URL, anchor_text: 'our product' });
  const live = orders.find((o) => o.workspaceId === a.workspaceId && o.status === 'live_review');
  if (live) await quote(a.spendKey, 'approve-placement', { order_id: live.id });

  return {
    keys,
    workspaces: { a: a.workspaceId, b: b.workspaceId, poor: poor.workspaceId },
    publishers: { a: pa.publisherId, b: pb.publisherId },
    orders,
    outlets: outletRows.map((r) => ({ id: r.id, publisherId: r.publisher_id, domain: r.domain })),
    offers: offerRows.map((r) => ({ id: r.id, publisherId: r.publisher_id })),
    items,
    codes,
    projects,
    tokens,
  };
}
