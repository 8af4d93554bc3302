import { type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { topUpWorkspace } from '../../src/domain/workspaces/top-up.js';
import { setupApp } from '../helpers/app.js';
import { outboxLink } from '../helpers/mail.js';
import { publisherWithOutlet } from '../helpers/catalog.js';
import { allowBrowserFlows, checkPage, launchBrowser, NO_BROWSER, requireBrowser, skipBrowser } from './browser-harness.js';

allowBrowserFlows();

// A spending key's budget in Chromium, as a person sets it (docs/console.md, docs/budgets.md):
// created with a daily limit, seen on the key page with what an order spent, changed, cleared;
// each step checked through the API. The unhappy paths are key-budget.test.ts (inject).

if (skipBrowser) console.log(`browser tests skipped: ${NO_BROWSER}`);
const password = 'correct horse battery';

describe.skipIf(skipBrowser)('Console key budgets in Chromium — happy', () => {
  let browser: Browser;
  let h: Awaited<ReturnType<typeof setupApp>>;
  let base: string;

  beforeAll(async () => {
    const executablePath = requireBrowser();
    h = await setupApp({ SIGNUP: 'open', SIGNUPS_PER_ADDRESS_PER_HOUR: 100 });
    h.clock.set(Date.parse('2027-03-10T12:00:00Z'));
    base = await h.app.listen({ port: 0, host: '127.0.0.1' });
    browser = await launchBrowser(executablePath);
  });
  afterAll(async () => {
    await browser?.close();
  });

  const api = (path: string, key: string, init: RequestInit = {}) =>
    fetch(`${base}${path}`, { ...init, headers: { authorization: `Bearer ${key}`, ...(init.headers ?? {}) } });
  const budgetOf = async (key: string) =>
    ((await (await api('/api/v1/me', key)).json()) as { data: { key: { budget: null | { day: null | { limit_cents: number; spent_cents: number } } } } }).data.key.budget;
  /** The key page's row for a window, as its cells read. */
  const windowRow = (page: Page, name: string) => page.getByRole('row', { name: new RegExp(`^${name}`) }).getByRole('cell').allInnerTexts();

  it('create a key with a daily limit, see it on the key page, change it, clear it', async () => {
    const context = await browser.newContext({ bypassCSP: true, viewport: { width: 1200, height: 900 }, baseURL: base });
    const page = await context.newPage();
    await page.goto('/app/sign-up');
    await page.getByLabel('Name').fill('Bea Budget');
    await page.getByLabel('Email').fill('bea@example.com');
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign up' }).click();
    // The address confirmed through the link the sign-up mailed (read from the outbox).
    await page.waitForURL(/\/app\/check-email$/);
    await page.goto(await outboxLink(h.database.pool, 'bea@example.com', 'verify_email'));
    await page.getByRole('button', { name: 'Confirm address' }).click();
    await page.waitForURL(/\/app\/w\/\d+$/);
    const workspaceId = Number(page.url().split('/').pop());
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'API keys', exact: true }).click();

    // The budget fields appear once "Can place orders" is ticked.
    expect(await page.getByLabel('Limit per day (USD)').isVisible()).toBe(false);
    await page.getByLabel('Key name').fill('Shopping agent');
    await page.getByLabel('Can place orders').check();
    await expect.poll(() => page.getByLabel('Limit per day (USD)').isVisible()).toBe(true);
    await page.getByLabel('Limit per day (USD)').fill('50');
    await page.getByLabel('Expires on (optional)').fill('2027-12-31');
    await checkPage(page, 'key-form-budget');
    await page.getByRole('button', { name: 'Create key' }).click();
    const key = await page.getByLabel(/^The new key/).inputValue();
    expect(await budgetOf(key)).toMatchObject({ day: { limit_cents: 5000, spent_cents: 0 }, expires_at: '2027-12-31T00:00:00Z' });

    // An order through the API, then the key page shows what it spent and what is left.
    await topUpWorkspace(h.database.pool, workspaceId, 100_000, h.clock.now());
    const pub = await publisherWithOutlet(h.database, [{ publisher_price_cents: 1_000 }]);
    const offer = pub.offers[0]!;
    const placed = await api('/api/v1/orders', key, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': 'budget-browser-1' },
      body: JSON.stringify({ offer_ids: [offer.id], target_url: 'https://buyer.example/app' }),
    });
    expect(placed.status).toBe(201);
    const usd = (c: number) => `$${(c / 100).toFixed(2)}`;
    await page.getByRole('link', { name: 'Back to API keys' }).click();
    await page.getByRole('link', { name: 'Shopping agent', exact: true }).click();
    await expect.poll(() => page.getByRole('heading', { name: 'Shopping agent' }).count()).toBe(1);
    expect(await windowRow(page, 'Today')).toEqual(['$50.00', usd(offer.price), usd(5000 - offer.price), 'in 12 hours']);
    expect(await windowRow(page, 'This month')).toEqual(['No limit', usd(offer.price), '—', 'in 22 days']);
    expect(await page.getByLabel('Limit per day (USD)').inputValue()).toBe('50.00');
    await checkPage(page, 'key-budget');

    // Change it.
    await page.getByLabel('Limit per day (USD)').fill('75.5');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await expect.poll(() => page.getByText(/^Saved Shopping agent's budget/).count()).toBe(1);
    expect(await windowRow(page, 'Today')).toEqual(['$75.50', usd(offer.price), usd(7550 - offer.price), 'in 12 hours']);
    h.clock.advance(6_000); // the key cache's 5 s, for /me
    expect(await budgetOf(key)).toMatchObject({ day: { limit_cents: 7550, spent_cents: offer.price } });

    // A bad value answers the form again naming the field.
    await page.getByLabel('Limit per day (USD)').fill('-3');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await expect.poll(() => page.getByText(/^Limit per day \(USD\) must be an amount of US dollars/).count()).toBe(1);
    await checkPage(page, 'key-budget-error');

    // Clear it (and the expiry): an empty field is no limit.
    await page.getByLabel('Limit per day (USD)').fill('');
    await page.getByLabel('Expires on').fill('');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await expect.poll(() => page.getByText(/^Saved Shopping agent's budget/).count()).toBe(1);
    expect((await windowRow(page, 'Today')).slice(0, 3)).toEqual(['No limit', usd(offer.price), '—']);
    h.clock.advance(6_000);
    expect(await budgetOf(key)).toBeNull();
    await context.close();
  });
});
