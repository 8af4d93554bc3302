import type { PlacementExpectation } from '../../src/domain/placements/live-checks.js';

/** The order the live-check tests judge pages against: a dofollow link to the buyer's shoes page. */
export const shoeOrder: PlacementExpectation = {
  liveUrl: 'https://outlet.example/post',
  targetUrl: 'https://buyer.example/shoes',
  anchorText: 'Best running shoes',
  linkType: 'dofollow',
  sponsoredLabel: false,
  outletDomain: 'outlet.example',
  language: 'en',
};
