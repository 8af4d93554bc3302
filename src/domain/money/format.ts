const formatters = new Map<string, Intl.NumberFormat>();

function formatter(currency: string): Intl.NumberFormat {
  let f = formatters.get(currency);
  if (!f) {
    f = new Intl.NumberFormat('en-US', { style: 'currency', currency });
    formatters.set(currency, f);
  }
  return f;
}

/** USD cents shown in the workspace currency: converted by its FX rate (units per USD). */
export function formatCents(cents: number, currency: string, perUsd: number): string {
  return formatter(currency).format((cents / 100) * perUsd);
}

/** Decimal US dollars (API inputs named `*_usd`) to cents, rounding half up. */
export function usdToCents(usd: number): number {
  return Math.floor(usd * 100 + 0.5 + 1e-9);
}
