import { type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVENT_WORDS } from '../../src/console/words.js';
import { eventTypes } from '../../src/domain/events/event-types.js';
import { addMember, roleIn } from '../../src/domain/users/memberships.js';
import { createUser } from '../../src/domain/users/user-service.js';
import { createWorkspace, getApprovalRules } from '../../src/domain/workspaces/workspace-service.js';
import { setupApp } from '../helpers/app.js';
import { allowBrowserFlows, checkPage, launchBrowser, NO_BROWSER, requireBrowser, skipBrowser } from './browser-harness.js';

allowBrowserFlows();

// Members, the invite link, approval rules and webhooks in Chromium, as people use them, then
// checked through the API and the database.

if (skipBrowser) console.log(`browser tests skipped: ${NO_BROWSER}`);
const password = 'correct horse battery';

describe.skipIf(skipBrowser)('Console members, rules and webhooks in Chromium — happy', () => {
  let browser: Browser;
  let h: Awaited<ReturnType<typeof setupApp>>;
  let base: string;
  const contexts: BrowserContext[] = [];

  beforeAll(async () => {
    const executablePath = requireBrowser();
    h = await setupApp({ OUTBOUND_ALLOW_LOOPBACK: true, SIGNIN_FAILURES_PER_ADDRESS: 1000 });
    base = await h.app.listen({ port: 0, host: '127.0.0.1' });
    browser = await launchBrowser(executablePath);
  });
  afterAll(async () => {
    await browser?.close();
  });

  async function person() {
    const context = await browser.newContext({ bypassCSP: true, viewport: { width: 1200, height: 800 }, baseURL: base });
    contexts.push(context);
    return context.newPage();
  }
  const nav = (page: Page, name: string) => page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name, exact: true });

  async function signIn(page: Page, email: string) {
    await page.goto('/app/sign-in');
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(/\/app\/w\/\d+$/);
  }

  it('invite an existing account → sign in through the link → roles, the last owner, remove', async () => {
    const ws = await createWorkspace(h.database.pool, { name: 'Browser team' });
    const owner = await createUser(h.database.pool, { email: 'olga@example.com', name: 'Olga Owner', password });
    await addMember(h.database.pool, { workspaceId: ws.id }, owner.id, 'owner');
    const miaUser = await createUser(h.database.pool, { email: 'Mia@Example.com', name: 'Mia Member', password });
    const home = `/app/w/${ws.id}`;
    const olga = await person();
    await signIn(olga, 'olga@example.com');
    await nav(olga, 'Members').click();
    await olga.getByLabel('Email').fill('mia@example.com');
    await olga.getByLabel('Role', { exact: true }).selectOption('member');
    await olga.getByRole('button', { name: 'Invite' }).click();
    const link = await olga.getByLabel('Invitation link').inputValue();
    expect(link).toMatch(/\/app\/invitation\?token=/);

    // Mia has an account (its email in another case): the link shows the one form, as to anyone;
    // once sent, her password signs her in.
    const mia = await person();
    await mia.goto(link);
    await mia.getByLabel('Password').fill('not her password');
    await mia.getByRole('button', { name: 'Continue' }).click();
    await expect.poll(() => mia.getByText('Email or password is wrong.').count()).toBe(1);
    await checkPage(mia, 'invitation-wrong-password');
    await mia.getByLabel('Password').fill(password);
    await mia.getByRole('button', { name: 'Continue' }).click();
    await mia.waitForURL(new RegExp(`${home}$`));
    expect(await roleIn(h.database.pool, miaUser.id, { workspaceId: ws.id })).toBe('member');
    // The link is used up.
    expect((await (await person()).goto(link))!.status()).toBe(409);

    // Olga makes her a viewer; the last-owner rule holds for Olga herself; then she removes Mia.
    await olga.goto(`${home}/settings/members`);
    await checkPage(olga, 'members-with-member');
    await olga.getByLabel('Role of Mia Member', { exact: true }).selectOption('viewer');
    await olga.getByRole('button', { name: 'Change role of Mia Member' }).click();
    await expect.poll(() => olga.getByText('Role changed.').count()).toBe(1);
    expect(await roleIn(h.database.pool, miaUser.id, { workspaceId: ws.id })).toBe('viewer');
    await olga.getByLabel('Role of Olga Owner', { exact: true }).selectOption('member');
    await olga.getByRole('button', { name: 'Change role of Olga Owner' }).click();
    await expect.poll(() => olga.getByText(/at least one owner/).count()).toBe(1);
    await checkPage(olga, 'members-last-owner');
    await olga.getByRole('link', { name: 'Remove Mia Member' }).click();
    await checkPage(olga, 'member-remove');
    await olga.getByRole('button', { name: 'Remove' }).click();
    await expect.poll(() => olga.getByText('Member removed.').count()).toBe(1);
    expect((await mia.goto(home))!.status()).toBe(404);

    // A link for another address, opened by Mia while signed in: it tells her, and offers no button.
    await olga.getByLabel('Email').fill('ned@example.com');
    await olga.getByRole('button', { name: 'Invite' }).click();
    await mia.goto(await olga.getByLabel('Invitation link').inputValue());
    await expect.poll(() => mia.getByText(/this invitation is for ned@example.com/).count()).toBe(1);
    expect(await mia.getByRole('button', { name: 'Join' }).count()).toBe(0);
    await checkPage(mia, 'invitation-other-address');
  });

  it('an owner sets approval rules and manages a webhook (secret once, delivery log)', async () => {
    const ws = await createWorkspace(h.database.pool, { name: 'Rules team' });
    const owner = await createUser(h.database.pool, { email: 'rita@example.com', name: 'Rita Rules', password });
    await addMember(h.database.pool, { workspaceId: ws.id }, owner.id, 'owner');
    const page = await person();
    await signIn(page, 'rita@example.com');
    await nav(page, 'Approval rules').click();
    await page.getByLabel('Maximum order (USD)').fill('300');
    await page.getByLabel('Approve drafts automatically').check();
    await page.getByRole('button', { name: 'Save rules' }).click();
    await expect.poll(() => page.getByText('Approval rules saved.', { exact: false }).count()).toBe(1);
    expect(await getApprovalRules(h.database.pool, ws.id)).toMatchObject({ max_order_cents: 30_000, auto_approve_drafts: true });

    await nav(page, 'Webhooks').click();
    await page.getByLabel('Endpoint URL').fill('http://127.0.0.1:9/hooks');
    // Each event type is labelled in words, with its code beside them.
    await page.getByLabel(`${EVENT_WORDS[eventTypes[0]!]} ${eventTypes[0]!}`, { exact: true }).check();
    await page.getByRole('button', { name: 'Create endpoint' }).click();
    await checkPage(page, 'webhook-created');
    expect(await page.getByLabel('Signing secret').inputValue()).toMatch(/^whsec_/);
    await page.getByRole('link', { name: 'Back to Webhooks' }).click();
    await checkPage(page, 'webhooks-endpoint');
    await page.getByRole('link', { name: 'Deliveries of http://127.0.0.1:9/hooks' }).click();
    await checkPage(page, 'webhook-deliveries');
    await page.getByRole('link', { name: 'Back to Webhooks' }).click();
    await page.getByRole('link', { name: 'Rotate secret of http://127.0.0.1:9/hooks' }).click();
    await checkPage(page, 'webhook-rotate');
    await page.getByRole('button', { name: 'Rotate secret' }).click();
    expect(await page.getByLabel('Signing secret').inputValue()).toMatch(/^whsec_/);
  });
});
