import { type Browser, type BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey } from '../../src/domain/keys/key-service.js';
import { addMember } from '../../src/domain/users/memberships.js';
import { createUser } from '../../src/domain/users/user-service.js';
import { setupApp } from '../helpers/app.js';
import { articleFor, orderKit } from '../helpers/orders.js';
import { allowBrowserFlows, checkPage, launchBrowser, NO_BROWSER, requireBrowser, skipBrowser } from './browser-harness.js';

allowBrowserFlows();

// The console's charts in Chromium (docs/console.md, "Charts"): each page with one passes axe,
// loads under the real content security policy without a single refusal (no inline style or
// script), shows the SVG at its size with its table a click away, and stays within a phone's
// 390 px. The numbers themselves are charts.test.ts (inject).

if (skipBrowser) console.log(`browser tests skipped: ${NO_BROWSER}`);
const password = 'correct horse battery';
const DOMAIN = 'browser-charts.test';
const TARGET = 'https://buyer.example/product';
const HOUR = 3_600_000;

describe.skipIf(skipBrowser)('Console charts in Chromium — happy', () => {
  let browser: Browser;
  let h: Awaited<ReturnType<typeof setupApp>>;
  let base: string;
  const urls: Record<string, string> = {};
  const emails = { buyer: 'chart-buyer@example.com', publisher: 'chart-publisher@example.com' };

  beforeAll(async () => {
    const executablePath = requireBrowser();
    h = await setupApp({ OUTBOUND_ALLOW_LOOPBACK: true, OUTBOUND_RESOLVE: new Map([[DOMAIN, '127.0.0.1']]), SIGNIN_FAILURES_PER_ADDRESS: 1000 });
    const kit = orderKit(h);
    const { ws, p } = await kit.setup([{ content_by: 'buyer', publisher_price_cents: 10_000 }], 10_000_000, DOMAIN);
    const offer = p.offers[0]!;
    const agent = await createKey(h.database.pool, { workspaceId: ws.workspaceId, name: 'Agent', canPlaceOrders: true, limits: { dailyLimitCents: 5 * offer.price } });
    // An order paid two days ago, step by step; two by the agent's key today.
    const start = Date.parse('2027-03-08T09:00:00Z');
    h.clock.set(start);
    const placed = await kit.place(ws.spendKey, { offer_ids: [offer.id], target_url: TARGET, anchor_text: 'our product', content_title: 'Reviewed', content: articleFor(TARGET) });
    const id = placed.json().data[0].id as number;
    h.clock.set(start + HOUR);
    await kit.pub(p.publisherKey, `${id}/accept`);
    h.clock.set(start + 2 * HOUR);
    await kit.pub(p.publisherKey, `${id}/publish`, { live_url: `https://${DOMAIN}/post` });
    h.clock.set(start + 3 * HOUR);
    await kit.verifyLiveLink(id);
    h.clock.set(start + 4 * HOUR);
    expect((await kit.buyer(ws.spendKey, `${id}/approve`)).statusCode).toBe(200);
    h.clock.set(Date.parse('2027-03-10T09:00:00Z'));
    for (let i = 0; i < 2; i++) expect((await kit.place(agent.key, { offer_ids: [offer.id], target_url: TARGET })).statusCode).toBe(201);
    h.clock.set(Date.parse('2027-03-10T12:00:00Z'));

    for (const [who, target] of [
      ['buyer', { workspaceId: ws.workspaceId }],
      ['publisher', { publisherId: p.publisherId }],
    ] as const) {
      const user = await createUser(h.database.pool, { email: emails[who], name: `Chart ${who}`, password });
      await addMember(h.database.pool, target, user.id, 'owner');
    }
    const w = `/app/w/${ws.workspaceId}`;
    const pp = `/app/p/${p.publisherId}`;
    Object.assign(urls, { overview: w, key: `${w}/settings/api-keys/${agent.id}`, desk: `${pp}/orders`, order: `${pp}/orders/${id}` });
    base = await h.app.listen({ port: 0, host: '127.0.0.1' });
    browser = await launchBrowser(executablePath);
  });
  afterAll(async () => {
    await browser?.close();
  });

  /** A signed-in context: `strict` keeps the page's content security policy (axe cannot be injected there). */
  async function signedIn(who: keyof typeof emails, opts: { strict?: boolean; width?: number } = {}): Promise<BrowserContext> {
    const context = await browser.newContext({ bypassCSP: !opts.strict, viewport: { width: opts.width ?? 1200, height: 900 }, baseURL: base });
    const page = await context.newPage();
    await page.goto('/app/sign-in');
    await page.getByLabel('Email').fill(emails[who]);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(/\/app\/[wp]\/\d+$/);
    await page.close();
    return context;
  }

  const charts = [
    { name: 'overview-spending', who: 'buyer', url: () => urls.overview!, chart: 'Spending per day, last 30 days' },
    { name: 'key-spending', who: 'buyer', url: () => urls.key!, chart: 'Spending per day, last 30 days' },
    { name: 'desk-payouts', who: 'publisher', url: () => urls.desk!, chart: 'Payouts per week, last 12 weeks' },
    { name: 'order-timeline', who: 'publisher', url: () => urls.order!, chart: 'Timeline of this order' },
  ] as const;

  it('each chart is an image named by its title, with its table a click away; axe finds nothing serious', async () => {
    const contexts = { buyer: await signedIn('buyer'), publisher: await signedIn('publisher') };
    for (const c of charts) {
      const page = await contexts[c.who].newPage();
      await page.goto(c.url());
      const img = page.getByRole('img', { name: c.chart });
      await expect.poll(() => img.count(), { message: c.name }).toBe(1);
      const box = (await img.boundingBox())!;
      expect(box.width, c.name).toBeGreaterThan(300);
      expect(box.height, c.name).toBeGreaterThan(40);
      // The numbers: hidden until asked for, then a table.
      const table = page.getByRole('table', { name: c.chart });
      expect(await table.isVisible(), c.name).toBe(false);
      await page.getByText(new RegExp(`^The (numbers|steps) of “${c.chart}”`)).click();
      expect(await table.isVisible(), c.name).toBe(true);
      await checkPage(page, c.name);
      await page.close();
    }
  });

  it('under the real content security policy nothing is refused, and at 390 px no chart is wider than the screen', async () => {
    const contexts = { buyer: await signedIn('buyer', { strict: true, width: 390 }), publisher: await signedIn('publisher', { strict: true, width: 390 }) };
    for (const c of charts) {
      const page = await contexts[c.who].newPage();
      const refused: string[] = [];
      page.on('console', (m) => {
        if (/Content Security Policy|Refused to/i.test(m.text())) refused.push(m.text());
      });
      await page.goto(c.url());
      const img = page.getByRole('img', { name: c.chart });
      await expect.poll(() => img.count(), { message: c.name }).toBe(1);
      const box = (await img.boundingBox())!;
      expect(box.x + box.width, c.name).toBeLessThanOrEqual(390);
      expect(refused, c.name).toEqual([]);
      await page.close();
    }
  });
});
