import type { Database } from '../../src/db/client.js';
import { upsertOutlets } from '../../src/domain/outlets/outlet-upsert.js';
import type { OutletInput } from '../../src/domain/outlets/outlet-input.js';
import { createPublisher } from '../../src/domain/publishers/publisher-service.js';

type Offer = OutletInput['offers'][number];

export const offerInput = (over: Partial<Offer> = {}): Offer => ({
  format: 'guest_post',
  title: 'Guest post',
  publisher_price_cents: 10_000,
  turnaround_days: 7,
  content_by: 'publisher',
  min_words: 50,
  max_words: 2000,
  max_links: 3,
  link_type: 'dofollow',
  sponsored_label: true,
  permanent: true,
  ...over,
});

/** An outlet as `outlets import` takes it, with one default offer. */
export const outletInput = (domain: string, over: Partial<OutletInput> = {}): OutletInput => ({
  name: `Outlet ${domain}`,
  domain,
  description: 'A test outlet.',
  type: 'blog',
  country: 'US',
  language: 'en',
  topics: ['technology'],
  traffic: { monthly_visits: 1000, verified: true },
  offers: [offerInput()],
  ...over,
});

let n = 0;

/**
 * A publisher (with its key) owning one outlet with the given offers. Prices: publisher price as
 * given, plus a 20% fee.
 */
export async function publisherWithOutlet(database: Database, offers: Partial<Offer>[] = [{}], domain?: string) {
  const pub = await createPublisher(database.pool, `Publisher ${++n}`);
  const d = domain ?? `outlet-${n}-${Date.now().toString(36)}.example`;
  await upsertOutlets(
    database.pool,
    pub.id,
    [
      {
        name: `Outlet ${n}`,
        domain: d,
        description: 'A test outlet.',
        type: 'blog',
        country: 'US',
        language: 'en',
        topics: ['technology'],
        traffic: { monthly_visits: 1000, verified: true },
        offers: offers.map((o, i) => offerInput({ title: `Offer ${i + 1}`, ...o })),

      },
    ],
    0.2,
  );
  const inputs = offers.map((o, i) => offerInput({ title: `Offer ${i + 1}`, ...o }));
  const { rows: found } = await database.pool.query(
    `SELECT f.id, f.title, f.price, f.publisher_price_cents, f.fee_cents, o.id AS outlet_id FROM offers f JOIN outlets o ON o.id = f.outlet_id
      WHERE o.domain = $1`,
    [d],
  );
  // In the order the offers were given.
  const rows = inputs.map((o) => found.find((r) => r.title === o.title));
  return {
    publisherId: pub.id,
    publisherKey: pub.key,
    domain: d,
    outletId: rows[0].outlet_id as number,
    offers: rows as { id: number; price: number; publisher_price_cents: number; fee_cents: number }[],
  };
}

/** An outlet's link figures before the marketplace checked any of its placements: no baseline. */
export const NO_LINK_FIGURES = {
  link_survival_30d: null,
  links_checked_30d: 0,
  link_survival_60d: null,
  links_checked_60d: 0,
  verification_pass_rate: null,
  placements_checked: 0,
};
