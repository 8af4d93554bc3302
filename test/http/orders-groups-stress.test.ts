import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { createDatabase } from '../../src/db/client.js';
import { topUp } from '../../src/domain/ledger/ledger-service.js';
import { sweepDeadlines } from '../../src/domain/orders/sweep.js';
import { durationsFrom } from '../../src/domain/orders/states.js';
import { setupApp } from '../helpers/app.js';
import { publisherWithOutlet } from '../helpers/catalog.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { bearer, workspaceWithKeys } from '../helpers/fixtures.js';
import { expectLedgerInvariants } from '../helpers/ledger-invariants.js';
import { articleFor, DAY } from '../helpers/orders.js';

// Group commit under everything at once: two app instances (two schedulers, as two processes)
// on one database, placements with and without content, retries of the same key on the same and
// on the other instance, balance rows held from outside for up to 0.8 s (so groups give up and
// their placements run alone), cancels, approvals, top-ups and sweeps. Afterwards every request
// must have had one sensible answer, the orders must be exactly those answered 201, the records
// exactly the answers stored, and the ledger invariants must hold.
// Connect timeouts far above what a loaded machine takes: this test is about answers, not speed.
const database = await createTestDatabase({ max: 6, connectTimeoutMs: 30_000 });
const h = await setupApp({ RATE_LIMIT_PER_MINUTE: 1_000_000 }, { database });
const second = createDatabase({ url: database.url, max: 6, connectTimeoutMs: 30_000 });
const h2 = await setupApp({ RATE_LIMIT_PER_MINUTE: 1_000_000 }, { database: { ...second, url: database.url, name: database.name, drop: async () => {} } as TestDatabase });
afterAll(() => second.close());
const durations = durationsFrom(h.config);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const apps = [h, h2];
const place = (app: number, key: string, idem: string, body: object) =>
  apps[app]!.app.inject({ method: 'POST', url: '/api/v1/orders', headers: { ...bearer(key), 'idempotency-key': idem }, payload: body });
const buyer = (app: number, key: string, path: string) => apps[app]!.app.inject({ method: 'POST', url: `/api/v1/orders/${path}`, headers: bearer(key) });
const pub = (key: string, path: string, payload?: object) =>
  h.app.inject({ method: 'POST', url: `/api/v1/publisher/orders/${path}`, headers: bearer(key), ...(payload ? { payload } : {}) });

interface Sent {
  app: number;
  ws: number;
  idem: string;
  body: object;
  dup: boolean;
  status?: number;
  json?: { code?: string; data?: Array<{ id: number }> };
}

