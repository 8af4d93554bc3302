import type { OutletWithBaseline, TrackRecordBaseline } from '../domain/outlets/outlet-upsert.js';
import type { OfferFormat, OutletType } from '../domain/outlets/enums.js';
import type { OfferInput } from '../domain/outlets/outlet-input.js';

// Realistic synthetic outlets for demos, load tests and `outlets generate`. Deterministic: the
// same (count, seed, domainTag) gives the same outlets in the same order — every random choice
// comes from one seeded PRNG (mulberry32), never Math.random. Each item satisfies `outletInput`.

/** mulberry32: a tiny, fast 32-bit PRNG; good enough for synthetic data. Returns [0, 1). */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

class Rng {
  private readonly next: () => number;
  private spare: number | undefined;
  constructor(seed: number) {
    // Scramble the seed first so neighbouring seeds (1, 2, 3…) start far apart.
    let s = (seed ^ 0x9e3779b9) >>> 0;
    s = Math.imul(s ^ (s >>> 16), 0x85ebca6b) >>> 0;
    s = Math.imul(s ^ (s >>> 13), 0xc2b2ae35) >>> 0;
    this.next = mulberry32((s ^ (s >>> 16)) >>> 0);
  }
  float(): number {
    return this.next();
  }
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)]!;
  }
  weighted<T>(table: WeightedTable<T>): T {
    const r = this.next() * table.total;
    let i = 0;
    while (i < table.cumulative.length - 1 && r >= table.cumulative[i]!) i++;
    return table.items[i]!;
  }
  /** Standard normal (Box–Muller, caching the second value). */
  normal(): number {
    if (this.spare !== undefined) {
      const s = this.spare;
      this.spare = undefined;
      return s;
    }
    let u = 0;
    while (u === 0) u = this.next();
    const v = this.next();
    const r = Math.sqrt(-2 * Math.log(u));
    this.spare = r * Math.sin(2 * Math.PI * v);
    return r * Math.cos(2 * Math.PI * v);
  }
}

interface WeightedTable<T> {
  items: T[];
  cumulative: number[];
  total: number;
}
function weightedTable<T>(entries: [T, number][]): WeightedTable<T> {
  let total = 0;
  const cumulative = entries.map(([, w]) => (total += w));
  return { items: entries.map(([t]) => t), cumulative, total };
}

// ---- vocabulary --------------------------------------------------------------------------------

interface Country {
  code: string;
  language: string;
  name: string;
  tlds: string[];
  places: string[];
}

