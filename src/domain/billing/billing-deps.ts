import { type Config, consoleBaseUrl } from '../../config.js';
import type { Db } from '../../db/handle.js';
import type { Clock } from '../clock.js';
import type { SecretBox } from '../webhooks/secret-box.js';
import { bankTransfer } from './bank-transfer.js';
import type { PaymentProvider } from './provider.js';

/** What adding funds and payouts need: the database, the clock, the provider, the limits, the console's address (invoice links), and the box payout details are sealed in. */
export interface BillingDeps {
  pool: Db;
  clock: Clock;
  provider: PaymentProvider;
  /** The smallest and largest top-up a workspace may request, US cents (TOPUP_MIN_CENTS, TOPUP_MAX_CENTS). */
  limits: { minCents: number; maxCents: number };
  /** The smallest payout a publisher may ask for, US cents (PAYOUT_MIN_CENTS). */
  payoutMinCents: number;
  baseUrl: string;
  /** Seals payout details at rest (AES-256-GCM): the box that seals webhook signing secrets, one key for both. */
  secrets: SecretBox;
}

type BillingConfig = Pick<Config, 'TOPUP_MIN_CENTS' | 'TOPUP_MAX_CENTS' | 'PAYOUT_MIN_CENTS' | 'BILLING_INSTRUCTIONS' | 'PUBLIC_BASE_URL' | 'HOST' | 'PORT'>;

/** The billing of an app (or the CLI): values only, made from the settings; the bank-transfer provider is the one there is. */
export function createBilling(pool: Db, clock: Clock, config: BillingConfig, secrets: SecretBox): BillingDeps {
  return {
    pool,
    clock,
    provider: bankTransfer(config.BILLING_INSTRUCTIONS),
    limits: { minCents: config.TOPUP_MIN_CENTS, maxCents: config.TOPUP_MAX_CENTS },
    payoutMinCents: config.PAYOUT_MIN_CENTS,
    baseUrl: consoleBaseUrl(config),
    secrets,
  };
}
