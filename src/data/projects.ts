/** The projects store: every statement on `projects`, and the per-project aggregates of its sessions. */
import { marks, type Sql } from './sql';

export interface ProjectRow {
  id: string;
  ownerId: string;
  name: string;
  icon: string;
  color: string;
  createdAt: Date;
  updatedAt: Date;
}

export interface ProjectStatsRow {
  sessionCount: number;
  totalMarkdownSize: number;
  lastSessionUpdate: Date | null;
}

export type ProjectWithStatsRow = ProjectRow & ProjectStatsRow;

const PROJECT_COLUMNS = 'p.id, p.ownerId, p.name, p.icon, p.color, p.createdAt, p.updatedAt';
const STATS_COLUMNS =
  'COUNT(s.id) AS sessionCount, COALESCE(SUM(s.markdownSize), 0) AS totalMarkdownSize, MAX(s.updatedAt) AS lastSessionUpdate';

/** An owner's projects (all, or those among `ids`) with their aggregates, most recently active first, in one statement. */
export function projectsWithStats(db: Sql, ownerId: string, ids?: readonly string[]): Promise<ProjectWithStatsRow[]> {
  return db.query<ProjectWithStatsRow>(
    `SELECT ${PROJECT_COLUMNS}, ${STATS_COLUMNS}
       FROM projects p LEFT JOIN sessions s ON s.projectId = p.id
      WHERE p.ownerId = ?${ids ? ` AND p.id IN (${marks(ids)})` : ''}
      GROUP BY p.id
      ORDER BY COALESCE(MAX(s.updatedAt), p.updatedAt) DESC, p.id ASC`,
    ownerId,
    ...(ids ?? []),
  );
}

/** One project with its aggregates (whoever owns it). */
export async function projectWithStats(db: Sql, projectId: string): Promise<ProjectWithStatsRow | undefined> {
  const [row] = await db.query<ProjectWithStatsRow>(
    `SELECT ${PROJECT_COLUMNS}, ${STATS_COLUMNS} FROM projects p LEFT JOIN sessions s ON s.projectId = p.id
      WHERE p.id = ? GROUP BY p.id`,
    projectId,
  );
  return row;
}

export async function projectById(db: Sql, projectId: string): Promise<ProjectRow | undefined> {
  const rows = await db.query<ProjectRow>('SELECT id, ownerId, name, icon, color, createdAt, updatedAt FROM projects WHERE id = ?', projectId);
  return rows[0];
}

/**
 * The project's owner, read under a lock for the rest of the transaction: `share` keeps the
 * project from being deleted meanwhile (uploads), `update` is the deleter's own.
 */
export async function lockProjectOwner(tx: Sql, projectId: string, mode: 'share' | 'update'): Promise<string | undefined> {
  const rows = await tx.query<{ ownerId: string }>(
    `SELECT ownerId FROM projects WHERE id = ? ${mode === 'share' ? 'LOCK IN SHARE MODE' : 'FOR UPDATE'}`,
    projectId,
  );
  return rows[0]?.ownerId;
}

/** Inserts the project unless one with its id exists; returns whether it did. */
export async function insertProjectIfAbsent(db: Sql, p: ProjectRow): Promise<boolean> {
  const n = await db.execute(
    'INSERT IGNORE INTO projects (id, ownerId, name, icon, color, createdAt, updatedAt) VALUES (?, ?, ?, ?, ?, ?, ?)',
    p.id,
    p.ownerId,
    p.name,
    p.icon,
    p.color,
    p.createdAt,
    p.updatedAt,
  );
  return n > 0;
}

/** Changes the given appearance fields and the update time. */
export async function updateProjectAppearance(
  db: Sql,
  projectId: string,
  fields: { name?: string; icon?: string; color?: string },
  updatedAt: Date,
): Promise<void> {
  const cols = (['name', 'icon', 'color'] as const).filter((c) => fields[c] !== undefined);
  await db.execute(
    `UPDATE projects SET ${[...cols.map((c) => `${c} = ?`), 'updatedAt = ?'].join(', ')} WHERE id = ?`,
    ...cols.map((c) => fields[c]),
    updatedAt,
    projectId,
  );
}

/** Deletes the project; its sessions, content and labels go with it (foreign keys cascade). */
export async function deleteProjectRow(tx: Sql, projectId: string): Promise<void> {
  await tx.execute('DELETE FROM projects WHERE id = ?', projectId);
}