const countries: [Country, number][] = [
  [{ code: 'US', language: 'en', name: 'the United States', tlds: ['com', 'com', 'com', 'net', 'io', 'org', 'us'], places: ['American', 'Brooklyn', 'Texas', 'Pacific', 'Midwest', 'Bay Area', 'Hudson', 'Rocky Mountain', 'Southern', 'Atlantic'] }, 30],
  [{ code: 'GB', language: 'en', name: 'the United Kingdom', tlds: ['co.uk', 'co.uk', 'com', 'uk', 'net'], places: ['British', 'London', 'Northern', 'Thames', 'Yorkshire', 'Highland', 'Cotswold', 'Albion'] }, 12],
  [{ code: 'CA', language: 'en', name: 'Canada', tlds: ['ca', 'ca', 'com'], places: ['Canadian', 'Maple', 'Toronto', 'Northern', 'Prairie', 'Great Lakes'] }, 5],
  [{ code: 'AU', language: 'en', name: 'Australia', tlds: ['com.au', 'com.au', 'com', 'net.au'], places: ['Aussie', 'Sydney', 'Outback', 'Coastal', 'Southern Cross', 'Melbourne'] }, 5],
  [{ code: 'IE', language: 'en', name: 'Ireland', tlds: ['ie', 'com'], places: ['Irish', 'Dublin', 'Emerald', 'Celtic'] }, 1],
  [{ code: 'NZ', language: 'en', name: 'New Zealand', tlds: ['co.nz', 'com'], places: ['Kiwi', 'Auckland', 'Alpine'] }, 1],
  [{ code: 'IN', language: 'en', name: 'India', tlds: ['in', 'co.in', 'com'], places: ['Indian', 'Mumbai', 'Delhi', 'Bengaluru', 'Deccan'] }, 6],
  [{ code: 'DE', language: 'de', name: 'Germany', tlds: ['de', 'de', 'de', 'com', 'net'], places: ['Berlin', 'Munich', 'Hamburg', 'Bavarian', 'Rhine', 'Cologne', 'Alpine'] }, 8],
  [{ code: 'AT', language: 'de', name: 'Austria', tlds: ['at', 'at', 'com'], places: ['Vienna', 'Alpine', 'Tyrol', 'Danube'] }, 2],
  [{ code: 'CH', language: 'de', name: 'Switzerland', tlds: ['ch', 'ch', 'com'], places: ['Swiss', 'Zurich', 'Alpine', 'Helvetic'] }, 1],
  [{ code: 'FR', language: 'fr', name: 'France', tlds: ['fr', 'fr', 'com', 'net'], places: ['Paris', 'Lyon', 'Riviera', 'Provence', 'Atlantic', 'Gallic'] }, 6],
  [{ code: 'BE', language: 'fr', name: 'Belgium', tlds: ['be', 'com'], places: ['Brussels', 'Belgian', 'Ardennes'] }, 1],
  [{ code: 'ES', language: 'es', name: 'Spain', tlds: ['es', 'es', 'com'], places: ['Madrid', 'Iberian', 'Barcelona', 'Andalusian', 'Costa'] }, 5],
  [{ code: 'MX', language: 'es', name: 'Mexico', tlds: ['com.mx', 'mx', 'com'], places: ['Mexican', 'Aztec', 'Yucatan'] }, 2],
  [{ code: 'IT', language: 'it', name: 'Italy', tlds: ['it', 'it', 'com'], places: ['Roman', 'Milan', 'Tuscan', 'Venetian', 'Italian'] }, 4],
  [{ code: 'NL', language: 'nl', name: 'the Netherlands', tlds: ['nl', 'nl', 'com'], places: ['Dutch', 'Amsterdam', 'Lowland', 'Rotterdam'] }, 3],
  [{ code: 'SE', language: 'sv', name: 'Sweden', tlds: ['se', 'se', 'com'], places: ['Nordic', 'Swedish', 'Stockholm', 'Baltic'] }, 2],
  [{ code: 'NO', language: 'no', name: 'Norway', tlds: ['no', 'com'], places: ['Nordic', 'Fjord', 'Oslo'] }, 1],
  [{ code: 'DK', language: 'da', name: 'Denmark', tlds: ['dk', 'com'], places: ['Nordic', 'Danish', 'Copenhagen'] }, 1],
  [{ code: 'FI', language: 'fi', name: 'Finland', tlds: ['fi', 'com'], places: ['Nordic', 'Helsinki', 'Lapland'] }, 1],
  [{ code: 'PL', language: 'pl', name: 'Poland', tlds: ['pl', 'pl', 'com'], places: ['Polish', 'Warsaw', 'Krakow', 'Vistula'] }, 2],
  [{ code: 'PT', language: 'pt', name: 'Portugal', tlds: ['pt', 'com'], places: ['Lisbon', 'Porto', 'Iberian'] }, 1],
  [{ code: 'BR', language: 'pt', name: 'Brazil', tlds: ['com.br', 'com.br', 'com'], places: ['Rio', 'Brazilian', 'Sao Paulo', 'Amazon', 'Tropical'] }, 4],
  [{ code: 'JP', language: 'ja', name: 'Japan', tlds: ['jp', 'co.jp', 'com'], places: ['Tokyo', 'Osaka', 'Sakura', 'Kyoto', 'Rising Sun'] }, 3],
];
const countryTable = weightedTable(countries);

