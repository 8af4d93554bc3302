/**
 * The largest amount, in cents, any balance may hold (and the lowest the platform's external
 * account may reach): 2^53 − 1, the largest integer a JSON number carries exactly, so every
 * balance the API reports is the one stored. About 90 trillion dollars; a CHECK constraint on
 * ledger_accounts enforces it under every write.
 */
export const MAX_BALANCE_CENTS = Number.MAX_SAFE_INTEGER;
