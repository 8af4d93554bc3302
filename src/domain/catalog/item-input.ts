import { z } from 'zod';
import { decimalToMinor } from './money.js';
import { type ItemKind, mediaRules } from './views.js';

// `items import` input (docs/cli.md): the seed's Item shape without `id`, with `currency`
// and `published_at` optional, plus `kind`, which decides the media fields: a media field the kind
// may not carry is an error (not silently dropped), so a file never imports differently from how
// it reads; the ones the kind must carry are required.

const text = (max: number) => z.string({ error: 'must be a string' }).trim().min(1, 'must not be empty').max(max, `must be at most ${max} characters`);
const url = z
  .string({ error: 'must be a string' })
  .trim()
  .max(2000, 'must be at most 2000 characters')
  .refine((v) => /^https?:\/\//i.test(v) && URL.canParse(v), 'must be an http(s) URL');
const price = z.number({ error: 'must be a decimal number' }).min(0, 'must not be negative').max(1_000_000_000, 'must be at most 1000000000');

export const itemInput = z.strictObject({
  kind: z.enum(['software', 'graphics', 'video', 'audio', 'other'], { error: 'must be one of software, graphics, video, audio, other' }),
  name: text(200),
  description: z.string({ error: 'must be a string' }).max(20_000, 'must be at most 20000 characters'),
  category: text(100),
  sub_category: text(100),
  options: z.array(text(200), { error: 'must be an array of strings' }).max(100, 'must have at most 100 entries').default([]),
  version: z.string({ error: 'must be a string' }).regex(/^\d{1,9}\.\d{1,9}\.\d{1,9}$/, 'must be major.minor.patch, e.g. 1.4.2'),
  demo_link: url,
  tags: z.array(text(100), { error: 'must be an array of strings' }).max(100, 'must have at most 100 entries').default([]),
  media: z.strictObject({
    thumbnail: url,
    preview_image: url.optional(),
    preview_video: url.optional(),
    preview_audio: url.optional(),
    screenshots: z.array(url, { error: 'must be an array of URLs' }).max(50, 'must have at most 50 entries').default([]),
  }),
  price: z.strictObject({ regular: price, extended: price }),
  currency: z.string({ error: 'must be a string' }).trim().regex(/^[A-Za-z]{3}$/, 'must be a three-letter currency code').transform((c) => c.toUpperCase()).optional(),
  published_at: z.iso
    .datetime({ offset: true, error: 'must be an ISO 8601 timestamp, e.g. 2026-11-22T10:00:00Z' })
    // In UTC, within what PostgreSQL and the API's own timestamps write (four-digit years).
    .refine((v) => {
      const t = Date.parse(v);
      return t >= Date.UTC(1970, 0, 1) && t < Date.UTC(10000, 0, 1);
    }, 'must fall between 1970 and 9999 in UTC')
    .optional(),
});

export type ItemInput = z.infer<typeof itemInput>;

export interface NewItem {
  kind: ItemKind;
  name: string;
  description: string;
  category: string;
  subCategory: string;
  options: string[];
  version: string;
  demoLink: string;
  tags: string[];
  thumbnailUrl: string;
  previewImageUrl: string | null;
  previewVideoUrl: string | null;
  previewAudioUrl: string | null;
  screenshots: string[];
  priceRegularCents: number;
  priceExtendedCents: number;
  currency: string;
  publishedAt: Date | undefined;
}

/** The first problem of one parsed item as [field path, message], or the row to insert. */
export function toNewItem(item: ItemInput, defaultCurrency: string): NewItem | [string, string] {
  const rules = mediaRules[item.kind];
  const media = item.media;
  const presence: [keyof typeof media, boolean][] = [
    ['preview_image', rules.previewImage],
    ['preview_video', rules.previewVideo],
    ['preview_audio', rules.previewAudio],
  ];
  for (const [field, allowed] of presence) {
    if (allowed && media[field] === undefined) return [`media.${field}`, `is required for ${item.kind} items`];
    if (!allowed && media[field] !== undefined) return [`media.${field}`, `is not allowed for ${item.kind} items`];
  }
  const currency = item.currency ?? defaultCurrency;
  const regular = decimalToMinor(item.price.regular, currency);
  if (regular === undefined) return ['price.regular', `has more decimal places than ${currency} allows`];
  const extended = decimalToMinor(item.price.extended, currency);
  if (extended === undefined) return ['price.extended', `has more decimal places than ${currency} allows`];
  return {
    kind: item.kind,
    name: item.name,
    description: item.description,
    category: item.category,
    subCategory: item.sub_category,
    options: item.options,
    version: item.version,
    demoLink: item.demo_link,
    tags: item.tags,
    thumbnailUrl: media.thumbnail,
    previewImageUrl: media.preview_image ?? null,
    previewVideoUrl: media.preview_video ?? null,
    previewAudioUrl: media.preview_audio ?? null,
    screenshots: media.screenshots,
    priceRegularCents: regular,
    priceExtendedCents: extended,
    currency,
    publishedAt: item.published_at === undefined ? undefined : new Date(item.published_at),
  };
}
