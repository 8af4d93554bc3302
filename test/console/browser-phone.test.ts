import { type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setupApp } from '../helpers/app.js';
import { type ConsoleDemo, consoleDemoConfig, seedConsoleDemo } from '../helpers/console-demo.js';
import { allowBrowserFlows, checkPage, launchBrowser, NO_BROWSER, requireBrowser, skipBrowser } from './browser-harness.js';

allowBrowserFlows();

// The console on a phone: Chromium at 390 px (an iPhone's width), signed in as the demo's owner
// of a workspace and of a publisher account, with orders, an approval request, keys, a webhook
// endpoint and members (test/helpers/console-demo.ts). No page may scroll sideways, the menu's
// groups lead everywhere, and axe-core finds nothing serious at this width either. One browser,
// one context: the same phone walks every page.

if (skipBrowser) console.log(`browser tests skipped: ${NO_BROWSER}`);

// What the checks below read of the page, run in the browser (the project compiles without the DOM's types).
interface PageElement {
  open: boolean;
  textContent: string | null;
  getAttribute(name: string): string | null;
  getBoundingClientRect(): { width: number };
}
declare const document: {
  documentElement: { scrollWidth: number };
  querySelectorAll(selector: string): ArrayLike<PageElement> & Iterable<PageElement>;
  createRange(): { selectNodeContents(node: PageElement): void; getClientRects(): Iterable<{ top: number }> };
};

const PHONE = { width: 390, height: 844 };
/** Saved as docs/console/phone-<name>.png under CONSOLE_SCREENSHOTS=1; docs/console.md shows them. */
const SHOWN = new Set(['overview', 'orders', 'order', 'api-keys', 'desk-orders', 'outlet']);

