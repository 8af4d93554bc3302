import type { Db } from '../../db/client.js';
import { projects } from '../../db/schema/index.js';
import { requireWorkspace } from './workspace-service.js';

export async function createProject(db: Db, workspaceId: number, name: string) {
  await requireWorkspace(db, workspaceId);
  const [row] = await db.insert(projects).values({ workspaceId, name }).returning();
  return { id: row!.id, name: row!.name };
}
