/** The service fee on a publisher price, rounded half-up once to whole cents. */
export function feeCents(publisherPriceCents: number, feeRate: number): number {
  // Integer arithmetic on basis points avoids 0.1 + 0.2 style drift in the rounding.
  const bps = Math.round(feeRate * 10_000);
  return Math.floor((publisherPriceCents * bps + 5_000) / 10_000);
}
