import { describe, expect, it } from 'vitest';
import { bankTransfer, csvCell, fillInstructions, payoutCsv } from '../../../src/domain/billing/bank-transfer.js';
import { compactIban, ibanIsValid, maskDetails } from '../../../src/domain/billing/payout-details.js';
import { payoutDestinationForm } from '../../../src/schemas/payouts.js';
import { newTopUpReference, normalReference } from '../../../src/domain/billing/reference.js';

// The bank-transfer provider and the references people type (docs/billing.md): no database.

describe('top-up references', () => {
  it('are TU- and two groups of four, in an alphabet without 0, O, 1, I, L or U, and read back however typed', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 2_000; i++) {
      const r = newTopUpReference();
      expect(r).toMatch(/^TU-[2-9A-HJKMNP-TV-Z]{4}-[2-9A-HJKMNP-TV-Z]{4}$/);
      expect(normalReference(r.toLowerCase().replace(/-/g, ' '))).toBe(r);
      seen.add(r);
    }
    expect(seen.size).toBe(2_000);
    expect(normalReference('tu7kq4m2xd')).toBe('TU-7KQ4-M2XD');
    for (const typed of ['TU-7KQ4-M2X', 'TU-7KQ4-M2X0', 'TU-OKQ4-M2XD', 'XX-7KQ4-M2XD', 'Acme', '']) expect(normalReference(typed), typed).toBeNull();
  });
});

describe('the bank-transfer provider', () => {
  it('fills the operator text: the reference and amount everywhere, \\n as a line break', async () => {
    expect(fillInstructions('Pay {amount}.\\nReference: {reference} ({reference})', { reference: 'TU-AAAA-BBBB', amountFormatted: '$5.00' })).toBe(
      'Pay $5.00.\nReference: TU-AAAA-BBBB (TU-AAAA-BBBB)',
    );
    const provider = bankTransfer('Ref {reference}');
    expect(await provider.createTopUp({ reference: 'TU-AAAA-BBBB', amountCents: 500, amountFormatted: '$5.00', workspace: { id: 1, name: 'W' } })).toEqual({
      instructions: 'Ref TU-AAAA-BBBB',
      payUrl: null,
    });
  });

  it('takes staff as the proof of money received, never a notification, and a positive amount only; payouts are sent by hand', async () => {
    const provider = bankTransfer('Ref {reference}');
    expect(provider.confirmedBy).toBe('staff');
    expect(await provider.confirmTopUp({ kind: 'staff', staffUserId: 7, reference: 'TU-AAAA-BBBB', receivedCents: 1_234 })).toEqual({
      reference: 'TU-AAAA-BBBB',
      receivedCents: 1_234,
      confirmedBy: { staffUserId: 7 },
    });
    await expect(provider.confirmTopUp({ kind: 'webhook', body: '{}', headers: {} })).rejects.toMatchObject({ code: 'forbidden' });
    await expect(provider.confirmTopUp({ kind: 'staff', staffUserId: 7, reference: 'TU-AAAA-BBBB', receivedCents: -1 })).rejects.toMatchObject({
      code: 'invalid_input',
      details: { errors: { received_usd: ['must be an amount above 0'] } },
    });
    expect(await provider.sendPayout({ reference: 'PO-1', amountCents: 100, publisher: { id: 1, name: 'P' } })).toEqual({ state: 'manual' });
  });
});

