import { type Db, orm } from '../../db/handle.js';
import { brandKits } from '../../db/schema/index.js';
import { requireWorkspace } from './workspace-service.js';

export interface NewBrandKit {
  name: string;
  website?: string;
  description?: string;
  tone?: string;
  anchorTexts?: string[];
}

export async function createBrandKit(db: Db, workspaceId: number, kit: NewBrandKit) {
  await requireWorkspace(db, workspaceId);
  const [row] = await orm(db)
    .insert(brandKits)
    .values({
      workspaceId,
      name: kit.name,
      website: kit.website ?? null,
      description: kit.description ?? null,
      tone: kit.tone ?? null,
      defaultAnchorTexts: kit.anchorTexts ?? [],
    })
    .returning();
  return { id: row!.id, name: row!.name };
}
