import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, expect, vi } from 'vitest';
import type { Config } from '../../src/config.js';
import { setupApp } from '../helpers/app.js';
import { projectRoot } from '../../src/paths.js';

// What a browser test file needs besides its flows: the system's Chromium (browsers cannot be
// downloaded here; Debian's, installed by .ci/run), whether the group runs, how it is launched,
// and axe-core run in the page. Under CI=true a missing browser is a failure, elsewhere one line
// says why.

// CHROMIUM_PATH, when set (not empty), is the only browser tried. Otherwise Debian's headless shell comes first:
// the same engine without the full browser's window and compositor (what playwright itself runs
// headless). With the GPU process off too (launchBrowser), the five browser files, run alone, took
// 140–146 s of CPU (73–77 s) against 259 s (134 s) on the full `chromium`: they are the suite's
// largest files. Either one works.
const CANDIDATES =
  process.env.CHROMIUM_PATH
    ? [process.env.CHROMIUM_PATH]
    : ['/usr/bin/chromium-headless-shell', '/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'];
export const NO_BROWSER = 'no Chromium found (apt-get install -y chromium-headless-shell, or chromium, or set CHROMIUM_PATH)';
export const executablePath = CANDIDATES.find((p): p is string => Boolean(p && existsSync(p)));
export const browserRequired = process.env.CI === 'true';
export const skipBrowser = !executablePath && !browserRequired;

/** Saves pages into docs/console/ when CONSOLE_SCREENSHOTS=1 (docs/console.md shows them). */
const SHOTS = process.env.CONSOLE_SCREENSHOTS === '1' ? join(projectRoot, 'docs', 'console') : undefined;
if (SHOTS) mkdirSync(SHOTS, { recursive: true });
const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

// axe-core (650 kB) is loaded into each checked page from a small server of this worker rather
// than sent as the script's text: sent through the DevTools protocol, Chromium spent about as much
// CPU taking it in as running it (12.4 s against 12.5 s over the browser files' 102 checks);
// loaded by URL, which the browser caches, 4.2 s (docs/testing.md). One server a worker, never
// closed (unref'd: it keeps nothing alive at exit).
let axeUrl: Promise<string> | undefined;
function axeScriptUrl(): Promise<string> {
  axeUrl ??= new Promise((resolve, reject) => {
    const server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8', 'cache-control': 'public, max-age=86400, immutable' });
      res.end(axeSource);
    });
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.unref();
      resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}/axe.min.js`);
    });
  });
  return axeUrl;
}

/**
 * A browser flow is dozens of page loads: on a loaded machine (the suite's other files, other work)
 * one takes well over the suite's 30 s. Its timeout is only a hang detector (no test judges speed).
 * Called at the top of each browser file: vitest resets the config for every file, while this
 * module, shared by the files of a worker (`isolate: false`), is evaluated only for the first.
 */
export function allowBrowserFlows(): void {
  vi.setConfig({ testTimeout: 180_000 });
}

export function requireBrowser(): string {
  if (!executablePath) throw new Error(`CI=true and ${NO_BROWSER}`);
  return executablePath;
}

/**
 * A file's browser. No sandbox: the tests may run as root, where Chromium refuses to start with
 * one. No GPU process: nothing here needs one, and software rendering without it took about a
 * tenth less CPU.
 */
export function launchBrowser(path: string): Promise<Browser> {
  return chromium.launch({ executablePath: path, args: ['--no-sandbox', '--disable-gpu'] });
}

/**
 * A listening app and a Chromium for the browser tests of one describe block: call it at the top
 * of the block; its fields are set once the block's `beforeAll` has run.
 */
export function browserApp(overrides: Partial<Config> = {}) {
  const it = {} as { h: Awaited<ReturnType<typeof setupApp>>; base: string; browser: Browser };
  beforeAll(async () => {
    const path = requireBrowser();
    it.h = await setupApp({ SIGNIN_FAILURES_PER_ADDRESS: 1000, ...overrides });
    it.base = await it.h.app.listen({ port: 0, host: '127.0.0.1' });
    it.browser = await launchBrowser(path);
  });
  afterAll(async () => {
    await it.browser?.close();
  });
  return it;
}

/** A new browser context at desktop size, signed in to the console as `email`. */
export async function signedIn(app: { browser: Browser; base: string }, email: string, password: string, opts: { acceptDownloads?: boolean } = {}): Promise<Page> {
  const context = await app.browser.newContext({ bypassCSP: true, viewport: { width: 1200, height: 900 }, baseURL: app.base, ...opts });
  const page = await context.newPage();
  await page.goto('/app/sign-in');
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL((url) => !url.pathname.startsWith('/app/sign-in'));
  return page;
}

/** axe-core in the page (whose context bypasses the CSP): no serious or critical violation; the page saved when asked (and `save` is not false). */
export async function checkPage(page: Page, name: string, opts: { save?: boolean } = {}) {
  await page.addScriptTag({ url: await axeScriptUrl() });
  const violations = await page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run: (context: unknown, options: unknown) => Promise<{ violations: Array<{ id: string; impact: string; nodes: unknown[] }> }> } }).axe;
    // Every rule runs; only the violations' details are worked out (axe's documented way to skip
    // computing a selector for each element that passed).
    const result = await axe.run((globalThis as unknown as { document: unknown }).document, { resultTypes: ['violations'] });
    return result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id} (${v.nodes.length})`);
  });
  expect(violations, `axe on ${name}`).toEqual([]);
  if (SHOTS && opts.save !== false) await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
}