describe('POST /api/v1/orders: group commit under load — happy', () => {
  it('200 placements over 5 workspaces from two instances, with rows held from outside, cancels, approvals, top-ups and sweeps', async () => {
    const p = await publisherWithOutlet(database, [{ publisher_price_cents: 1000 }, { publisher_price_cents: 1500 }]);
    const [o1, o2] = p.offers;
    const wss = await Promise.all(Array.from({ length: 5 }, () => workspaceWithKeys(database.pool, { balanceCents: 40_000 })));
    // Earlier orders: some live and waiting for approval, the others to cancel or to expire.
    const live: Array<{ ws: number; id: number }> = [];
    const expiring: Array<{ ws: number; id: number }> = [];
    for (const [wi, ws] of wss.entries()) {
      for (let i = 0; i < 6; i++) {
        const r = await place(0, ws.spendKey, `pre-${wi}-${i}`, { offer_ids: [o1!.id], target_url: 'https://b.example/' });
        expect(r.statusCode).toBe(201);
        const id = r.json().data[0].id as number;
        if (i < 3) {
          await pub(p.publisherKey, `${id}/accept`);
          await pub(p.publisherKey, `${id}/draft`, { title: 'A draft worth approving', body: 'Words [link](https://b.example/)' });
          await buyer(0, ws.readKey, `${id}/approve-draft`);
          await pub(p.publisherKey, `${id}/publish`, { live_url: `https://${p.domain}/post-${id}` });
          live.push({ ws: wi, id });
        } else expiring.push({ ws: wi, id });
      }
    }
    h.clock.advance(4 * DAY);
    h2.clock.set(h.clock.now());
    const lastEarlier = Math.max(...live.map((x) => x.id), ...expiring.map((x) => x.id));

    let stop = false;
    let held = 0;
    const holdRowsNowAndThen = async () => {
      const c = new pg.Client({ connectionString: database.url });
      await c.connect();
      while (!stop) {
        await c.query('BEGIN');
        await c.query(`SELECT id FROM ledger_accounts WHERE workspace_id = $1 ORDER BY kind FOR UPDATE`, [wss[Math.floor(Math.random() * 5)]!.workspaceId]);
        held++;
        await sleep(100 + Math.random() * 700);
        await c.query('COMMIT');
        await sleep(Math.random() * 100);
      }
      await c.end();
    };
    const holders = Promise.all([holdRowsNowAndThen(), holdRowsNowAndThen()]);
    const sweeps = (async () => {
      while (!stop) {
        await sweepDeadlines(database.pool, h.clock.now(), durations);
        await sleep(30);
      }
    })();
    const topUps = (async () => {
      for (let n = 0; !stop; n++) {
        await topUp(database.pool, wss[n % 5]!.workspaceId, 500);
        await sleep(20);
      }
    })();
    const side: Array<Promise<number>> = [];
    for (const x of live) side.push(buyer(x.ws % 2, wss[x.ws]!.spendKey, `${x.id}/approve`).then((r) => r.statusCode));
    for (const x of expiring) side.push(sleep(Math.random() * 300).then(() => buyer(1, wss[x.ws]!.spendKey, `${x.id}/cancel`)).then((r) => r.statusCode));

    const sent: Sent[] = [];
    const requests: Array<Promise<void>> = [];
    for (let i = 0; i < 200; i++) {
      const ws = i % 5;
      const body = {
        offer_ids: i % 3 === 0 ? [o1!.id, o2!.id] : [i % 2 ? o1!.id : o2!.id],
        target_url: 'https://b.example/',
        ...(i % 10 === 7 ? { content: articleFor('https://b.example/'), content_title: 'A title for the piece' } : {}),
      };
      const first: Sent = { app: i % 2, ws, idem: `st-${i}`, body, dup: false };
      const copies = [first];
      if (i % 25 === 3) copies.push({ ...first, dup: true }); // a retry on the same instance
      if (i % 25 === 4) copies.push({ ...first, app: 1 - first.app, dup: true }); // and on the other one
      for (const c of copies) {
        sent.push(c);
        requests.push(
          (async () => {
            await sleep(Math.random() * 6000);
            const r = await place(c.app, wss[ws]!.spendKey, c.idem, body);
            c.status = r.statusCode;
            c.json = r.json();
            if (r.statusCode === 201 && i % 3 === 1) side.push(buyer(c.app, wss[ws]!.spendKey, `${c.json!.data![0]!.id}/cancel`).then((x) => x.statusCode));
          })(),
        );
      }
    }
    await Promise.all(requests);
    const sideStatuses = await Promise.all(side);
    stop = true;
    await Promise.all([holders, sweeps, topUps]);
    expect(held).toBeGreaterThan(0);

    // One sensible answer each: placed, short of balance, the key in use, or no turn in time.
    for (const s of sent) expect([201, 402, 409, 503], `${s.idem}: ${JSON.stringify(s.json)}`).toContain(s.status);
    for (const st of sideStatuses) expect([200, 409]).toContain(st);
    // The orders written are exactly those answered, each key's the same every time it was answered.
    const answered = new Map<string, number[]>();
    for (const s of sent.filter((x) => x.status === 201)) {
      const ids = s.json!.data!.map((o) => o.id);
      const before = answered.get(s.idem);
      if (before) expect(ids).toEqual(before);
      else answered.set(s.idem, ids);
    }
    const { rows: written } = await database.pool.query<{ id: number }>('SELECT id FROM orders WHERE id > $1 ORDER BY id', [lastEarlier]);
    expect(written.map((r) => Number(r.id))).toEqual([...answered.values()].flat().sort((a, b) => a - b));
    // A record for every stored answer, and none without one.
    const { rows: records } = await database.pool.query<{ key: string; response_status: number }>(`SELECT key, CASE WHEN outcome::json -> 'error' IS NULL THEN 201 WHEN outcome::json -> 'error' ->> 'code' = 'insufficient_balance' THEN 402 ELSE 409 END AS response_status FROM idempotency_records WHERE key LIKE 'st-%'`);
    const recorded = new Map(records.map((r) => [r.key, r.response_status]));
    for (const s of sent.filter((x) => x.status === 201 || x.status === 402)) expect(recorded.get(s.idem), s.idem).toBe(s.status);
    for (const [key, status] of recorded) expect(sent.some((s) => s.idem === key && s.status === status), `record ${key} ${status}`).toBe(true);
    // Nothing is still running: a retry of a key answered 409 or 503 is never a 409 now.
    for (const s of sent.filter((x) => !x.dup && (x.status === 409 || x.status === 503))) {
      expect((await place(0, wss[s.ws]!.spendKey, s.idem, s.body)).statusCode, s.idem).not.toBe(409);
    }
    await expectLedgerInvariants(database);
  }, 120_000);
});
