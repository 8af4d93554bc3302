import { describe, expect, it } from 'vitest';
import { updateKey } from '../../src/domain/keys/key-service.js';
import { createBrandKit } from '../../src/domain/workspaces/brand-kits.js';
import { setApprovalRules } from '../../src/domain/workspaces/workspace-service.js';
import { meData } from '../../src/schemas/me.js';
import { setupApp } from '../helpers/app.js';
import { bearer, workspaceWithKeys } from '../helpers/fixtures.js';

// No errors block: GET /api/v1/me takes no input (a wrong method is in errors.test.ts); its 401s are in test/http/security.test.ts, which walks every route.

const h = await setupApp();

describe('GET /api/v1/me — happy', () => {
  it('describes the workspace, balances and key for a read-only key', async () => {
    const ws = await workspaceWithKeys(h.database.pool, { balanceCents: 123_456 });
    const res = await h.app.inject({ method: 'GET', url: '/api/v1/me', headers: bearer(ws.readKey) });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(meData.parse(body.data)).toBeTruthy();
    expect(body.data.workspace.id).toBe(ws.workspaceId);
    expect(body.data.balance).toBe(123_456);
    expect(body.data.balance_formatted).toBe('$1,234.56');
    expect(body.data.held).toBe(0);
    expect(body.data.held_formatted).toBe('$0.00');
    expect(body.data.key).toMatchObject({ id: ws.readKeyId, can_place_orders: false, needs_approval: false, abilities: ['read', 'plan', 'manage_content', 'manage_webhooks'] });
    expect(body.data.key.prefix).toMatch(/^mk_/);
    expect(body.data.workspace.approval_rules).toEqual({ max_order_cents: null, approval_above_cents: null, auto_approve_drafts: false });
  });

  it('formats amounts in the workspace currency by its FX rate (EUR)', async () => {
    const ws = await workspaceWithKeys(h.database.pool, { currency: 'EUR', balanceCents: 100_000 });
    const res = await h.app.inject({ method: 'GET', url: '/api/v1/me', headers: bearer(ws.spendKey) });
    const body = res.json();
    expect(body.data.workspace.currency).toBe('EUR');
    expect(body.data.balance).toBe(100_000); // cents stay US cents
    expect(body.data.balance_formatted).toBe('€920.00'); // 1,000 USD × 0.92
    expect(body.data.key.abilities).toEqual(['read', 'plan', 'manage_content', 'place_orders', 'approve_placements', 'manage_webhooks']);
  });

  it('formats JPY without minor units', async () => {
    const ws = await workspaceWithKeys(h.database.pool, { currency: 'JPY', balanceCents: 1_000 });
    const res = await h.app.inject({ method: 'GET', url: '/api/v1/me', headers: bearer(ws.readKey) });
    expect(res.json().data.balance_formatted).toBe('¥1,495');
  });

  it('lists brand kits and approval rules', async () => {
    const ws = await workspaceWithKeys(h.database.pool);
    await createBrandKit(h.database.pool, ws.workspaceId, { name: 'Acme', website: 'https://acme.example', anchorTexts: ['acme'] });
    await setApprovalRules(h.database.pool, ws.workspaceId, { maxOrderCents: 50_000, approvalAboveCents: 20_000, autoApproveDrafts: true });
    const res = await h.app.inject({ method: 'GET', url: '/api/v1/me', headers: bearer(ws.readKey) });
    const body = res.json();
    expect(body.data.brand_kits).toEqual([
      { id: expect.any(Number), name: 'Acme', website: 'https://acme.example', description: null, tone: null, default_anchor_texts: ['acme'] },
    ]);
    expect(body.data.workspace.approval_rules).toEqual({ max_order_cents: 50_000, approval_above_cents: 20_000, auto_approve_drafts: true });
  });

  it("shows whether the key's spending waits for a person's approval", async () => {
    const ws = await workspaceWithKeys(h.database.pool);
    const me = async (key: string) => (await h.app.inject({ method: 'GET', url: '/api/v1/me', headers: bearer(key) })).json().data;
    expect((await me(ws.spendKey)).key).toMatchObject({ can_place_orders: true, needs_approval: false });
    const other = await workspaceWithKeys(h.database.pool);
    await updateKey(h.database.pool, other.spendKeyId, { needsApproval: true });
    const data = await me(other.spendKey);
    expect(meData.parse(data)).toBeTruthy();
    expect(data.key).toMatchObject({ id: other.spendKeyId, can_place_orders: true, needs_approval: true });
  });

  it('sends rate-limit headers and a request id', async () => {
    const ws = await workspaceWithKeys(h.database.pool);
    const res = await h.app.inject({ method: 'GET', url: '/api/v1/me', headers: bearer(ws.readKey) });
    expect(res.headers['x-ratelimit-limit']).toBe('120');
    expect(Number(res.headers['x-ratelimit-remaining'])).toBe(119);
    expect(res.headers['x-request-id']).toBeTruthy();
  });
});

describe('GET /api/v1/me — security', () => {
  it('never shows one workspace the balance of another', async () => {
    const a = await workspaceWithKeys(h.database.pool, { balanceCents: 111 });
    const b = await workspaceWithKeys(h.database.pool, { balanceCents: 222 });
    const ra = await h.app.inject({ method: 'GET', url: '/api/v1/me', headers: bearer(a.readKey) });
    const rb = await h.app.inject({ method: 'GET', url: '/api/v1/me', headers: bearer(b.readKey) });
    expect(ra.json().data.balance).toBe(111);
    expect(rb.json().data.balance).toBe(222);
  });
});