interface Topic {
  slug: string;
  label: string;
  words: string[];
}

const topics: Topic[] = [
  { slug: 'technology', label: 'technology', words: ['Tech', 'Gadget', 'Byte', 'Pixel', 'Digital', 'Code', 'Silicon', 'Circuit'] },
  { slug: 'finance', label: 'personal finance', words: ['Money', 'Wealth', 'Capital', 'Finance', 'Budget', 'Dollar', 'Ledger'] },
  { slug: 'travel', label: 'travel', words: ['Travel', 'Wander', 'Voyage', 'Journey', 'Passport', 'Nomad', 'Trail'] },
  { slug: 'health', label: 'health', words: ['Health', 'Wellness', 'Vital', 'Fit', 'Body', 'Healthy'] },
  { slug: 'gaming', label: 'gaming', words: ['Gaming', 'Gamer', 'Pixel', 'Arcade', 'Console', 'Level Up', 'Respawn'] },
  { slug: 'crypto', label: 'crypto', words: ['Crypto', 'Chain', 'Block', 'Token', 'Satoshi', 'Coin'] },
  { slug: 'marketing', label: 'marketing', words: ['Marketing', 'Growth', 'Brand', 'Funnel', 'SEO', 'Content'] },
  { slug: 'food', label: 'food and recipes', words: ['Food', 'Kitchen', 'Recipe', 'Foodie', 'Spoon', 'Pantry', 'Flavor'] },
  { slug: 'fashion', label: 'fashion', words: ['Fashion', 'Style', 'Vogue', 'Runway', 'Wardrobe', 'Chic'] },
  { slug: 'sports', label: 'sports', words: ['Sports', 'Goal', 'Match', 'Stadium', 'Playbook', 'Athlete'] },
  { slug: 'education', label: 'education', words: ['Learning', 'Study', 'Campus', 'Scholar', 'Classroom', 'Edu'] },
  { slug: 'real-estate', label: 'real estate', words: ['Property', 'Home', 'Realty', 'Estate', 'Housing', 'Brick'] },
  { slug: 'automotive', label: 'cars', words: ['Auto', 'Motor', 'Car', 'Drive', 'Gear', 'Torque'] },
  { slug: 'parenting', label: 'parenting', words: ['Parent', 'Family', 'Mom', 'Dad', 'Kids', 'Nursery'] },
  { slug: 'science', label: 'science', words: ['Science', 'Quantum', 'Atom', 'Lab', 'Cosmos', 'Discovery'] },
  { slug: 'business', label: 'business', words: ['Business', 'Startup', 'Venture', 'Enterprise', 'Founder', 'Market'] },
  { slug: 'lifestyle', label: 'lifestyle', words: ['Lifestyle', 'Living', 'Life', 'Everyday', 'Habit', 'Simple'] },
  { slug: 'home-garden', label: 'home and garden', words: ['Garden', 'Green', 'Backyard', 'Cozy Home', 'Bloom', 'Nest'] },
  { slug: 'entertainment', label: 'entertainment', words: ['Screen', 'Movie', 'Stage', 'Pop', 'Showtime', 'Celebrity'] },
  { slug: 'pets', label: 'pets', words: ['Pet', 'Paw', 'Dog', 'Cat', 'Furry', 'Whisker'] },
  { slug: 'music', label: 'music', words: ['Music', 'Melody', 'Beat', 'Vinyl', 'Sound', 'Rhythm'] },
  { slug: 'beauty', label: 'beauty', words: ['Beauty', 'Glow', 'Skin', 'Glam', 'Radiant'] },
  { slug: 'outdoors', label: 'the outdoors', words: ['Outdoor', 'Summit', 'Camp', 'Wild', 'Trail'] },
  { slug: 'law', label: 'law', words: ['Legal', 'Law', 'Counsel', 'Verdict'] },
  { slug: 'energy', label: 'energy', words: ['Energy', 'Solar', 'Power', 'Grid', 'Volt'] },
];
// Popular topics appear more often as the primary topic.
const topicTable = weightedTable<Topic>(
  topics.map((t) => [t, ['technology', 'finance', 'travel', 'health', 'business', 'lifestyle', 'marketing'].includes(t.slug) ? 3 : 1]),
);