describe.skipIf(skipBrowser)('Console at 390 px in Chromium', () => {
  let browser: Browser;
  let page: Page;
  let h: Awaited<ReturnType<typeof setupApp>>;
  let demo: ConsoleDemo;

  beforeAll(async () => {
    const executablePath = requireBrowser();
    h = await setupApp({ ...consoleDemoConfig, SIGNIN_FAILURES_PER_ADDRESS: 1000 });
    demo = await seedConsoleDemo(h.app, h.database.pool, { feeRate: h.config.FEE_RATE, clock: h.clock });
    const base = await h.app.listen({ port: 0, host: '127.0.0.1' });
    browser = await launchBrowser(executablePath);
    // A phone: the meta viewport is honoured and taps are touches. The CSP is bypassed only so
    // that axe can be injected (browser.test.ts checks the CSP itself).
    const context = await browser.newContext({ viewport: PHONE, isMobile: true, hasTouch: true, bypassCSP: true, baseURL: base });
    page = await context.newPage();
  });
  afterAll(async () => {
    await browser?.close();
  });

  /**
   * How much wider than the phone the document is (0 or less: it fits), with every <details>
   * closed, then opened. Against the phone's width, not innerWidth: a phone zooms out to show a
   * page wider than its meta viewport, and innerWidth grows with it.
   */
  const overflow = () =>
    page.evaluate((width) => {
      const d = document.documentElement;
      const closed = d.scrollWidth - width;
      for (const details of document.querySelectorAll('details')) details.open = true;
      const opened = d.scrollWidth - width;
      for (const details of document.querySelectorAll('details')) details.open = false;
      return { closed, opened };
    }, PHONE.width);

  describe('every page — happy', () => {
    it('no page a signed-in owner and publisher reaches is wider than the phone, with its menus closed or open; axe finds nothing serious', async () => {
      const tooWide: string[] = [];
      const visit = async (name: string, path: string, status = 200) => {
        const res = await page.goto(path);
        expect(res?.status(), `${name} (${path})`).toBe(status);
        const o = await overflow();
        if (o.closed > 0 || o.opened > 0) tooWide.push(`${name} (${path}): ${o.closed} px wider, ${o.opened} px with its menus open`);
        await checkPage(page, `phone-${name}`, { save: SHOWN.has(name) });
      };
      for (const p of demo.pages.filter((p) => p.signedOut)) await visit(p.name, p.path);
      await page.getByLabel('Email').fill(demo.user.email);
      await page.getByLabel('Password').fill(demo.user.password);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL(/\/app\/[wp]\/\d+$/);
      for (const p of demo.pages.filter((p) => !p.signedOut)) await visit(p.name, p.path, p.name === 'not-found' ? 404 : 200);
      // The pages that answer a form: a new key, shown once with its curl line.
      await page.goto(`/app/w/${demo.workspaceId}/settings/api-keys`);
      await page.getByLabel('Key name').fill('Phone key');
      await page.getByRole('button', { name: 'Create key' }).click();
      await expect.poll(() => page.getByLabel('Try it').count()).toBe(1);
      const shown = await overflow();
      if (shown.closed > 0) tooWide.push(`key-shown: ${shown.closed} px wider`);
      expect(tooWide).toEqual([]);
    });
  });

  describe('the navigation — happy', () => {
    it('is one "Menu" naming the section; opened, its groups lead to each section', async () => {
      await page.goto(`/app/w/${demo.workspaceId}/orders`);
      const nav = page.getByRole('navigation', { name: 'Console' });
      const menu = nav.locator('summary');
      await expect.poll(() => menu.textContent()).toMatch(/^Menu\s*· Orders$/);
      // Closed, no section link shows (the nine links are not a row across the phone).
      expect(await nav.getByRole('link', { name: 'API keys' }).isVisible()).toBe(false);
      await menu.click();
      for (const name of ['Developers', 'Workspace']) expect(await nav.getByText(name, { exact: true }).isVisible()).toBe(true);
      await checkPage(page, 'phone-menu', { save: true });
      await nav.getByRole('link', { name: 'API keys' }).click();
      await page.waitForURL(/\/settings\/api-keys$/);
      await expect.poll(() => menu.textContent()).toMatch(/· API keys$/);
      expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('API keys');
    });

    it('on a wide screen the groups are a sidebar, always open: no "Menu" to press', async () => {
      await page.setViewportSize({ width: 1200, height: 800 });
      try {
        await page.goto(`/app/w/${demo.workspaceId}`);
        const nav = page.getByRole('navigation', { name: 'Console' });
        expect(await nav.locator('summary').isVisible()).toBe(false);
        for (const name of ['Overview', 'Orders', 'API keys', 'Webhooks', 'Members', 'Notifications']) {
          expect(await nav.getByRole('link', { name, exact: true }).isVisible(), name).toBe(true);
        }
        // Beside the page, not above it.
        const navBox = (await nav.boundingBox())!;
        const mainBox = (await page.locator('main').boundingBox())!;
        expect(navBox.x + navBox.width).toBeLessThanOrEqual(mainBox.x);
      } finally {
        await page.setViewportSize(PHONE);
      }
    });
  });

  describe('a tablet held upright — happy', () => {
    it('at 800 px the menu and the stacked rows serve too: the widest tables fit', async () => {
      await page.setViewportSize({ width: 800, height: 1000 });
      try {
        for (const name of ['orders', 'api-keys', 'webhook-deliveries', 'desk-orders']) {
          await page.goto(demo.pages.find((p) => p.name === name)!.path);
          expect(await page.evaluate(() => document.documentElement.scrollWidth), name).toBeLessThanOrEqual(800);
          expect(await page.getByRole('navigation', { name: 'Console' }).locator('summary').isVisible(), name).toBe(true);
        }
      } finally {
        await page.setViewportSize(PHONE);
      }
    });
  });

  describe('tables — happy', () => {
    it('become stacked rows, each value named by its column; dates stay on one line', async () => {
      await page.goto(`/app/w/${demo.workspaceId}/orders`);
      const cells = await page.evaluate(() =>
        [...document.querySelectorAll('main tbody td')].filter((td) => td.textContent!.trim()).map((td) => {
          const range = document.createRange();
          range.selectNodeContents(td);
          const lines = new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size;
          return { label: td.getAttribute('data-label'), text: td.textContent!.trim(), lines, width: td.getBoundingClientRect().width };
        }),
      );
      expect(cells.length).toBeGreaterThan(10);
      // A row is a card: every cell as wide as the card, not a column.
      for (const c of cells) expect(c.width).toBeGreaterThan(300);
      // Named by the column headers (console.js copies them into data-label).
      for (const c of cells) expect(c.label, c.text).toBeTruthy();
      expect(cells.map((c) => c.label)).toEqual(expect.arrayContaining(['Order', 'State', 'Updated']));
      const dates = cells.filter((c) => c.label === 'Updated' || (c.label === 'Next deadline' && c.text));
      expect(dates.length).toBeGreaterThan(5);
      for (const d of dates) expect(d.lines, `${d.label}: ${d.text}`).toBe(1);
    });
  });
});
