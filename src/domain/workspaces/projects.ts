import { type Db, orm } from '../../db/handle.js';
import { projects } from '../../db/schema/index.js';
import { invalidInput } from '../errors.js';
import { requireWorkspace } from './workspace-service.js';

/** A project_id naming a project of another workspace, or none: the same words for plans and orders. */
export const notOwnProject = () => invalidInput({ project_id: ['is not a project of this workspace'] });

export async function createProject(db: Db, workspaceId: number, name: string) {
  await requireWorkspace(db, workspaceId);
  const [row] = await orm(db).insert(projects).values({ workspaceId, name }).returning();
  return { id: row!.id, name: row!.name };
}
