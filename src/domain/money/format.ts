const formatters = new Map<string, Intl.NumberFormat>();

function formatter(currency: string): Intl.NumberFormat {
  let f = formatters.get(currency);
  if (!f) {
    f = new Intl.NumberFormat('en-US', { style: 'currency', currency });
    formatters.set(currency, f);
  }
  return f;
}

/** Whole cents as an exact decimal string ("-12.05"), which Intl formats without going through a float. */
function centsDecimal(cents: number): string {
  const abs = Math.abs(cents);
  const minor = abs % 100;
  return `${cents < 0 ? '-' : ''}${(abs - minor) / 100}.${String(minor).padStart(2, '0')}`;
}

/**
 * USD cents shown in the workspace currency: converted by its FX rate (units per USD). At the
 * rate 1 the amount is formatted exactly (a float divided by 100 loses cents above 2^50 cents);
 * a converted amount is an approximation anyway.
 */
export function formatCents(cents: number, currency: string, perUsd: number): string {
  if (perUsd === 1 && Number.isSafeInteger(cents)) return formatter(currency).format(centsDecimal(cents) as Intl.StringNumericLiteral);
  return formatter(currency).format((cents / 100) * perUsd);
}

/** Decimal US dollars (API inputs named `*_usd`) to cents, rounding half up. */
export function usdToCents(usd: number): number {
  return Math.floor(usd * 100 + 0.5 + 1e-9);
}