const adjectives = [
  'Green', 'Modern', 'Smart', 'Bright', 'Urban', 'Savvy', 'Curious', 'Little', 'Bold', 'Open', 'Global', 'Honest',
  'Clever', 'Wild', 'Quiet', 'Happy', 'Golden', 'Silver', 'Blue', 'Red', 'Northern', 'Daily', 'Fresh', 'Hidden',
  'Brave', 'Simple', 'Digital', 'Lucky', 'Rapid', 'True', 'Big', 'Tiny', 'Sunny', 'Crimson', 'Epic', 'Prime',
];

const nounsByType: Record<OutletType, string[]> = {
  blog: ['Notes', 'Blog', 'Diaries', 'Corner', 'Journal', 'Musings', 'Life', 'Chronicles', 'Spot', 'Stories', 'Ledger', 'Pulse'],
  news: ['Times', 'Daily', 'Tribune', 'Gazette', 'Post', 'Herald', 'Report', 'News', 'Wire', 'Observer', 'Chronicle', 'Today'],
  magazine: ['Magazine', 'Review', 'Quarterly', 'Monthly', 'Digest', 'Journal', 'Edit', 'Mag', 'Weekly', 'Standard'],
  niche_site: ['Hub', 'Guide', 'Lab', 'Insider', 'Advisor', 'Central', 'Compass', 'Radar', 'Lens', 'Geek', 'Pro', 'Junkie', 'Pulse', 'Ledger'],
  press: ['Wire', 'Newsroom', 'Press', 'Release Hub', 'Media Desk', 'Bulletin', 'Dispatch', 'PR Feed'],
};

const typeTable = weightedTable<OutletType>([
  ['blog', 40],
  ['niche_site', 25],
  ['magazine', 15],
  ['news', 14],
  ['press', 6],
]);

const typeLabel: Record<OutletType, string> = {
  blog: 'blog',
  news: 'news site',
  magazine: 'online magazine',
  niche_site: 'niche site',
  press: 'press release portal',
};

const descriptionOpeners: Record<OutletType, string[]> = {
  blog: ['An independent', 'A popular', 'A personal', 'A long-running', 'A reader-supported'],
  news: ['A daily', 'An independent', 'A regional', 'A fast-growing', 'A trusted'],
  magazine: ['A glossy', 'An in-depth', 'A monthly', 'An award-winning', 'A curated'],
  niche_site: ['A focused', 'An expert-run', 'A hands-on', 'A data-driven', 'A community'],
  press: ['A press release distribution', 'A newswire-style', 'A corporate news', 'A media relations'],
};
const descriptionAngles = [
  'with practical guides and honest reviews',
  'with news, opinion and long reads',
  'with how-tos, comparisons and expert interviews',
  'with weekly roundups and original research',
  'with tips, case studies and product picks',
  'with breaking stories and analysis',
  'with beginner-friendly explainers',
];

// ---- offers ------------------------------------------------------------------------------------

interface OfferTemplate {
  format: OfferFormat;
  title: string;
  factor: number; // price relative to a standard guest post
  turnaround: [number, number];
  minWords: [number, number];
  maxWords: [number, number];
  links: [number, number];
  publisherWrites: number; // probability that content_by is publisher
}

