import { count } from 'drizzle-orm';
import type { Database } from '../db/client.js';
import { workspaces } from '../db/schema/index.js';
import { seedCatalogDemo } from '../domain/catalog/demo.js';
import { createKey } from '../domain/keys/key-service.js';
import { upsertOutlets } from '../domain/outlets/catalog-service.js';
import { generateOutlets, runDomainTag } from '../domain/outlets/generator.js';
import { createPublisher } from '../domain/publishers/publisher-service.js';
import { createBrandKit } from '../domain/workspaces/brand-kits.js';
import { createProject } from '../domain/workspaces/projects.js';
import { createWorkspace } from '../domain/workspaces/workspace-service.js';

export interface DemoKeys {
  workspaceId: number;
  readOnlyKey: string;
  spendingKey: string;
  publisherId: number;
  publisherKey: string;
  /** Interface B: a valid purchase code of the demo workspace (the seller). */
  purchaseCode?: string;
}

/** How many synthetic outlets the demo publisher gets, and the generator seed (fixed: same demo every time). */
export const DEMO_OUTLETS = 300;
export const DEMO_OUTLET_SEED = 2024;

/** Seeds the demo once: only when the database holds no workspace at all. */
export async function seedDemoIfEmpty(database: Pick<Database, 'db' | 'pool'>, feeRate: number): Promise<DemoKeys | undefined> {
  const { db, pool } = database;
  const [row] = await db.select({ n: count() }).from(workspaces);
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
  const readOnly = await createKey(db, { workspaceId: ws.id, name: 'Demo read-only key' });
  const spending = await createKey(db, { workspaceId: ws.id, name: 'Demo spending key', canPlaceOrders: true });
  const publisher = await createPublisher(db, 'Demo Publisher');
  // The same domain convention as `outlets generate --publisher <id> --seed 2024`, so the demo's
  // domains can't collide with outlets other publishers generated before the demo was seeded.
  const outlets = generateOutlets(DEMO_OUTLETS, DEMO_OUTLET_SEED, { domainTag: runDomainTag(publisher.id, DEMO_OUTLET_SEED) });
  await upsertOutlets(pool, publisher.id, outlets, feeRate);
  // Interface B: the demo workspace is also a seller of digital items.
  const catalog = await seedCatalogDemo({ db, pool }, ws.id);
  return {
    workspaceId: ws.id,
    readOnlyKey: readOnly.key,
    spendingKey: spending.key,
    publisherId: publisher.id,
    publisherKey: publisher.key,
    purchaseCode: catalog.purchaseCode,
  };
}

export function describeDemo(keys: DemoKeys, baseUrl: string): string {
  return [
    '',
    'Demo data created. These keys are shown once; only their hashes are stored.',
    `  read-only key (workspace ${keys.workspaceId}): ${keys.readOnlyKey}`,
    `  spending key  (workspace ${keys.workspaceId}): ${keys.spendingKey}`,
    `  publisher key (publisher ${keys.publisherId}): ${keys.publisherKey}`,
    '',
    'Try it:',
    `  curl -s ${baseUrl}/api/v1/me -H 'Authorization: Bearer ${keys.readOnlyKey}'`,
    ...(keys.purchaseCode
      ? [
          `  curl -s ${baseUrl}/api/purchases/validation -d api_key=${keys.readOnlyKey} -d purchase_code=${keys.purchaseCode}`,
          `  (Interface B; demo purchase code: ${keys.purchaseCode})`,
        ]
      : []),
    '',
  ].join('\n');
}
