import { isoSeconds } from '../../common/iso-seconds.js';
import type { Db } from '../../db/handle.js';
import { withTransaction } from '../../db/handle.js';
import type { SecretBox } from '../webhooks/secret-box.js';
import type { BillingDeps } from './billing-deps.js';
import type { PayoutDetails } from './provider.js';
import { requirePayoutOwner, type PayoutActor } from './payout-actor.js';

// Where a publisher is paid (docs/billing.md, "Payouts"): a bank account (the holder and an IBAN,
// or an account and a routing number) or a PayPal address. The details are sealed at rest with the
// box that seals webhook signing secrets (AES-256-GCM) and read back only for the bank's batch
// file; every page shows them masked. They are never written to a log: no function here logs,
// and the console's forms are not logged.

/** An IBAN as typed ("de89 3704 0044 0532 0130 00"), without spaces, upper case. */
export const compactIban = (typed: string) => typed.replace(/\s+/g, '').toUpperCase();

/** Whether an IBAN (compact) has a country, check digits that hold (ISO 13616, mod 97) and a plausible length. */
export function ibanIsValid(iban: string): boolean {
  if (!/^[A-Z]{2}[0-9]{2}[A-Z0-9]{11,30}$/.test(iban)) return false;
  const moved = iban.slice(4) + iban.slice(0, 4);
  let rest = 0;
  for (const ch of moved) {
    const n = ch >= 'A' ? ch.charCodeAt(0) - 55 : Number(ch);
    rest = Number(`${rest}${n}`) % 97;
  }
  return rest === 1;
}

const last4 = (s: string) => s.slice(-4);

/** The details as pages show them: enough to recognise the account, not to use it. */
export function maskDetails(d: PayoutDetails): string {
  if (d.method === 'paypal') {
    const [local = '', domain = ''] = d.email.split('@');
    return `PayPal ${local.slice(0, 1)}•••@${domain}`;
  }
  if ('iban' in d) return `Bank account of ${d.holder}, IBAN ${d.iban.slice(0, 2)}•• ending ${last4(d.iban)}`;
  return `Bank account of ${d.holder}, account ending ${last4(d.account_number)}`;
}

export const sealDetails = (box: SecretBox, d: PayoutDetails) => box.seal(JSON.stringify(d));
export const openDetails = async (box: SecretBox, sealed: string): Promise<PayoutDetails> => JSON.parse(await box.open(sealed)) as PayoutDetails;

/** A publisher's destination as pages and the API show it: masked, with who set it and when. */
export interface DestinationView {
  method: PayoutDetails['method'];
  masked: string;
  updated_by: { id: number; name: string };
  updated_at: string;
}

interface DestinationRow {
  method: PayoutDetails['method'];
  details_sealed: string;
  masked: string;
  updated_by_user_id: number;
  updated_by_name: string;
  updated_at: Date;
}

export async function readDestination(db: Db, publisherId: number): Promise<DestinationRow | null> {
  const { rows } = await db.query<DestinationRow>({
    name: 'payout_destination_get',
    text: `SELECT d.method, d.details_sealed, d.masked, d.updated_by_user_id, u.name AS updated_by_name, d.updated_at
             FROM payout_destinations d JOIN users u ON u.id = d.updated_by_user_id WHERE d.publisher_id = $1`,
    values: [publisherId],
  });
  return rows[0] ?? null;
}

const destinationView = (r: DestinationRow): DestinationView => ({
  method: r.method,
  masked: r.masked,
  updated_by: { id: r.updated_by_user_id, name: r.updated_by_name },
  updated_at: isoSeconds(r.updated_at),
});

/** The publisher's destination, masked; null when none was given yet. */
export async function getDestination(db: Db, publisherId: number): Promise<DestinationView | null> {
  const row = await readDestination(db, publisherId);
  return row ? destinationView(row) : null;
}

/**
 * Records where the publisher is paid (replacing what was there), sealed. Owners only, checked in
 * the transaction. Payouts already asked for keep the destination they were asked with.
 */
export async function setDestination(deps: BillingDeps, actor: PayoutActor, details: PayoutDetails): Promise<DestinationView> {
  const sealed = await sealDetails(deps.secrets, details);
  return withTransaction(deps.pool, async (tx) => {
    await requirePayoutOwner(tx, actor);
    await tx.query({
      name: 'payout_destination_set',
      text: `INSERT INTO payout_destinations (publisher_id, method, details_sealed, masked, updated_by_user_id, updated_at)
             VALUES ($1, $2, $3, $4, $5, $6)
             ON CONFLICT (publisher_id) DO UPDATE SET method = EXCLUDED.method, details_sealed = EXCLUDED.details_sealed, masked = EXCLUDED.masked,
                                                      updated_by_user_id = EXCLUDED.updated_by_user_id, updated_at = EXCLUDED.updated_at`,
      values: [actor.publisherId, details.method, sealed, maskDetails(details), actor.userId, new Date(deps.clock.now())],
    });
    return destinationView((await readDestination(tx, actor.publisherId))!);
  });
}