const offerTemplates: OfferTemplate[] = [
  { format: 'guest_post', title: 'Guest post', factor: 1, turnaround: [3, 10], minWords: [600, 1000], maxWords: [1500, 2500], links: [1, 3], publisherWrites: 0.25 },
  { format: 'guest_post', title: 'Long-form guest article', factor: 1.6, turnaround: [5, 14], minWords: [1500, 2000], maxWords: [3000, 5000], links: [2, 4], publisherWrites: 0.2 },
  { format: 'guest_post', title: 'Guest post written by our editors', factor: 1.35, turnaround: [5, 12], minWords: [800, 1200], maxWords: [1500, 2500], links: [1, 3], publisherWrites: 1 },
  { format: 'sponsored_article', title: 'Sponsored article', factor: 1.3, turnaround: [3, 10], minWords: [700, 1000], maxWords: [1500, 2500], links: [1, 3], publisherWrites: 0.7 },
  { format: 'sponsored_article', title: 'Sponsored product review', factor: 1.5, turnaround: [7, 21], minWords: [1000, 1500], maxWords: [2000, 3500], links: [1, 2], publisherWrites: 0.9 },
  { format: 'sponsored_article', title: 'Homepage sponsored feature', factor: 2.2, turnaround: [3, 10], minWords: [800, 1200], maxWords: [1500, 3000], links: [2, 4], publisherWrites: 0.6 },
  { format: 'link_insertion', title: 'Link insertion in an existing article', factor: 0.55, turnaround: [1, 4], minWords: [0, 0], maxWords: [50, 150], links: [1, 1], publisherWrites: 0.6 },
  { format: 'link_insertion', title: 'Niche edit with a new paragraph', factor: 0.75, turnaround: [2, 5], minWords: [50, 100], maxWords: [150, 300], links: [1, 2], publisherWrites: 0.8 },
  { format: 'press_release', title: 'Press release publication', factor: 0.8, turnaround: [1, 3], minWords: [300, 400], maxWords: [800, 1200], links: [1, 3], publisherWrites: 0.1 },
  { format: 'press_release', title: 'Press release with newsroom distribution', factor: 1.4, turnaround: [1, 5], minWords: [300, 500], maxWords: [1000, 1500], links: [2, 3], publisherWrites: 0.2 },
];
const templatesByType: Record<OutletType, WeightedTable<OfferTemplate>> = {
  blog: weightedTable(offerTemplates.map((t) => [t, t.format === 'guest_post' ? 4 : t.format === 'press_release' ? 0.5 : 2])),
  niche_site: weightedTable(offerTemplates.map((t) => [t, t.format === 'link_insertion' ? 4 : t.format === 'press_release' ? 0.5 : 2.5])),
  magazine: weightedTable(offerTemplates.map((t) => [t, t.format === 'sponsored_article' ? 4 : 1.5])),
  news: weightedTable(offerTemplates.map((t) => [t, t.format === 'sponsored_article' ? 3 : t.format === 'press_release' ? 3 : 1])),
  press: weightedTable(offerTemplates.map((t) => [t, t.format === 'press_release' ? 8 : 0.7])),
};
const offerCountTable = weightedTable<number>([
  [1, 30],
  [2, 35],
  [3, 25],
  [4, 10],
]);

// ---- helpers -----------------------------------------------------------------------------------

const clamp = (v: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, v));
const round = (v: number, decimals: number) => {
  const f = 10 ** decimals;
  return Math.round(v * f) / f;
};
/** Rounds to about `digits` significant digits, so traffic reads like an analytics figure. */
function roundSignificant(v: number, digits: number): number {
  if (v <= 0) return 0;
  const magnitude = 10 ** Math.max(0, Math.floor(Math.log10(v)) - digits + 1);
  return Math.round(v / magnitude) * magnitude;
}
/** A publisher price in cents, rounded to a price a person would set ($5 steps, then $25, $100). */
function nicePriceCents(cents: number): number {
  const step = cents < 20_000 ? 500 : cents < 100_000 ? 2_500 : 10_000;
  return clamp(Math.round(cents / step) * step, 2_000, 500_000);
}

function slugify(name: string): string {
  return name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, ' ')
    .trim();
}

function joinList(items: string[]): string {
  if (items.length <= 1) return items[0] ?? '';
  return `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`;
}

