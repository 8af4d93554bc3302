import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey } from '../../src/domain/keys/key-service.js';
import { addMember } from '../../src/domain/users/memberships.js';
import { createUser } from '../../src/domain/users/user-service.js';
import { setupApp } from '../helpers/app.js';
import { expectLedgerInvariants } from '../helpers/ledger-invariants.js';
import { orderKit } from '../helpers/orders.js';
import { allowBrowserFlows, checkPage, launchBrowser, NO_BROWSER, requireBrowser, skipBrowser } from './browser-harness.js';

allowBrowserFlows();

// An approval request in Chromium, as it happens: an agent's key that needs a person asks through
// the API (202 and an approve_url); the owner opens that link, signs in, reads the request and
// clicks "Approve"; the API then shows the request approved and its order. Then the same through
// MCP (quote, confirm, approval_pending, approved in the browser, get-approval-request). The
// refusals are approvals.test.ts (inject) and test/mcp/approvals.test.ts.

if (skipBrowser) console.log(`browser tests skipped: ${NO_BROWSER}`);
const password = 'correct horse battery';
const TARGET = 'https://buyer.example/app';

describe.skipIf(skipBrowser)('Console approval requests in Chromium — happy', () => {
  let browser: Browser;
  let h: Awaited<ReturnType<typeof setupApp>>;
  let base: string;

  beforeAll(async () => {
    const executablePath = requireBrowser();
    h = await setupApp({ SIGNIN_FAILURES_PER_ADDRESS: 1000 });
    base = await h.app.listen({ port: 0, host: '127.0.0.1' });
    browser = await launchBrowser(executablePath);
  });
  afterAll(async () => {
    await browser?.close();
  });

  const api = (path: string, key: string, init: RequestInit = {}) =>
    fetch(`${base}${path}`, { ...init, headers: { authorization: `Bearer ${key}`, ...(init.headers ?? {}) } });

  it('the agent asks (202, and through MCP approval_pending), the owner opens the approve link, signs in and approves; the API and get-approval-request show the order', async () => {
    const kit = orderKit(h);
    const { ws, p } = await kit.setup([{ publisher_price_cents: 10_000 }], 500_000);
    const agent = await createKey(h.database.pool, { workspaceId: ws.workspaceId, canPlaceOrders: true, name: 'Research agent' });
    await h.database.pool.query('UPDATE api_keys SET needs_approval = true WHERE id = $1', [agent.id]);
    const owner = await createUser(h.database.pool, { email: 'olga@example.com', name: 'Olga Owner', password });
    await addMember(h.database.pool, { workspaceId: ws.workspaceId }, owner.id, 'owner');

    // The agent asks: nothing is placed, a person must approve.
    const asked = await api('/api/v1/orders', agent.key, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': 'ask-1' },
      body: JSON.stringify({ offer_ids: [p.offers[0]!.id], target_url: TARGET, anchor_text: 'our app' }),
    });
    expect(asked.status).toBe(202);
    const request = ((await asked.json()) as { data: { id: number; approve_url: string } }).data;
    const path = new URL(request.approve_url).pathname;
    expect(path).toBe(`/app/w/${ws.workspaceId}/approvals/${request.id}`);

    // The owner opens the link: sign in first, then the request's page.
    const context = await browser.newContext({ bypassCSP: true, viewport: { width: 1200, height: 900 }, baseURL: base });
    const page = await context.newPage();
    await page.goto(path);
    await page.waitForURL(/\/app\/sign-in\?next=/);
    await page.getByLabel('Email').fill('olga@example.com');
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(new RegExp(`${path}$`));
    await expect.poll(() => page.getByRole('heading', { name: /^Approve an order on / }).count()).toBe(1);
    await expect.poll(() => page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Approvals (1 waiting)' }).count()).toBe(1);
    await expect.poll(() => page.getByText('API key “Research agent”').count()).toBe(1);
    await expect.poll(() => page.getByText('Available balance after').count()).toBe(1);
    await checkPage(page, 'approval-request');
    await page.getByRole('button', { name: 'Approve', exact: true }).click();
    await page.waitForURL(/\?done=approved$/);
    await expect.poll(() => page.getByText('Approved: the orders below are placed').count()).toBe(1);
    await checkPage(page, 'approval-approved');

    // The API shows the request approved, and its order.
    const got = (await (await api(`/api/v1/approval-requests/${request.id}`, ws.readKey)).json()) as { data: { status: string; order_ids: number[] } };
    expect(got.data.status).toBe('approved');
    expect(got.data.order_ids).toHaveLength(1);
    const orderId = got.data.order_ids[0]!;
    const order = (await (await api(`/api/v1/orders/${orderId}`, ws.readKey)).json()) as { data: { id: number; status: string; target_url: string } };
    expect(order.data).toMatchObject({ id: orderId, status: 'awaiting_acceptance', target_url: TARGET });

    // The request's page links the order, whose page says who approved it.
    await page.getByRole('link', { name: `Order ${orderId}`, exact: true }).click();
    await expect.poll(() => page.getByText(/^Approved by Olga Owner /).count()).toBe(1);

    // The same through MCP: quote → confirm → approval_pending → approved in the browser → get-approval-request.
    const mcp = new Client({ name: 'browser-approvals', version: '1.0.0' });
    await mcp.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${agent.key}` } } }));
    try {
      const call = async <T>(name: string, args: Record<string, unknown>) => {
        const result = (await mcp.callTool({ name, arguments: args })) as CallToolResult;
        expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
        return result.structuredContent as T;
      };
      const args = { offer_ids: [p.offers[0]!.id], target_url: TARGET, anchor_text: 'our app, through MCP' };
      const quote = await call<{ quote: { approval: { required: boolean } }; confirmation_token: string }>('place-orders', args);
      expect(quote.quote.approval.required).toBe(true);
      const pending = await call<{ status: string; approve_url: string; approval_request: { id: number } }>('place-orders', {
        ...args,
        confirmation_token: quote.confirmation_token,
      });
      expect(pending.status).toBe('approval_pending');
      await page.goto(new URL(pending.approve_url).pathname);
      await page.getByRole('button', { name: 'Approve', exact: true }).click();
      await page.waitForURL(/\?done=approved$/);
      const now = await call<{ approval_request: { status: string; order_ids: number[] } }>('get-approval-request', { approval_request_id: pending.approval_request.id });
      expect(now.approval_request.status).toBe('approved');
      expect(now.approval_request.order_ids).toHaveLength(1);
      const placed = await call<{ order: { id: number; status: string } }>('get-order', { order_id: now.approval_request.order_ids[0] });
      expect(placed.order.status).toBe('awaiting_acceptance');
    } finally {
      await mcp.close();
    }
    await expectLedgerInvariants(h.database);
  }, 180_000);
});
