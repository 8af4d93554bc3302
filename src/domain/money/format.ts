const formatters = new Map<string, Intl.NumberFormat>();

function formatter(currency: string): Intl.NumberFormat {
  let f = formatters.get(currency);
  if (!f) {
    f = new Intl.NumberFormat('en-US', { style: 'currency', currency });
    formatters.set(currency, f);
  }
  return f;
}

/** How Intl writes an amount of a currency with two decimals: what surrounds the digits, and the separators. */
interface Pattern {
  prefix: string;
  suffix: string;
  negativePrefix: string;
  negativeSuffix: string;
  group: string;
  decimal: string;
}

// Intl's format() costs about 7 µs of CPU a call inside the server (list pages format dozens of
// amounts), against well under 1 µs for joining digits; so exact amounts are written here, in the
// pattern Intl itself gives for the currency, and checked against Intl before the pattern is used.
const patterns = new Map<string, Pattern | null>();

function learnPattern(currency: string): Pattern | null {
  const f = formatter(currency);
  if (f.resolvedOptions().maximumFractionDigits !== 2) return null;
  const around = (value: number) => {
    const parts = f.formatToParts(value);
    const first = parts.findIndex((p) => p.type === 'integer');
    const last = parts.findIndex((p) => p.type === 'fraction');
    return {
      before: parts.slice(0, first).map((p) => p.value).join(''),
      after: parts.slice(last + 1).map((p) => p.value).join(''),
      group: parts.find((p) => p.type === 'group')?.value,
      decimal: parts.find((p) => p.type === 'decimal')?.value,
    };
  };
  const pos = around(1234567.89);
  const neg = around(-1234567.89);
  if (pos.group === undefined || pos.decimal === undefined) return null;
  const pattern = { prefix: pos.before, suffix: pos.after, negativePrefix: neg.before, negativeSuffix: neg.after, group: pos.group, decimal: pos.decimal };
  const samples = [0, 7, -7, 99, 100, -1_205, 123_456, 100_000_000, -987_654_321, Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER];
  return samples.every((c) => writeCents(c, pattern) === f.format(centsDecimal(c) as Intl.StringNumericLiteral)) ? pattern : null;
}

/** Whole cents as an exact decimal string ("-12.05"), which Intl formats without going through a float. */
function centsDecimal(cents: number): string {
  const abs = Math.abs(cents);
  const minor = abs % 100;
  return `${cents < 0 ? '-' : ''}${(abs - minor) / 100}.${String(minor).padStart(2, '0')}`;
}

function writeCents(cents: number, p: Pattern): string {
  const abs = Math.abs(cents);
  const minor = abs % 100;
  const whole = String((abs - minor) / 100); // exact: a multiple of 100 below 2^53, divided by 100
  let grouped = '';
  for (let i = 0; i < whole.length; i++) {
    if (i > 0 && (whole.length - i) % 3 === 0) grouped += p.group;
    grouped += whole[i];
  }
  const digits = `${grouped}${p.decimal}${minor < 10 ? '0' : ''}${minor}`;
  return cents < 0 ? `${p.negativePrefix}${digits}${p.negativeSuffix}` : `${p.prefix}${digits}${p.suffix}`;
}

/**
 * USD cents shown in the workspace currency: converted by its FX rate (units per USD). At the
 * rate 1 the amount is formatted exactly (a float divided by 100 loses cents above 2^50 cents);
 * a converted amount is an approximation anyway.
 */
export function formatCents(cents: number, currency: string, perUsd: number): string {
  if (perUsd === 1 && Number.isSafeInteger(cents)) {
    let pattern = patterns.get(currency);
    if (pattern === undefined) patterns.set(currency, (pattern = learnPattern(currency)));
    return pattern ? writeCents(cents, pattern) : formatter(currency).format(centsDecimal(cents) as Intl.StringNumericLiteral);
  }
  return formatter(currency).format((cents / 100) * perUsd);
}

/** Decimal US dollars (API inputs named `*_usd`) to cents, rounding half up. */
export function usdToCents(usd: number): number {
  return Math.floor(usd * 100 + 0.5 + 1e-9);
}
