import { describe, expect, it } from 'vitest';
import { bankTransfer, fillInstructions } from '../../../src/domain/billing/bank-transfer.js';
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
