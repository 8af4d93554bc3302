import { type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { topUpWorkspace } from '../../src/domain/workspaces/top-up.js';
import { setPassword } from '../../src/domain/users/user-service.js';
import { createKey } from '../../src/domain/keys/key-service.js';
import { setupApp } from '../helpers/app.js';
import { outboxLink } from '../helpers/mail.js';
import { publisherWithOutlet } from '../helpers/catalog.js';
import { allowBrowserFlows, checkPage, executablePath, launchBrowser, NO_BROWSER, skipBrowser } from './browser-harness.js';

allowBrowserFlows();

// The console driven by Chromium as a person would, then checked through the API (the system's
// Chromium: browser-harness.ts). One browser for the file, a fresh context (cookies) per person.

if (skipBrowser) console.log(`browser tests skipped: ${NO_BROWSER}`);
const password = 'correct horse battery';

describe.skipIf(skipBrowser)('Console pages in Chromium', () => {
  let browser: Browser;
  let h: Awaited<ReturnType<typeof setupApp>>;
  let base: string;
  const contexts: BrowserContext[] = [];

  beforeAll(async () => {
    if (!executablePath) return; // CI=true: the first test says why, and every test fails
    h = await setupApp({ SIGNUP: 'open', SIGNIN_FAILURES_PER_ACCOUNT: 3, SIGNUPS_PER_ADDRESS_PER_HOUR: 100 });
    base = await h.app.listen({ port: 0, host: '127.0.0.1' });
    browser = await launchBrowser(executablePath);
  });
  afterAll(async () => {
    await browser?.close();
  });

  /** A person's browser: its own cookies; the CSP bypassed so axe can be injected. */
  async function person(opts: { bypassCSP?: boolean } = {}) {
    const context = await browser.newContext({ bypassCSP: opts.bypassCSP ?? true, viewport: { width: 1200, height: 800 }, baseURL: base });
    contexts.push(context);
    return context.newPage();
  }

  const check = checkPage;

  let people = 0;
  /**
   * Signs up, then opens the link the sign-up mailed (read from the outbox: these tests send no
   * mail) and confirms the address: until then the console shows only "Check your email".
   */
  async function signUp(page: Page, name = 'Ana Lima', opts: { check?: boolean } = {}) {
    const email = `browser${++people}@example.com`;
    await page.goto('/app/sign-up');
    await page.getByLabel('Name').fill(name);
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign up' }).click();
    await page.waitForURL(/\/app\/check-email$/);
    if (opts.check) await check(page, 'check-email');
    await page.goto(await outboxLink(h.database.pool, email, 'verify_email'));
    if (opts.check) await check(page, 'verify-email');
    await page.getByRole('button', { name: 'Confirm address' }).click();
    await page.waitForURL(/\/app\/w\/\d+$/);
    return { email, home: new URL(page.url()).pathname, workspaceId: Number(page.url().split('/').pop()) };
  }

  /** A link of the console's section navigation. */
  const nav = (page: Page, name: string) => page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name, exact: true });

  const api = (path: string, key: string, init: RequestInit = {}) =>
    fetch(`${base}${path}`, { ...init, headers: { authorization: `Bearer ${key}`, ...(init.headers ?? {}) } });
  const newKey = (page: Page) => page.getByLabel(/^The new key/).inputValue();

  describe('sign-up, keys, orders, the keyboard — happy', () => {
    it('has a Chromium to drive', () => {
      expect(executablePath, `CI=true and ${NO_BROWSER}`).toBeDefined();
    });

    it('sign-up → spending key → /me and an order → revoke → 401; roll → old key until its time', async () => {
      const page = await person();
      await page.goto('/app/sign-in');
      await check(page, 'sign-in');
      await page.getByRole('link', { name: 'Sign up' }).click();
      await check(page, 'sign-up');
      const { home, workspaceId } = await signUp(page, 'Ana Lima', { check: true });
      await check(page, 'overview');
      await nav(page, 'Settings').click();
      await check(page, 'settings');
      await nav(page, 'API keys').click();
      await check(page, 'api-keys-empty');

      await page.getByLabel('Key name').fill('Checkout bot');
      await page.getByLabel('Can place orders').check();
      await page.getByRole('button', { name: 'Create key' }).click();
      await expect.poll(() => page.getByRole('heading', { name: 'Your new key' }).count()).toBe(1);
      await check(page, 'key-created');
      const key = await newKey(page);
      expect(await page.getByLabel('Try it').inputValue()).toContain(`Authorization: Bearer ${key}`);

      const me = await api('/api/v1/me', key);
      expect(me.status).toBe(200);
      expect(((await me.json()) as { data: { key: { can_place_orders: boolean } } }).data.key.can_place_orders).toBe(true);
      // An order, paid from a top-up (an operator's action).
      await topUpWorkspace(h.database.pool, workspaceId, 100_000, h.clock.now());
      const pub = await publisherWithOutlet(h.database);
      const order = await api('/api/v1/orders', key, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': 'browser-order-1' },
        body: JSON.stringify({ offer_ids: [pub.offers[0]!.id], target_url: 'https://buyer.example/app', anchor_text: 'our app' }),
      });
      expect(order.status).toBe(201);

      await page.getByRole('link', { name: 'Back to API keys' }).click();
      await check(page, 'api-keys');
      await page.getByRole('link', { name: /^Revoke Checkout bot/ }).click();
      await check(page, 'key-revoke');
      await page.getByRole('button', { name: 'Revoke' }).click();
      await expect.poll(() => page.getByText(/Revoked Checkout bot/).count()).toBe(1);
      h.clock.advance(6_000); // the key cache's 5 s
      expect((await api('/api/v1/me', key)).status).toBe(401);

      // Roll: the old key keeps working for the chosen hours, the new one works at once.
      await page.getByLabel('Key name').fill('Reporting');
      await page.getByRole('button', { name: 'Create key' }).click();
      const old = await newKey(page);
      await page.goto(`${home}/settings/api-keys`);
      await page.getByRole('link', { name: /^Roll Reporting/ }).click();
      await check(page, 'key-roll');
      await page.getByLabel('Hours the old key keeps working').fill('1');
      await page.getByRole('button', { name: 'Roll' }).click();
      const rolled = await newKey(page);
      expect(rolled).not.toBe(old);
      expect((await api('/api/v1/me', rolled)).status).toBe(200);
      expect((await api('/api/v1/me', old)).status).toBe(200);
      h.clock.advance(3_600_000 + 1_000);
      expect((await api('/api/v1/me', old)).status).toBe(401);
      expect((await api('/api/v1/me', rolled)).status).toBe(200);
    });

    it('a seller generates an Interface B key that answers /api/account/details', async () => {
      const page = await person();
      await signUp(page, 'Sam Seller');
      await nav(page, 'API access').click();
      await check(page, 'api-access');
      await page.getByLabel('Key name').fill('My shop');
      await page.getByRole('button', { name: 'Generate key' }).click();
      const key = await newKey(page);
      const res = await fetch(`${base}/api/account/details?api_key=${key}`);
      expect(res.status).toBe(200);
      await page.getByRole('link', { name: 'Back to API access' }).click();
      await expect.poll(() => page.getByText(key.slice(0, 8)).count()).toBeGreaterThan(0);
    });

    it('invite a member → accept → the member sees the orders, no "Can place orders" box, and a forged spending key is 403', async () => {
      const owner = await person();
      const { home, workspaceId } = await signUp(owner, 'Olga Owner');
      // An order in the workspace, placed through the API.
      await topUpWorkspace(h.database.pool, workspaceId, 100_000, h.clock.now());
      const pub = await publisherWithOutlet(h.database);
      const spend = await createKey(h.database.pool, { workspaceId, canPlaceOrders: true, name: 'Owner bot' });
      const placed = await api('/api/v1/orders', spend.key, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': 'browser-order-2' },
        body: JSON.stringify({ offer_ids: [pub.offers[0]!.id], target_url: 'https://buyer.example/app', anchor_text: 'our app' }),
      });
      expect(placed.status).toBe(201);
      const orderId = ((await placed.json()) as { data: Array<{ id: number }> }).data[0]!.id;

      await nav(owner, 'Approval rules').click();
      await check(owner, 'approval-rules');
      await nav(owner, 'Webhooks').click();
      await check(owner, 'webhooks');
      await nav(owner, 'Members').click();
      await check(owner, 'members');
      const invitee = `invitee${++people}@example.com`;
      await owner.getByLabel('Email').fill(invitee);
      await owner.getByLabel('Role', { exact: true }).selectOption('member');
      await owner.getByRole('button', { name: 'Invite' }).click();
      await check(owner, 'invite-link');
      const link = await owner.getByLabel('Invitation link').inputValue();

      const member = await person();
      await member.goto(link);
      await check(member, 'invitation');
      // No account: the form mails the address a link, which sets the name and password and joins.
      await member.getByRole('button', { name: 'Continue' }).click();
      await expect.poll(() => member.getByRole('heading', { name: 'Check your email' }).count()).toBe(1);
      await check(member, 'invitation-mailed');
      await member.goto(await outboxLink(h.database.pool, invitee, 'invitation_proof'));
      await check(member, 'invitation-finish');
      await member.getByLabel('Name').fill('Mia Member');
      await member.getByLabel('Password').fill(password);
      await member.getByRole('button', { name: 'Join' }).click();
      await member.waitForURL(new RegExp(`${home}$`));
      // The member sees the workspace's orders (the overview links each to its page).
      await expect.poll(() => member.getByRole('link', { name: `Order ${orderId}`, exact: true }).count()).toBeGreaterThan(0);
      await nav(member, 'API keys').click();
      expect(await member.getByLabel('Can place orders').count()).toBe(0);
      const csrf = await member.locator('input[name="_csrf"]').first().inputValue();
      const forged = await member.context().request.post(`${home}/settings/api-keys`, { form: { _csrf: csrf, name: 'sneaky', can_place_orders: '1' }, maxRedirects: 0 });
      expect(forged.status()).toBe(403);
      await member.getByLabel('Key name').fill('Member read key');
      await member.getByRole('button', { name: 'Create key' }).click();
      const readKey = await newKey(member);
      expect(((await (await api('/api/v1/me', readKey)).json()) as { data: { key: { can_place_orders: boolean } } }).data.key.can_place_orders).toBe(false);
    });

    it('forgot password → the mailed link → a new password → signed in, the old password refused', async () => {
      const setup = await person();
      const { email, home } = await signUp(setup, 'Fran Forgot');
      const page = await person();
      await page.goto('/app/sign-in');
      await page.getByRole('link', { name: 'Forgot password?' }).click();
      await check(page, 'forgot-password');
      await page.getByLabel('Email').fill(email);
      await page.getByRole('button', { name: 'Send reset link' }).click();
      await expect.poll(() => page.getByText('we sent it a link to set a new password').count()).toBe(1);
      await check(page, 'forgot-password-sent');
      await page.goto(await outboxLink(h.database.pool, email, 'reset_password'));
      await check(page, 'reset-password');
      await page.getByLabel('New password').fill('a brand new passphrase');
      await page.getByRole('button', { name: 'Set password' }).click();
      await page.waitForURL(new RegExp(`${home}$`));
      // The session that signed up ended with the old password.
      await setup.goto(home);
      expect(new URL(setup.url()).pathname).toBe('/app/sign-in');
      await setup.getByLabel('Email').fill(email);
      await setup.getByLabel('Password').fill(password);
      await setup.getByRole('button', { name: 'Sign in' }).click();
      await expect.poll(() => setup.getByText('Email or password is wrong.').count()).toBe(1);
    });

    it('works with the keyboard alone: sign in, reach API keys, create a key', async () => {
      const setup = await person();
      const { email } = await signUp(setup, 'Kim Keys');
      const page = await person();
      /** Presses Tab until the focused element is the one named, as a keyboard user would. */
      const tabTo = async (name: string) => {
        for (let i = 0; i < 40; i++) {
          await page.keyboard.press('Tab');
          // The focused element's label (a field) or text (a link or button); no DOM types in this project.
          const focused = await page.evaluate(() => {
            type Focused = { textContent: string | null; labels?: ArrayLike<{ textContent: string | null }> | null };
            const el = (globalThis as unknown as { document: { activeElement: Focused | null } }).document.activeElement;
            return (el?.labels?.[0]?.textContent ?? el?.textContent ?? '').trim();
          });
          if (focused === name) return;
        }
        throw new Error(`Tab never reached ${name}`);
      };
      await page.goto('/app/sign-in');
      await tabTo('Email');
      await page.keyboard.type(email);
      await tabTo('Password');
      await page.keyboard.type(password);
      await page.keyboard.press('Enter');
      await page.waitForURL(/\/app\/w\/\d+$/);
      await tabTo('API keys');
      await page.keyboard.press('Enter');
      await page.waitForURL(/\/settings\/api-keys$/);
      await tabTo('Key name');
      await page.keyboard.type('Typed key');
      await tabTo('Create key');
      await page.keyboard.press('Enter');
      expect((await api('/api/v1/me', await newKey(page))).status).toBe(200);
    });
  });

  describe('sign-in limits, sessions, tokens, tenants, CSP — security', () => {
    it('sign-in: one message for any wrong pair, then 429 for the account from that address', async () => {
      const page = await person();
      const { email } = await signUp(page);
      const other = await person();
      const attempt = async (pw: string) => {
        await other.goto('/app/sign-in');
        await other.getByLabel('Email').fill(email);
        await other.getByLabel('Password').fill(pw);
        const [res] = await Promise.all([other.waitForResponse((r) => r.request().method() === 'POST'), other.getByRole('button', { name: 'Sign in' }).click()]);
        return res;
      };
      for (let i = 0; i < 3; i++) {
        expect((await attempt('wrong password')).status()).toBe(401);
        await expect.poll(() => other.getByText('Email or password is wrong.').count()).toBe(1);
      }
      const blocked = await attempt(password);
      expect(blocked.status()).toBe(429);
      expect(Number(blocked.headers()['retry-after'])).toBeGreaterThan(0);
      await check(other, 'sign-in-limited');
    });

    it('a password change ends the session', async () => {
      const page = await person();
      const { email, home } = await signUp(page);
      const { rows } = await h.database.pool.query<{ id: number }>('SELECT id FROM users WHERE email = $1', [email]);
      await setPassword(h.database.pool, rows[0]!.id, 'a brand new password');
      await page.goto(home);
      expect(new URL(page.url()).pathname).toBe('/app/sign-in');
    });

    it('a form without its CSRF token is 403; another tenant is 404', async () => {
      const a = await person();
      const b = await person();
      const { home: aHome } = await signUp(a);
      await signUp(b);
      // The same cookies as the page, a form post without `_csrf`, as another site would send it.
      const forged = await b.context().request.post(`${aHome}/settings/api-keys`, { form: { name: 'x' }, maxRedirects: 0 });
      expect(forged.status()).toBe(404); // B is not a member of A's workspace: 404 before anything else
      const own = new URL(b.url()).pathname;
      const forgedOwn = await b.context().request.post(`${own}/settings/api-keys`, { form: { name: 'x' }, maxRedirects: 0 });
      expect(forgedOwn.status()).toBe(403);
      const res = await b.goto(`${aHome}/settings/api-keys`);
      expect(res!.status()).toBe(404);
      await check(b, 'not-found');
    });

    it('the content security policy holds in the browser: no violation on the console or /docs', async () => {
      const page = await person({ bypassCSP: false });
      const violations: string[] = [];
      page.on('console', (m) => {
        if (/Content Security Policy/i.test(m.text())) violations.push(m.text());
      });
      await signUp(page);
      await nav(page, 'API keys').click();
      await page.getByLabel('Key name').fill('CSP');
      await page.getByRole('button', { name: 'Create key' }).click();
      // The copy button's script runs under the policy (a file of the site, not inline).
      await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
      await page.getByRole('button', { name: 'Copy key' }).click();
      await expect.poll(() => page.getByRole('button', { name: 'Copied' }).count()).toBe(1);
      const docs = await page.goto('/docs');
      expect(docs!.headers()['content-security-policy']).toBeDefined();
      await page.locator('.swagger-ui .info .title').waitFor();
      expect(violations).toEqual([]);
    });
  });
});
