/** The statements of an export (src/services/exports.ts): its owners' projects, their session totals, a project's sessions in id order. */
import type { ProjectRow } from './projects';
import { SESSION_COLUMNS } from './sessions';
import type { SessionRow } from '../domain/session-row';
import { marks, type Sql } from './sql';

const PROJECT_COLUMNS = 'id, ownerId, ownerType, name, icon, color, createdAt, updatedAt';

/** An owner whose projects an export takes: a user (their personal projects) or a team. */
export interface ExportOwner {
  type: 'user' | 'team';
  id: string;
}

/** The projects of these owners (all, or those among `ids`). */
export function projectsOfOwners(db: Sql, owners: readonly ExportOwner[], ids?: readonly string[]): Promise<ProjectRow[]> {
  if ((ids && ids.length === 0) || owners.length === 0) return Promise.resolve([]);
  const where = owners.map(() => '(ownerType = ? AND ownerId = ?)').join(' OR ');
  return db.query<ProjectRow>(
    `SELECT ${PROJECT_COLUMNS} FROM projects WHERE (${where})${ids ? ` AND id IN (${marks(ids)})` : ''}`,
    ...owners.flatMap((o) => [o.type, o.id]),
    ...(ids ?? []),
  );
}

/** How many sessions these projects hold and the bytes of their content (markdown, raw data, session data), from the rows alone. */
export async function sessionTotalsOfProjects(db: Sql, projectIds: readonly string[]): Promise<{ sessions: number; bytes: number }> {
  if (projectIds.length === 0) return { sessions: 0, bytes: 0 };
  const [t] = await db.query<{ n: number; bytes: number }>(
    `SELECT COUNT(*) AS n, COALESCE(SUM(markdownSize + rawDataSize + sessionDataSize), 0) AS bytes FROM sessions WHERE projectId IN (${marks(projectIds)})`,
    ...projectIds,
  );
  return { sessions: Number(t.n), bytes: Number(t.bytes) };
}

/** Up to `limit` sessions of a project after `afterId`, in id order (ids are lower-case UUIDs: the same order in any collation). */
export function sessionsOfProjectAfter(db: Sql, projectId: string, afterId: string | null, limit: number): Promise<SessionRow[]> {
  return afterId === null
    ? db.query<SessionRow>(`SELECT ${SESSION_COLUMNS} FROM sessions s WHERE s.projectId = ? ORDER BY s.id LIMIT ?`, projectId, limit)
    : db.query<SessionRow>(`SELECT ${SESSION_COLUMNS} FROM sessions s WHERE s.projectId = ? AND s.id > ? ORDER BY s.id LIMIT ?`, projectId, afterId, limit);
}
