/** One check of a live placement, in the shape of the content checks. */
export interface LiveCheck {
  name: string;
  status: 'pass' | 'fail' | 'warn';
  detail: string;
}

/** What a placement must be, as bought: the order's link and the offer's promises. */
export interface PlacementExpectation {
  liveUrl: string;
  targetUrl: string;
  anchorText: string | null;
  linkType: 'dofollow' | 'nofollow';
  sponsoredLabel: boolean;
  outletDomain: string;
  language: string;
}

/** Fetches a live page and checks it (docs/link-checks.md); never throws for what the page does. */
export type CheckPlacement = (expectation: PlacementExpectation) => Promise<LiveCheck[]>;

/** A placement passes when no check failed (a warning does not fail it). */
export const livePassed = (checks: readonly LiveCheck[]): boolean => checks.every((c) => c.status !== 'fail');
