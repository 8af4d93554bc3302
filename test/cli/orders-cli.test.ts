import { afterAll, describe, expect, it } from 'vitest';
import { setupApp } from '../helpers/app.js';
import { publisherWithOutlet } from '../helpers/catalog.js';
import { runCli } from '../helpers/cli.js';
import { createTestDatabase } from '../helpers/db.js';
import { bearer, workspaceWithKeys } from '../helpers/fixtures.js';
import { expectLedgerInvariants } from '../helpers/ledger-invariants.js';
import { orderKit } from '../helpers/orders.js';
import { html, startPages } from '../helpers/pages.js';

const database = await createTestDatabase();
const h = await setupApp({}, { database });
afterAll(() => database.drop());

describe('admin CLI: orders and fx', () => {
  it('`orders sweep` applies deadlines that have passed and is idempotent', async () => {
    // Placed 30 days ago by the injected clock: its 72-hour respond_by passed long ago.
    h.clock.set(Date.now() - 30 * 86_400_000);
    const ws = await workspaceWithKeys(database.pool, { balanceCents: 100_000 });
    const p = await publisherWithOutlet(database);
    const res = await h.app.inject({
      method: 'POST',
      url: '/api/v1/orders',
      headers: { ...bearer(ws.spendKey), 'idempotency-key': 'sweep-cli' },
      payload: { offer_ids: [p.offers[0]!.id], target_url: 'https://buyer.example/' },
    });
    expect(res.statusCode).toBe(201);
    const first = await runCli(['orders', 'sweep'], { DATABASE_URL: database.url });
    expect(first.status, first.stderr).toBe(0);
    expect(JSON.parse(first.stdout)).toEqual({ expired: 1, auto_approved: 0, drafts_auto_approved: 0, returned: 0, link_refunded: 0, approvals_expired: 0, oauth_clients_deleted: 0 });
    const again = await runCli(['orders', 'sweep'], { DATABASE_URL: database.url });
    expect(JSON.parse(again.stdout)).toEqual({ expired: 0, auto_approved: 0, drafts_auto_approved: 0, returned: 0, link_refunded: 0, approvals_expired: 0, oauth_clients_deleted: 0 });
    const { rows } = await database.pool.query(`SELECT balance FROM ledger_accounts WHERE workspace_id = $1 AND kind = 'available'`, [ws.workspaceId]);
    expect(rows[0].balance).toBe(100_000);
    await expectLedgerInvariants(database);
  });

  it('`orders check-links` runs the due link checks against the page, once', async () => {
    const domain = 'cli-checked.test';
    const site = await startPages({ '/post': html('<p>Read about <a href="https://buyer.example/">our product</a>.</p>') });
    h.clock.set(Date.now() - 60_000); // the check falls due by the CLI's own clock
    const ws = await workspaceWithKeys(database.pool, { balanceCents: 100_000 });
    const p = await publisherWithOutlet(database, [{ content_by: 'buyer', sponsored_label: false }], domain);
    const id = await orderKit(h).accepted(ws.spendKey, p.publisherKey, p.offers[0]!.id, 'https://buyer.example/');
    const published = await h.app.inject({
      method: 'POST',
      url: `/api/v1/publisher/orders/${id}/publish`,
      headers: bearer(p.publisherKey),
      payload: { live_url: site.url('/post', domain) },
    });
    expect(published.json().data.live_checks).toEqual([]);
    const env = { DATABASE_URL: database.url, OUTBOUND_ALLOW_LOOPBACK: 'true', OUTBOUND_RESOLVE: `${domain}=127.0.0.1` };
    const first = await runCli(['orders', 'check-links'], env);
    expect(first.status, first.stderr).toBe(0);
    expect(JSON.parse(first.stdout)).toEqual({ checked: 1 });
    const { rows } = await database.pool.query('SELECT live_passed, live_checks FROM orders WHERE id = $1', [id]);
    expect(rows[0].live_passed, JSON.stringify(rows[0].live_checks)).toBe(true);
    expect(JSON.parse((await runCli(['orders', 'check-links'], env)).stdout)).toEqual({ checked: 0 });
    expect(site.received).toHaveLength(1);
  });

  it('`orders sweep` refuses unknown flags', async () => {
    const r = await runCli(['orders', 'sweep', '--now', 'x'], { DATABASE_URL: database.url });
    expect(r.status).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
  });

  it('`fx set` refuses a code that is not an ISO 4217 currency', async () => {
    const r = await runCli(['fx', 'set', '--currency', 'XYZ', '--per-usd', '2'], { DATABASE_URL: database.url });
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/currency/);
  });

  it('`fx set` keeps USD at 1 (balances are US cents) and prints the rate as stored', async () => {
    const usd = await runCli(['fx', 'set', '--currency', 'usd', '--per-usd', '2'], { DATABASE_URL: database.url });
    expect(usd.status).toBe(1);
    expect(usd.stderr.trim()).toBe('--per-usd: must be 1 for USD: rates are units of a currency per US dollar');
    expect((await runCli(['fx', 'set', '--currency', 'USD', '--per-usd', '1'], { DATABASE_URL: database.url })).status).toBe(0);
    const eur = await runCli(['fx', 'set', '--currency', 'EUR', '--per-usd', '0.12345678901234567890'], { DATABASE_URL: database.url });
    expect(JSON.parse(eur.stdout)).toEqual({ currency: 'EUR', per_usd: 0.12345679 });
  });
});
