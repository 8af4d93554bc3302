import { describe, expect, it } from 'vitest';
import { addMember } from '../../src/domain/users/memberships.js';
import { createUser } from '../../src/domain/users/user-service.js';
import { createWorkspace } from '../../src/domain/workspaces/workspace-service.js';
import { expectLedgerInvariants } from '../helpers/ledger-invariants.js';
import { allowBrowserFlows, browserApp, checkPage, NO_BROWSER, signedIn, skipBrowser } from './browser-harness.js';

allowBrowserFlows();

// Adding funds in Chromium (docs/billing.md): an owner asks for a top-up on Funds and opens its
// invoice; a staff member, in a browser of their own, finds it under Operations and confirms the
// amount received; the owner's Funds page and overview then show the balance. The refusals are
// funds.test.ts (inject).

if (skipBrowser) console.log(`browser tests skipped: ${NO_BROWSER}`);
const password = 'correct horse battery';

describe.skipIf(skipBrowser)('Adding funds in Chromium — happy', () => {
  const app = browserApp();
  const signIn = (email: string) => signedIn(app, email, password);

  it('an owner adds funds, staff confirm what arrived, the balance shows it', async () => {
    const pool = app.h.database.pool;
    const ws = await createWorkspace(pool, { name: 'Acme Travel', currency: 'USD', balanceCents: 0 });
    const owner = await createUser(pool, { email: 'olga@example.com', name: 'Olga Owner', password });
    await addMember(pool, { workspaceId: ws.id }, owner.id, 'owner');
    await createUser(pool, { email: 'sam@operator.example', name: 'Sam Staff', password, staff: true });

    // The owner: Funds → "Request top-up" → the request's page, with the reference and how to pay.
    const buyer = await signIn('olga@example.com');
    await buyer.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Funds' }).click();
    await buyer.getByLabel('Amount (USD)').fill('250');
    await checkPage(buyer, 'funds');
    await buyer.getByRole('button', { name: 'Request top-up' }).click();
    await buyer.waitForURL(/\/funds\/\d+\?done=requested$/);
    const reference = (await buyer.getByRole('heading', { level: 1 }).textContent())!.replace('Top-up ', '').trim();
    expect(reference).toMatch(/^TU-\w{4}-\w{4}$/);
    await expect.poll(() => buyer.getByText(`Requested: pay $250.00 with the reference ${reference}.`).count()).toBe(1);
    await checkPage(buyer, 'top-up');
    await buyer.getByRole('link', { name: 'Invoice (printable)' }).click();
    await expect.poll(() => buyer.getByRole('heading', { name: `Invoice ${reference}` }).count()).toBe(1);
    await checkPage(buyer, 'invoice');
    // Printed, the invoice drops its link back; on screen it has it.
    await buyer.emulateMedia({ media: 'print' });
    expect(await buyer.getByRole('link', { name: 'Back to the top-up' }).isVisible()).toBe(false);
    await buyer.emulateMedia({ media: 'screen' });
    expect(await buyer.getByRole('link', { name: 'Back to the top-up' }).isVisible()).toBe(true);

    // Staff: Operations → the request in the queue → the amount received (less than asked) → confirmed.
    const staff = await signIn('sam@operator.example');
    await staff.getByRole('link', { name: 'Operations' }).click();
    await checkPage(staff, 'ops');
    await staff.getByRole('link', { name: reference }).click();
    await staff.getByLabel('Amount received (USD)').fill('249.50');
    await checkPage(staff, 'ops-top-up');
    await staff.getByRole('button', { name: 'Confirm received' }).click();
    await staff.waitForURL(/\?done=confirmed$/);
    await expect.poll(() => staff.getByText('Confirmed: $249.50 added to Acme Travel').count()).toBe(1);

    // The owner sees it: the request paid, the balance on Funds and on the overview.
    await buyer.goBack();
    await buyer.reload();
    await expect.poll(() => buyer.getByText('Paid: funds added').count()).toBe(1);
    await buyer.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Funds' }).click();
    await expect.poll(() => buyer.locator('.figures dd').first().textContent()).toBe('$249.50');
    await buyer.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Overview' }).click();
    await expect.poll(() => buyer.getByText('$249.50').count()).toBeGreaterThan(0);
    await expectLedgerInvariants(app.h.database);
  });
});