export interface GenerateOptions {
  /**
   * Appended to every domain label (`pixelpulse-<tag>.de`), so the domains of different runs
   * cannot collide. Lowercase letters, digits and inner hyphens, at most 24 characters.
   */
  domainTag?: string;
}

const tagPattern = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;

/**
 * Lazily yields `count` synthetic outlets; the same arguments always give the same sequence.
 * Domains are unique within the sequence (a numeric suffix on a collision).
 */
export function* outletStream(count: number, seed: number, opts: GenerateOptions = {}): Generator<OutletWithBaseline> {
  if (!Number.isInteger(count) || count < 0) throw new RangeError('count must be a non-negative integer');
  if (!Number.isInteger(seed)) throw new RangeError('seed must be an integer');
  const tag = opts.domainTag;
  if (tag !== undefined && (tag.length > 24 || !tagPattern.test(tag))) throw new RangeError('domainTag must be a short lowercase slug');
  const rng = new Rng(seed);
  // base label + tld → how many times it has been handed out in this run.
  const used = new Map<string, number>();

  for (let i = 0; i < count; i++) {
    const country = rng.weighted(countryTable);
    const type = rng.weighted(typeTable);
    const primary = rng.weighted(topicTable);

    // Topics: the primary topic plus 0–3 others.
    const topicCount = rng.weighted(offerCountTable); // same 1–4 shape suits topics too
    const chosen: Topic[] = [primary];
    while (chosen.length < topicCount) {
      const t = rng.pick(topics);
      if (!chosen.includes(t)) chosen.push(t);
    }

    // Name.
    const topicWord = rng.pick(primary.words);
    const noun = rng.pick(nounsByType[type]);
    let name: string;
    const pattern = rng.int(0, 9);
    if (pattern <= 2) name = `The ${rng.pick(adjectives)} ${noun}`;
    else if (pattern <= 5) name = `${topicWord} ${noun}`;
    else if (pattern <= 7) name = `${rng.pick(country.places)} ${topicWord} ${noun}`;
    else if (pattern === 8) name = `${rng.pick(adjectives)} ${topicWord} ${noun}`;
    else name = `The ${topicWord} ${noun}`;

    // Domain: the name as one label (sometimes hyphenated, often without "the"), a country TLD.
    let words = slugify(name).split(' ');
    if (words[0] === 'the' && rng.chance(0.6)) words = words.slice(1);
    let base = rng.chance(0.15) ? words.join('-') : words.join('');
    if (base.length > 30) base = base.slice(0, 30).replace(/-+$/, '');
    const tld = rng.pick(country.tlds);
    const key = `${base}.${tld}`;
    const seen = used.get(key) ?? 0;
    used.set(key, seen + 1);
    // Suffixes start at 2 ("pixelpulse2"); the suffix of a collision never creates another
    // base of this run because generated bases never end in a digit.
    const label = `${base}${seen ? seen + 1 : ''}${tag ? `-${tag}` : ''}`;
    const domain = `${label}.${tld}`;

    // Traffic: log-normal, median about 6,000 monthly visits, a long tail into the millions.
    const visits = clamp(roundSignificant(Math.exp(Math.log(6_000) + 1.8 * rng.normal()), 2), 50, 80_000_000);
    const lg = Math.log10(visits);
    const verified = rng.chance(clamp(0.6 + 0.15 * (lg - 3.8), 0.2, 0.97));

    // Offers: distinct templates, so (format, title) is unique within the outlet.
    const offerCount = rng.weighted(offerCountTable);
    const templates: OfferTemplate[] = [];
    const table = templatesByType[type];
    while (templates.length < offerCount) {
      const t = rng.weighted(table);
      if (!templates.includes(t)) templates.push(t);
    }
    // A guest post costs about $45 at 1,000 visits, $100 at 10k, $340 at 100k, $1,100 at 1M, with
    // per-outlet noise (nicePriceCents keeps every price within $20..$5,000).
    const outletLevel = (2_000 + 2_500 * (visits / 1_000) ** 0.55) * Math.exp(0.35 * rng.normal());
    const newsy = type === 'news' || type === 'press' || type === 'magazine';
    const offers: OfferInput[] = templates.map((t) => {
      const contentBy = rng.chance(t.publisherWrites) ? 'publisher' : 'buyer';
      const minWords = t.minWords[0] === t.minWords[1] ? t.minWords[0] : roundSignificant(rng.int(t.minWords[0], t.minWords[1]), 2);
      const maxWords = Math.max(minWords, roundSignificant(rng.int(t.maxWords[0], t.maxWords[1]), 2));
      const price = outletLevel * t.factor * (contentBy === 'publisher' ? 1.25 : 1) * Math.exp(0.15 * rng.normal());
      return {
        format: t.format,
        title: t.title,
        publisher_price_cents: nicePriceCents(price),
        turnaround_days: rng.int(t.turnaround[0], t.turnaround[1]),
        content_by: contentBy,
        min_words: minWords,
        max_words: maxWords,
        max_links: rng.int(t.links[0], t.links[1]),
        link_type: rng.chance(t.format === 'press_release' ? 0.5 : newsy ? 0.3 : 0.15) ? 'nofollow' : 'dofollow',
        sponsored_label: rng.chance(t.format === 'sponsored_article' || t.format === 'press_release' ? 0.75 : newsy ? 0.5 : 0.25),
        permanent: rng.chance(newsy ? 0.8 : 0.9),
      };
    });

    // Track record baseline: many outlets new or small, a few with hundreds of orders.
    let baseline: TrackRecordBaseline;
    if (rng.chance(0.2)) {
      baseline = { ordersCompleted: 0, onTimeRate: null, acceptanceRate: null, avgTurnaroundDays: null, rating: null };
    } else {
      const avgTurnaround = offers.reduce((s, o) => s + o.turnaround_days, 0) / offers.length;
      const n = Math.max(1, Math.floor(500 * rng.float() ** 3));
      // Each figure is one a record of n whole orders can have (one order is on time or not, and
      // rated in whole stars), rounded up so it stays at or above the drawn target.
      const onTime = Math.ceil(n * (1 - 0.4 * rng.float() ** 2) - 1e-9);
      const received = Math.floor(n / (1 - 0.4 * rng.float() ** 1.5) + 1e-9);
      const turnaround = round(clamp(avgTurnaround * (0.7 + 0.6 * rng.float()), 1, 90), 1);
      const stars = Math.ceil(n * (5 - 2 * rng.float() ** 2) - 1e-9);
      baseline = {
        ordersCompleted: n,
        onTimeRate: round(onTime / n, 3),
        acceptanceRate: round(n / received, 3),
        avgTurnaroundDays: turnaround,
        rating: round(stars / n, 1),
      };
    }

    const labels = chosen.map((t) => t.label);
    const description =
      `${rng.pick(descriptionOpeners[type])} ${typeLabel[type]} from ${country.name} covering ${joinList(labels)}, ` +
      `${rng.pick(descriptionAngles)}.`;

    yield {
      name,
      domain,
      url: `https://${rng.chance(0.7) ? 'www.' : ''}${domain}/`,
      description,
      type,
      country: country.code,
      language: country.language,
      topics: chosen.map((t) => t.slug),
      traffic: { monthly_visits: visits, verified },
      offers,
      baseline,
    };
  }
}

/**
 * The domain tag of one `outlets generate` run (also used by the demo seed): `<publisher>-<seed>`.
 * Generated labels contain no digits, so the tag can't be mistaken for a collision suffix, and
 * two (publisher, seed) pairs never share a domain; the same pair always gives the same domains.
 */
export function runDomainTag(publisherId: number, seed: number): string {
  return `${publisherId}-${seed}`;
}

/** `count` synthetic outlets (see outletStream); deterministic for a given seed. */
export function generateOutlets(count: number, seed: number, opts: GenerateOptions = {}): OutletWithBaseline[] {
  return Array.from(outletStream(count, seed, opts));
}
