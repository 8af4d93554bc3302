import { z } from 'zod';

// Zod schemas of the seller API, used for the OpenAPI document (route validation is done by hand:
// parameters may come from the query, a form or JSON body, or a bearer header). The examples
// follow the seed's tables.

/** The seller API's error messages, exactly as it answers them (`{"status":"error","msg":…}`). */
export const msg = {
  invalidRequest: 'Invalid request',
  itemIdRequired: 'The item_id field is required.',
  itemIdInteger: 'The item_id must be an integer.',
  purchaseCodeRequired: 'The purchase_code field is required.',
  noItems: 'No items found',
  itemNotFound: 'Item Not Found',
  invalidPurchaseCode: 'Invalid purchase code',
  notFound: 'Not found',
  methodNotAllowed: 'Method not allowed',
  payloadTooLarge: 'Payload too large',
  tooManyRequests: 'Too many requests',
  unavailable: 'Service unavailable',
  internal: 'Internal server error',
} as const;

export type CatalogMessage = (typeof msg)[keyof typeof msg];

const iso = (what: string) => z.iso.datetime().describe(`${what}, ISO 8601 UTC to the second (2026-11-22T10:00:00Z).`);
const url = (what: string) => z.string().describe(`${what} (URL).`);
const money = (what: string) => z.number().describe(`${what}, a decimal number in the currency (19.99; never a string, never cents).`);

export const exampleItem = {
  id: 1,
  name: 'Nova Admin Dashboard',
  description: 'A responsive admin dashboard template with 40 ready-made pages.',
  category: 'Site Templates',
  sub_category: 'Admin Templates',
  options: ['Dark mode', 'RTL support'],
  version: '2.4.1',
  demo_link: 'https://demo.example/nova',
  tags: ['admin', 'dashboard', 'bootstrap'],
  media: {
    thumbnail: 'https://cdn.example/items/1/thumb.png',
    preview_image: 'https://cdn.example/items/1/preview.png',
    screenshots: ['https://cdn.example/items/1/s1.png', 'https://cdn.example/items/1/s2.png'],
  },
  price: { regular: 19.99, extended: 99 },
  currency: 'USD',
  published_at: '2026-03-01T09:30:00Z',
};

const exampleAudioItem = {
  id: 4,
  name: 'Uplifting Corporate Loop',
  description: 'A bright 2-minute corporate track with a 30-second loop.',
  category: 'Music',
  sub_category: 'Corporate',
  options: ['WAV', 'MP3'],
  version: '1.0.0',
  demo_link: 'https://demo.example/uplifting',
  tags: ['corporate', 'loop'],
  media: { thumbnail: 'https://cdn.example/items/4/thumb.png', preview_audio: 'https://cdn.example/items/4/preview.mp3' },
  price: { regular: 15, extended: 75 },
  currency: 'USD',
  published_at: '2026-05-12T14:00:00Z',
};

export const itemSchema = z
  .object({
    id: z.number().int(),
    name: z.string(),
    description: z.string(),
    category: z.string(),
    sub_category: z.string(),
    options: z.array(z.string()),
    version: z.string().regex(/^\d+\.\d+\.\d+$/).describe("The item's own release version, major.minor.patch."),
    demo_link: url('Live demo'),
    tags: z.array(z.string()),
    media: z.object({
      thumbnail: url('Thumbnail'),
      preview_image: url('Preview image; omitted for audio items').optional(),
      preview_video: url('Preview video; only for video items').optional(),
      preview_audio: url('Preview audio; only for audio items').optional(),
      screenshots: z.array(z.string()).optional().describe('Screenshot URLs; only when the item has some.'),
    }).describe('Optional fields are omitted, never null.'),
    price: z.object({ regular: money('Regular license price'), extended: money('Extended license price') }),
    currency: z.string().describe('ISO 4217 code of the prices.'),
    published_at: iso('First publication'),
  })
  .meta({ id: 'CatalogItem', description: 'A digital product the workspace sells.', examples: [exampleItem, exampleAudioItem] });