describe('payouts through the bank transfer (docs/billing.md, "Payouts")', () => {
  const provider = bankTransfer('Pay {amount} with {reference}.');

  it("takes staff's word for sent (with the bank's reference) or failed (with a reason), and refuses a webhook", async () => {
    expect(await provider.settlePayout({ kind: 'staff', staffUserId: 7, reference: 'PO-1', outcome: { state: 'sent', bankReference: 'B-1' } })).toEqual({
      reference: 'PO-1',
      settledBy: { staffUserId: 7 },
      state: 'sent',
      providerReference: 'B-1',
    });
    expect(await provider.settlePayout({ kind: 'staff', staffUserId: 7, reference: 'PO-1', outcome: { state: 'failed', reason: 'Closed' } })).toMatchObject({ state: 'failed', reason: 'Closed' });
    await expect(provider.settlePayout({ kind: 'webhook', body: '{}', headers: {} })).rejects.toMatchObject({ code: 'forbidden' });
  });

  it('writes the batch as CSV: a header, CRLF lines, quotes where needed, no formula a spreadsheet would run', () => {
    const csv = payoutCsv([
      { reference: 'PO-A', amountCents: 12_345, publisher: { id: 3, name: 'Travel, "Best"' }, details: { method: 'bank', holder: '=HYPERLINK("x")', iban: 'DE89370400440532013000' } },
      { reference: 'PO-B', amountCents: 5_000, publisher: { id: 4, name: 'Pay' }, details: { method: 'bank', holder: 'Al', account_number: '123456789', routing_number: '021000021' } },
      { reference: 'PO-C', amountCents: 100, publisher: { id: 5, name: 'Pal' }, details: { method: 'paypal', email: 'p@example.com' } },
    ]);
    expect(csv.split('\r\n')).toEqual([
      'reference,amount,currency,method,holder,iban,account_number,routing_number,paypal_email,publisher_id,publisher',
      `PO-A,123.45,USD,bank,"'=HYPERLINK(""x"")",DE89370400440532013000,,,,3,"Travel, ""Best"""`,
      'PO-B,50.00,USD,bank,Al,,123456789,021000021,,4,Pay',
      'PO-C,1.00,USD,paypal,,,,,p@example.com,5,Pal',
      '',
    ]);
    expect(csvCell('-1')).toBe("'-1");
    expect(provider.payoutBatchFile('PB-1', [])).toMatchObject({ filename: 'PB-1.csv', contentType: 'text/csv; charset=utf-8' });
  });

  it('checks IBANs by their check digits and masks the details', () => {
    expect(ibanIsValid(compactIban('de89 3704 0044 0532 0130 00'))).toBe(true);
    expect(ibanIsValid('DE89370400440532013001')).toBe(false);
    expect(ibanIsValid('GB82WEST12345698765432')).toBe(true);
    expect(ibanIsValid('XX00')).toBe(false);
    expect(maskDetails({ method: 'bank', holder: 'Jane Doe', iban: 'DE89370400440532013000' })).toBe('Bank account of Jane Doe, IBAN DE•• ending 3000');
    expect(maskDetails({ method: 'bank', holder: 'Jane Doe', account_number: '123456789', routing_number: '021000021' })).toBe('Bank account of Jane Doe, account ending 6789');
    expect(maskDetails({ method: 'paypal', email: 'jane@example.com' })).toBe('PayPal j•••@example.com');
  });

  it('the form names each bad field', () => {
    const issues = (input: Record<string, string>) => {
      const r = payoutDestinationForm.safeParse(input);
      return r.success ? r.data : r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    };
    expect(issues({ method: 'bank', holder: 'J', iban: 'DE89 3704 0044 0532 0130 00' })).toEqual({ method: 'bank', holder: 'J', iban: 'DE89370400440532013000' });
    expect(issues({ method: 'bank', holder: 'J', account_number: '1234-5678', routing_number: '021000021' })).toEqual({ method: 'bank', holder: 'J', account_number: '12345678', routing_number: '021000021' });
    expect(issues({ method: 'bank', iban: 'DE89370400440532013000' })).toEqual(['holder: is required']);
    expect(issues({ method: 'bank', holder: 'J' })).toEqual(['iban: give an IBAN, or an account number and a routing number']);
    expect(issues({ method: 'bank', holder: 'J', account_number: '12345678', routing_number: '12' })).toEqual(['routing_number: must be 9 digits']);
    expect(issues({ method: 'paypal', paypal_email: 'nope' })).toEqual(['paypal_email: must be an email address']);
    expect(issues({ method: 'cash' })).toEqual(['method: must be bank or paypal']);
  });
});
