// The seller API shows money as decimal numbers in a currency (19.99), never strings, never cents.
// Amounts are stored as integers in the currency's minor unit (ISO 4217 exponent: 2 for USD,
// 0 for JPY), so turning them into decimals is one exact division by a power of ten.

const digitsCache = new Map<string, number>();

/** Decimal places of a currency's minor unit, as Intl knows it (USD 2, JPY 0). */
export function minorDigits(currency: string): number {
  let d = digitsCache.get(currency);
  if (d === undefined) {
    d = new Intl.NumberFormat('en-US', { style: 'currency', currency }).resolvedOptions().maximumFractionDigits ?? 2;
    digitsCache.set(currency, d);
  }
  return d;
}

/** Integer minor units of `currency` as a decimal number: 1999 USD → 19.99, 1999 JPY → 1999. */
export function minorToDecimal(minor: number, currency: string): number {
  const d = minorDigits(currency);
  return d === 0 ? minor : minor / 10 ** d;
}

/**
 * A decimal amount (19.99) as integer minor units of `currency`, or undefined when it has more
 * decimal places than the currency allows (19.999 USD) or is not a finite non-negative number.
 */
export function decimalToMinor(amount: number, currency: string): number | undefined {
  if (!Number.isFinite(amount) || amount < 0) return undefined;
  const scaled = amount * 10 ** minorDigits(currency);
  const rounded = Math.round(scaled);
  return Math.abs(scaled - rounded) < 1e-6 * Math.max(1, Math.abs(scaled)) ? rounded : undefined;
}

/**
 * US cents converted to `currency` by its FX rate (units per USD, the numeric(18,8) column read
 * as text) and rounded half away from zero to the currency's minor unit. Done in BigInt so that
 * no binary-fraction error can tip a half-cent the wrong way.
 */
export function usdCentsToDecimal(usdCents: number, perUsd: string, currency: string): number {
  const [whole = '0', frac = ''] = perUsd.trim().split('.');
  const rateScaled = BigInt(whole + frac.padEnd(8, '0').slice(0, 8)); // per_usd × 10^8
  const d = minorDigits(currency);
  // minor units = cents / 100 × rate × 10^d = cents × rateScaled × 10^d / 10^10
  const numerator = BigInt(usdCents) * rateScaled * 10n ** BigInt(d);
  const denominator = 10n ** 10n;
  const negative = numerator < 0n;
  const abs = negative ? -numerator : numerator;
  let minor = abs / denominator;
  if ((abs % denominator) * 2n >= denominator) minor += 1n;
  const value = Number(negative ? -minor : minor);
  return d === 0 ? value : value / 10 ** d;
}