export const accountSchema = z
  .object({
    name: z.object({ firstname: z.string(), lastname: z.string(), full_name: z.string() }),
    username: z.string(),
    email: z.string().describe('E-mail address.'),
    balance: money('Available balance in `currency`, rounded to its minor unit'),
    currency: z.string().describe('ISO 4217 code of the workspace.'),
    profile: z.object({
      heading: z.string(),
      description: z.string(),
      contact: z.object({ email: z.string() }),
      social_links: z.record(z.string(), z.string()).describe('Network name (facebook, x, …) → link.'),
      media: z.object({ avatar: url('Avatar'), cover: url('Cover image') }),
    }),
    registered_at: iso('Registration'),
  })
  .meta({
    id: 'CatalogAccount',
    description: "The key's workspace owner profile.",
    examples: [
      {
        name: { firstname: 'Dana', lastname: 'Demo', full_name: 'Dana Demo' },
        username: 'dana_demo',
        email: 'dana@demo.example',
        balance: 5000,
        currency: 'USD',
        profile: {
          heading: 'Pixel & Sound Studio',
          description: 'Templates, graphics, stock video and music for busy teams.',
          contact: { email: 'support@demo.example' },
          social_links: { facebook: 'https://facebook.com/demo', x: 'https://x.com/demo' },
          media: { avatar: 'https://cdn.example/profile/avatar.png', cover: 'https://cdn.example/profile/cover.png' },
        },
        registered_at: '2026-01-15T08:00:00Z',
      },
    ],
  });

export const purchaseSchema = z
  .object({
    purchase_code: z.string().describe('The purchase code (a UUID).'),
    license_type: z.enum(['Regular', 'Extended']).describe('Which license was bought (matches price.regular or price.extended).'),
    price: money('What was paid'),
    currency: z.string().describe('ISO 4217 code of `price`.'),
    item: itemSchema,
    supported_until: iso('End of support; omitted when the purchase has no support, returned even once passed').optional(),
    downloaded: z.boolean().describe('Whether the buyer has downloaded the item.'),
    date: iso('Purchase date'),
  })
  .meta({
    id: 'CatalogPurchase',
    examples: [
      {
        purchase_code: '3f1c9a52-7d4e-4b8a-9c61-2e5f0a7b8d94',
        license_type: 'Regular',
        price: 19.99,
        currency: 'USD',
        item: exampleItem,
        supported_until: '2027-05-22T10:00:00Z',
        downloaded: true,
        date: '2026-11-22T10:00:00Z',
      },
    ],
  });

/**
 * One documented error response: its description, the exact messages it can carry (an enum,
 * docs/interface-b.md) and an example body for each. Inline rather than a shared component, so
 * each status lists only its own messages.
 */
export function errorResponse(description: string, ...messages: [string, ...string[]]) {
  return z
    .object({
      status: z.literal('error'),
      msg: z.enum(messages).describe('What went wrong, byte for byte one of these messages.'),
    })
    .meta({ description, examples: messages.map((m) => ({ status: 'error', msg: m })) });
}

const success = z.literal('success');

export const accountResponse = z.object({ status: success, data: accountSchema });
export const itemsResponse = z.object({ status: success, items: z.array(itemSchema) });
export const itemResponse = z.object({ status: success, item: itemSchema });
export const validationResponse = z.object({ status: success, data: z.object({ purchase: purchaseSchema }) });

/** Errors every seller API operation can answer. */
export const commonErrors = {
  400: errorResponse('Unparseable JSON or form body, or a JSON body that is not an object.', msg.invalidRequest),
  401: errorResponse(
    'api_key missing, empty, unknown, revoked, a spending or publisher key, or given twice with different values.',
    msg.invalidRequest,
  ),
  413: errorResponse('Body over 8 KB.', msg.payloadTooLarge),
  429: errorResponse('Rate limit (shared with the buyer API) exceeded; retry after Retry-After seconds.', msg.tooManyRequests),
  503: errorResponse('The database is unreachable; retry shortly.', msg.unavailable),
};


/** Either of the two ways to send the key that OpenAPI can describe (it can also go in the body). */
export const catalogSecurity: Record<string, string[]>[] = [{ apiKeyQuery: [] }, { apiKeyBearer: [] }];

export const apiKeyBodyField = z
  .string()
  .optional()
  .describe('The API key, when not sent in the query string or as Authorization: Bearer. Spending keys are refused.');
