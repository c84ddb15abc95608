/** The projects store: every statement on `projects`, and the per-project aggregates of its sessions. */
import type { ProjectModel, SessionModel } from '../generated/prisma/models';
import { inScopes, marks, prepared, type Sql } from './sql';
import type { DriverRow } from '../domain/driver-row';

/** A project's row (prisma/schema.prisma's `Project`, as the driver returns it). ownerType is 'user' or 'team'. */
export type ProjectRow = Pick<DriverRow<ProjectModel>, 'id' | 'ownerId' | 'ownerType' | 'name' | 'icon' | 'color' | 'createdAt' | 'updatedAt'> & {
  /** The owner's name (a user's name, else email; a team's name), when the read selected it. */
  ownerName?: string | null;
};

/** A project's aggregates over its sessions (COUNT and SUM come back as numbers: src/data/sql.ts). */
export interface ProjectStatsRow {
  sessionCount: number;
  totalMarkdownSize: number;
  lastSessionUpdate: SessionModel['updatedAt'] | null;
}

/** A project's own retention and legal hold (BOOLEAN: 0 or 1). */
export type ProjectPolicyRow = Pick<DriverRow<ProjectModel>, 'retentionDays' | 'legalHold'>;

type ProjectWithStatsRow = ProjectRow & ProjectPolicyRow & ProjectStatsRow;

/** The owner's name, for a `projects p` row: a team's name, a user's name (else email). */
export const OWNER_NAME =
  "CASE p.ownerType WHEN 'team' THEN (SELECT t.name FROM teams t WHERE t.id = p.ownerId) " +
  'ELSE (SELECT COALESCE(u.name, u.email) FROM users u WHERE u.id = p.ownerId) END AS ownerName';
const PROJECT_COLUMNS = `p.id, p.ownerId, p.ownerType, p.name, p.icon, p.color, p.createdAt, p.updatedAt, ${OWNER_NAME}`;
const STATS_COLUMNS =
  'p.retentionDays, p.legalHold, COUNT(s.id) AS sessionCount, COALESCE(SUM(s.markdownSize), 0) AS totalMarkdownSize, MAX(s.updatedAt) AS lastSessionUpdate';

/** The projects of these owner scopes (all, or those among `ids`) with their aggregates, most recently active first, in one statement. */
export function projectsWithStats(db: Sql, scopes: readonly string[], ids?: readonly string[]): Promise<ProjectWithStatsRow[]> {
  return db.query<ProjectWithStatsRow>(
    `SELECT ${PROJECT_COLUMNS}, ${STATS_COLUMNS}
       FROM projects p LEFT JOIN sessions s ON s.projectId = p.id
      WHERE ${inScopes('p.ownerId', scopes)}${ids ? ` AND p.id IN (${marks(ids)})` : ''}
      GROUP BY p.id
      ORDER BY COALESCE(MAX(s.updatedAt), p.updatedAt) DESC, p.id ASC`,
    ...scopes,
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
  const rows = await db.query<ProjectRow>(`SELECT ${PROJECT_COLUMNS} FROM projects p WHERE p.id = ?`, projectId);
  return rows[0];
}

const PROJECT_OWNER_SQL = prepared('SELECT p.ownerId FROM projects p WHERE p.id = ?');

/** The project's owner (all a read's access check needs of it), or undefined when there is no such project. */
export async function projectOwnerId(db: Sql, projectId: string): Promise<string | undefined> {
  return (await db.query<{ ownerId: string }>(PROJECT_OWNER_SQL, projectId))[0]?.ownerId;
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

/**
 * Holds the row of a would-be project owner (a user or a team) in share mode until the
 * transaction ends: a delete of that user or team (which locks the row for update first) waits
 * and then sees the new project. False when the owner is gone.
 */
export async function lockOwnerShared(tx: Sql, ownerType: 'user' | 'team', ownerId: string): Promise<boolean> {
  return (await tx.query(`SELECT id FROM ${ownerType === 'team' ? 'teams' : 'users'} WHERE id = ? LOCK IN SHARE MODE`, ownerId)).length === 1;
}

/** Inserts the project unless one with its id exists; returns whether it did. */
export async function insertProjectIfAbsent(db: Sql, p: ProjectRow): Promise<boolean> {
  const n = await db.execute(
    'INSERT IGNORE INTO projects (id, ownerId, ownerType, name, icon, color, createdAt, updatedAt) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
    p.id,
    p.ownerId,
    p.ownerType,
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

/** Gives the project to another owner (its sessions follow: moveSessionsOfProject). */
export async function setProjectOwner(tx: Sql, projectId: string, ownerType: 'user' | 'team', ownerId: string, updatedAt: Date): Promise<void> {
  await tx.execute('UPDATE projects SET ownerType = ?, ownerId = ?, updatedAt = ? WHERE id = ?', ownerType, ownerId, updatedAt, projectId);
}

/** How many projects the owner (a team) has. */
export async function projectCountOf(db: Sql, ownerId: string): Promise<number> {
  const [r] = await db.query<{ n: number }>('SELECT COUNT(*) AS n FROM projects WHERE ownerId = ?', ownerId);
  return r.n;
}

/** The ids of a user's own projects (not their teams'), locked for the rest of the transaction. */
export async function lockPersonalProjectIds(tx: Sql, userId: string): Promise<string[]> {
  const rows = await tx.query<{ id: string }>("SELECT id FROM projects WHERE ownerType = 'user' AND ownerId = ? ORDER BY id FOR UPDATE", userId);
  return rows.map((r) => r.id);
}

/** The ids of a project's sessions (a deletion or a move announces each). */
export async function sessionIdsOfProject(tx: Sql, projectId: string): Promise<string[]> {
  return (await tx.query<{ id: string }>('SELECT id FROM sessions WHERE projectId = ?', projectId)).map((r) => r.id);
}

/** Deletes the project; its sessions, content and labels go with it (foreign keys cascade). */
export async function deleteProjectRow(tx: Sql, projectId: string): Promise<void> {
  await tx.execute('DELETE FROM projects WHERE id = ?', projectId);
}
