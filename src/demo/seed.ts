import { randomBytes } from 'node:crypto';
import { and, count, eq, inArray, isNull } from 'drizzle-orm';
import type { Database } from '../db/client.js';
import { type Db, orm } from '../db/handle.js';
import { prepareDatabase } from '../db/migrate.js';
import { apiKeys, appSecrets, workspaces } from '../db/schema/index.js';
import { seedCatalogDemo } from './catalog-demo.js';
import { createKey } from '../domain/keys/key-service.js';
import { upsertOutlets } from '../domain/outlets/outlet-upsert.js';
import { generateOutlets, runDomainTag } from './outlet-generator.js';
import { createPublisher } from '../domain/publishers/publisher-service.js';
import { openPublisherPayable } from '../domain/ledger/ledger-service.js';
import { createBrandKit } from '../domain/workspaces/brand-kits.js';
import { createProject } from '../domain/workspaces/projects.js';
import { createWorkspace } from '../domain/workspaces/workspace-service.js';
import { addMember } from '../domain/users/memberships.js';
import { createUser, setPassword } from '../domain/users/user-service.js';

export interface DemoKeys {
  workspaceId: number;
  readOnlyKey: string;
  spendingKey: string;
  publisherId: number;
  publisherKey: string;
  /** The seller API: a valid purchase code of the demo workspace (the seller). */
  purchaseCode?: string;
  /** The console's demo user, owner of the demo workspace (also the demo seller) and publisher. */
  user?: { email: string; password: string };
}

/** The console's demo user; the password is new on every seed and shown once. */
export const DEMO_USER = { email: 'dana@demo.example', name: 'Dana Demo' };

const demoPassword = () => randomBytes(18).toString('base64url');

/** How many synthetic outlets the demo publisher gets, and the generator seed (fixed: same demo every time). */
export const DEMO_OUTLETS = 300;
export const DEMO_OUTLET_SEED = 2024;

/**
 * The app_secrets row that stands for demo keys created but not yet shown to anyone: it holds the
 * keys' ids (never the keys) and is deleted once they are printed. A start that finds it (the one
 * that seeded died before printing) replaces those keys, because nobody can have them.
 */
export const DEMO_KEYS_UNSHOWN = 'demo_keys_unshown';

interface UnshownDemo {
  workspaceId: number;
  publisherId: number;
  keyIds: number[];
  purchaseCode?: string;
  /** The demo user, whose password (like the keys) was never shown; absent in older databases. */
  userId?: number;
}

// The publisher's first key is named by createPublisher ('<name> key').
/** The demo publisher's payable balance at the start: $250.00, above the default PAYOUT_MIN_CENTS. */
export const DEMO_PAYABLE_CENTS = 25_000;

const DEMO_KEY_NAMES = { readOnly: 'Demo read-only key', spending: 'Demo spending key', publisher: 'Demo Publisher key' };

async function recordUnshown(db: Db, demo: UnshownDemo): Promise<void> {
  const value = JSON.stringify(demo);
  await orm(db).insert(appSecrets).values({ name: DEMO_KEYS_UNSHOWN, value }).onConflictDoUpdate({ target: appSecrets.name, set: { value } });
}

/**
 * The demo keys to print on this start: new ones when the database is empty (the demo is seeded),
 * replacements when earlier demo keys were never shown (those are revoked), else none. Call it
 * under the setup lock, print the keys, then call markDemoShown.
 */
export async function demoKeysToShow(database: Pick<Database, 'pool'>, feeRate: number): Promise<DemoKeys | undefined> {
  const seeded = await seedDemoIfEmpty(database, feeRate);
  if (seeded) return seeded;
  const { pool: db } = database;
  const [row] = await orm(db).select({ value: appSecrets.value }).from(appSecrets).where(eq(appSecrets.name, DEMO_KEYS_UNSHOWN));
  if (!row) return undefined;
  const unshown = JSON.parse(row.value) as UnshownDemo;
  // Revoked first: should this start die half-way, the next one revokes again and issues anew.
  if (unshown.keyIds.length > 0) {
    await orm(db).update(apiKeys).set({ revokedAt: new Date() }).where(and(inArray(apiKeys.id, unshown.keyIds), isNull(apiKeys.revokedAt)));
  }
  const readOnly = await createKey(db, { workspaceId: unshown.workspaceId, name: DEMO_KEY_NAMES.readOnly });
  const spending = await createKey(db, { workspaceId: unshown.workspaceId, name: DEMO_KEY_NAMES.spending, canPlaceOrders: true });
  const publisher = await createKey(db, { publisherId: unshown.publisherId, name: DEMO_KEY_NAMES.publisher });
  await recordUnshown(db, { ...unshown, keyIds: [readOnly.id, spending.id, publisher.id] });
  // Nobody saw the demo user's password either: a new one, shown with the new keys.
  const password = demoPassword();
  if (unshown.userId !== undefined) await setPassword(db, unshown.userId, password);
  return {
    ...(unshown.userId !== undefined ? { user: { email: DEMO_USER.email, password } } : {}),
    workspaceId: unshown.workspaceId,
    readOnlyKey: readOnly.key,
    spendingKey: spending.key,
    publisherId: unshown.publisherId,
    publisherKey: publisher.key,
    ...(unshown.purchaseCode ? { purchaseCode: unshown.purchaseCode } : {}),
  };
}

/** The demo keys have been printed: a later start leaves them alone. */
export async function markDemoShown(db: Db): Promise<void> {
  await orm(db).delete(appSecrets).where(eq(appSecrets.name, DEMO_KEYS_UNSHOWN));
}

