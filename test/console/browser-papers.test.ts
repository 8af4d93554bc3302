import { describe, expect, it } from 'vitest';
import { monthOf } from '../../src/domain/ledger/statements.js';
import { addMember } from '../../src/domain/users/memberships.js';
import { createUser } from '../../src/domain/users/user-service.js';
import { createWorkspace } from '../../src/domain/workspaces/workspace-service.js';
import { allowBrowserFlows, browserApp, checkPage, NO_BROWSER, signedIn, skipBrowser } from './browser-harness.js';

allowBrowserFlows();

// Papers in Chromium (docs/billing.md): a viewer opens Statements from the navigation, picks this
// month with the month picker, reads the printable statement (axe-core on both), and downloads the
// ledger as CSV. The refusals and the figures are papers.test.ts and statements.test.ts.

if (skipBrowser) console.log(`browser tests skipped: ${NO_BROWSER}`);
const password = 'correct horse battery';

describe.skipIf(skipBrowser)('Statements and downloads in Chromium — happy', () => {
  const app = browserApp();

  it('a viewer picks a month, reads and prints its statement, downloads the ledger', async () => {
    const pool = app.h.database.pool;
    const ws = await createWorkspace(pool, { name: 'Acme Travel', currency: 'USD', balanceCents: 12_345 });
    const viewer = await createUser(pool, { email: 'vic@example.com', name: 'Vic Viewer', password });
    await addMember(pool, { workspaceId: ws.id }, viewer.id, 'viewer');
    const page = await signedIn(app, 'vic@example.com', password, { acceptDownloads: true });

    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Statements' }).click();
    await page.waitForURL(/\/statements$/);
    const month = monthOf(app.h.clock.now());
    expect(await page.getByLabel('Month', { exact: true }).inputValue()).toBe(month);
    await checkPage(page, 'statements');
    await page.getByRole('button', { name: 'Open the statement' }).click();
    await page.waitForURL(new RegExp(`/statements/${month}$`));
    await expect.poll(() => page.getByRole('heading', { level: 2, name: 'Available balance' }).count()).toBe(1);
    expect(await page.getByText('Closing balance').first().isVisible()).toBe(true);
    expect(await page.locator('tfoot').first().textContent()).toContain('$123.45');
    await checkPage(page, 'statement');
    await page.emulateMedia({ media: 'print' });
    expect(await page.getByRole('link', { name: 'Back to the statements' }).isVisible()).toBe(false);
    await page.emulateMedia({ media: 'screen' });

    await page.getByRole('link', { name: 'Back to the statements' }).click();
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'The whole ledger (CSV)' }).click()]);
    expect(download.suggestedFilename()).toBe('ledger.csv');
    const path = await download.path();
    const { readFileSync } = await import('node:fs');
    const text = readFileSync(path, 'utf8');
    expect(text.split('\r\n')[0]).toBe('id,transaction_id,account,amount,amount_formatted,kind,order_id,created_at');
    expect(text).toContain(',available,12345,$123.45,top_up,,');
    await page.context().close();
  });
});
