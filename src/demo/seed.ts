import { count } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { workspaces } from '../db/schema/index.js';
import { createKey } from '../domain/keys/key-service.js';
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
}

/** Seeds the demo once: only when the database holds no workspace at all. */
export async function seedDemoIfEmpty(db: Db): Promise<DemoKeys | undefined> {
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
  return {
    workspaceId: ws.id,
    readOnlyKey: readOnly.key,
    spendingKey: spending.key,
    publisherId: publisher.id,
    publisherKey: publisher.key,
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
    '',
  ].join('\n');
}
