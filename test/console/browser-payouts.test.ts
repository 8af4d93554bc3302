import { describe, expect, it } from 'vitest';
import { createPublisher } from '../../src/domain/publishers/publisher-service.js';
import { addMember } from '../../src/domain/users/memberships.js';
import { createUser } from '../../src/domain/users/user-service.js';
import { expectLedgerInvariants } from '../helpers/ledger-invariants.js';
import { makePayable } from '../helpers/payouts.js';
import { allowBrowserFlows, browserApp, checkPage, NO_BROWSER, signedIn, skipBrowser } from './browser-harness.js';

allowBrowserFlows();

// Payouts in Chromium (docs/billing.md): a publisher's owner says where to be paid and requests a
// payout on Payouts; a staff member, in a browser of their own, finds it under Operations and marks
// it sent with the bank's reference; the owner then sees it sent, the payable balance paid out. The
// refusals are payouts.test.ts (inject).

if (skipBrowser) console.log(`browser tests skipped: ${NO_BROWSER}`);
const password = 'correct horse battery';

describe.skipIf(skipBrowser)('Payouts in Chromium — happy', () => {
  const app = browserApp({ PAYOUT_MIN_CENTS: 5_000 });
  const signIn = (email: string) => signedIn(app, email, password);

  it('a publisher requests a payout, staff mark it sent, the publisher sees it paid', async () => {
    const pool = app.h.database.pool;
    const pub = await createPublisher(pool, 'Wanderlust Media');
    const owner = await createUser(pool, { email: 'petra@example.com', name: 'Petra Publisher', password });
    await addMember(pool, { publisherId: pub.id }, owner.id, 'owner');
    await createUser(pool, { email: 'sam@operator.example', name: 'Sam Staff', password, staff: true });
    await makePayable(pool, pub.id, 31_250);

    // The owner: Payouts → where to be paid (a bank account) → "Request payout".
    const publisher = await signIn('petra@example.com');
    await publisher.goto(`/app/p/${pub.id}`);
    await publisher.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Payouts' }).click();
    await expect.poll(() => publisher.locator('.figures dd').first().textContent()).toBe('$312.50');
    await publisher.getByLabel('Account holder').fill('Petra Publisher');
    await publisher.getByLabel('IBAN', { exact: true }).fill('DE89 3704 0044 0532 0130 00');
    await checkPage(publisher, 'payouts');
    await publisher.getByRole('button', { name: 'Save where we pay you' }).click();
    await publisher.waitForURL(/\/payouts\?done=details$/);
    await expect.poll(() => publisher.getByText('Bank account of Petra Publisher, IBAN DE•• ending 3000').count()).toBeGreaterThan(0);
    expect(await publisher.content()).not.toContain('0532013000');
    await publisher.getByRole('button', { name: 'Request payout' }).click();
    await publisher.waitForURL(/\/payouts\/\d+\?done=requested$/);
    const reference = (await publisher.getByRole('heading', { level: 1 }).textContent())!.replace('Payout ', '').trim();
    expect(reference).toMatch(/^PO-\w{4}-\w{4}$/);
    await expect.poll(() => publisher.getByText('Requested: waiting to be sent').count()).toBe(1);
    await checkPage(publisher, 'payout');

    // Staff: Operations → the payout in the queue → the bank's reference → marked sent.
    const staff = await signIn('sam@operator.example');
    await staff.getByRole('link', { name: 'Operations' }).click();
    await expect.poll(() => staff.getByRole('heading', { name: 'Payouts to send' }).count()).toBe(1);
    await checkPage(staff, 'ops-payouts');
    await staff.getByRole('link', { name: reference }).click();
    await staff.getByLabel("Bank's reference").fill('SEPA-2026-1202-77');
    await checkPage(staff, 'ops-payout');
    await staff.getByRole('button', { name: 'Mark sent' }).click();
    await staff.waitForURL(/\?done=sent$/);
    await expect.poll(() => staff.getByText("Marked sent: Wanderlust Media is told, with the bank's reference.").count()).toBe(1);

    // The owner sees it paid: sent with the bank's reference, nothing left in payout.
    await publisher.reload();
    await expect.poll(() => publisher.getByText('SEPA-2026-1202-77').count()).toBe(1);
    expect(await publisher.locator('.facts dd').first().textContent()).toBe('Sent');
    await publisher.getByRole('link', { name: 'All payouts' }).click();
    await expect.poll(() => publisher.locator('.figures dd').nth(1).textContent()).toBe('$0.00');
    expect(await publisher.locator('.figures dd').first().textContent()).toBe('$0.00');
    await expectLedgerInvariants(app.h.database);
  });
});
