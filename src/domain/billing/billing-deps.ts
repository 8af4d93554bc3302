import { type Config, consoleBaseUrl } from '../../config.js';
import type { Db } from '../../db/handle.js';
import type { Clock } from '../clock.js';
import { bankTransfer } from './bank-transfer.js';
import type { PaymentProvider } from './provider.js';

/** What adding funds needs: the database, the clock, the provider, the limits, and the console's address (invoice links). */
export interface BillingDeps {
  pool: Db;
  clock: Clock;
  provider: PaymentProvider;
  /** The smallest and largest top-up a workspace may request, US cents (TOPUP_MIN_CENTS, TOPUP_MAX_CENTS). */
  limits: { minCents: number; maxCents: number };
  baseUrl: string;
}

type BillingConfig = Pick<Config, 'TOPUP_MIN_CENTS' | 'TOPUP_MAX_CENTS' | 'BILLING_INSTRUCTIONS' | 'PUBLIC_BASE_URL' | 'HOST' | 'PORT'>;

/** The billing of an app (or the CLI): values only, made from the settings; the bank-transfer provider is the one there is. */
export function createBilling(pool: Db, clock: Clock, config: BillingConfig): BillingDeps {
  return {
    pool,
    clock,
    provider: bankTransfer(config.BILLING_INSTRUCTIONS),
    limits: { minCents: config.TOPUP_MIN_CENTS, maxCents: config.TOPUP_MAX_CENTS },
    baseUrl: consoleBaseUrl(config),
  };
}