/** Seeds the demo once: only when the database holds no workspace at all. */
export async function seedDemoIfEmpty(database: Pick<Database, 'pool'>, feeRate: number): Promise<DemoKeys | undefined> {
  const { pool } = database;
  const db = pool;
  const [row] = await orm(db).select({ n: count() }).from(workspaces);
  if ((row?.n ?? 0) > 0) return undefined;
  const ws = await createWorkspace(db, {
    name: 'Demo Workspace',
    currency: 'USD',
    balanceCents: 500_000,
    ownerFirstName: 'Dana',
    ownerLastName: 'Demo',
    ownerEmail: 'dana@demo.example',
    username: 'dana_demo',
  });
  await createProject(db, ws.id, 'Spring launch');
  await createBrandKit(db, ws.id, {
    name: 'Demo brand',
    website: 'https://demo.example',
    description: 'A demo brand for trying the API.',
    tone: 'friendly, precise',
    anchorTexts: ['demo product', 'Demo Inc'],
  });
  const readOnly = await createKey(db, { workspaceId: ws.id, name: DEMO_KEY_NAMES.readOnly });
  const spending = await createKey(db, { workspaceId: ws.id, name: DEMO_KEY_NAMES.spending, canPlaceOrders: true });
  const publisher = await createPublisher(db, 'Demo Publisher');
  // Earnings from before the demo, payable now: a payout can be tried at once (a placement's own money
  // stays pending for its guarantee window, and the demo's links never pass a check). docs/billing.md.
  await openPublisherPayable(db, publisher.id, DEMO_PAYABLE_CENTS);
  const [publisherKey] = await orm(db).select({ id: apiKeys.id }).from(apiKeys).where(eq(apiKeys.publisherId, publisher.id));
  const password = demoPassword();
  const user = await createUser(db, { ...DEMO_USER, password });
  await addMember(db, { workspaceId: ws.id }, user.id, 'owner');
  await addMember(db, { publisherId: publisher.id }, user.id, 'owner');
  const unshown: UnshownDemo = { workspaceId: ws.id, publisherId: publisher.id, keyIds: [readOnly.id, spending.id, publisherKey!.id], userId: user.id };
  await recordUnshown(db, unshown);
  // The same domain convention as `outlets generate --publisher <id> --seed 2024`, so the demo's
  // domains can't collide with outlets other publishers generated before the demo was seeded.
  const outlets = generateOutlets(DEMO_OUTLETS, DEMO_OUTLET_SEED, { domainTag: runDomainTag(publisher.id, DEMO_OUTLET_SEED) });
  await upsertOutlets(pool, publisher.id, outlets, feeRate);
  // The seller API: the demo workspace is also a seller of digital items.
  const catalog = await seedCatalogDemo({ pool }, ws.id);
  await recordUnshown(db, { ...unshown, purchaseCode: catalog.purchaseCode });
  return {
    workspaceId: ws.id,
    readOnlyKey: readOnly.key,
    spendingKey: spending.key,
    publisherId: publisher.id,
    publisherKey: publisher.key,
    purchaseCode: catalog.purchaseCode,
    user: { email: DEMO_USER.email, password },
  };
}

export function describeDemo(keys: DemoKeys, baseUrl: string): string {
  return [
    '',
    'Demo data created. These keys and the password are shown once; only their hashes are stored.',
    ...(keys.user
      ? [
          `  console: open ${baseUrl}/app and sign in as ${keys.user.email} with the password ${keys.user.password}`,
          `           (owner of workspace ${keys.workspaceId}, the demo seller, and of publisher ${keys.publisherId})`,
        ]
      : []),
    `  read-only key (workspace ${keys.workspaceId}): ${keys.readOnlyKey}`,
    `  spending key  (workspace ${keys.workspaceId}): ${keys.spendingKey}`,
    `  publisher key (publisher ${keys.publisherId}): ${keys.publisherKey}`,
    '',
    'Try it:',
    `  curl -s ${baseUrl}/api/v1/me -H 'Authorization: Bearer ${keys.readOnlyKey}'`,
    ...(keys.purchaseCode
      ? [
          `  curl -s ${baseUrl}/api/purchases/validation -d api_key=${keys.readOnlyKey} -d purchase_code=${keys.purchaseCode}`,
          `  (the seller API; demo purchase code: ${keys.purchaseCode})`,
        ]
      : []),
    '',
  ].join('\n');
}

const DEMO_KEYS_SHOWN_BEFORE =
  'The demo keys and password were printed on the first start and cannot be shown again. Another key for the demo workspace,\n' +
  'and a new password for the demo user:\n' +
  '  npm run -s admin -- key create --workspace 1 --can-place-orders\n' +
  `  npm run -s admin -- user set-password --email ${DEMO_USER.email}\n`;

/**
 * At a start (once its port is bound): seeds the demo into an empty database and prints its keys
 * to `out`, or prints new keys for demo keys that were never shown. Under the setup lock, so a
 * process starting beside this one sees the keys either unseeded or shown. `embedded`: a start on
 * the embedded PostgreSQL also says how to get a key when the demo's were printed before.
 */
export async function showDemoOnStart(
  database: Pick<Database, 'pool'>,
  opts: { feeRate: number; baseUrl: string; embedded: boolean; out: NodeJS.WritableStream },
): Promise<void> {
  const write = (text: string) => new Promise<void>((resolve, reject) => opts.out.write(text, (err) => (err ? reject(err) : resolve())));
  await prepareDatabase(database.pool, async () => {
    const demo = await demoKeysToShow(database, opts.feeRate);
    if (!demo) {
      // Keys are stored only as hashes: those printed before cannot be shown again.
      if (opts.embedded) await write(DEMO_KEYS_SHOWN_BEFORE);
      return;
    }
    await write(describeDemo(demo, opts.baseUrl) + '\n');
    await markDemoShown(database.pool);
  });
}
