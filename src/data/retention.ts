/** Retention and legal hold: the settings of projects and teams, the hold check every deletion makes, and the sweep's reads. */
import { marks, type Sql } from './sql';

/** What a PATCH changes of a project's or team's retention and hold (absent: unchanged). */
export interface PolicyChange {
  retentionDays?: number | null;
  legalHold?: boolean;
}

async function setPolicy(db: Sql, table: 'projects' | 'teams', id: string, change: PolicyChange, updatedAt?: Date): Promise<void> {
  const cols: Array<[string, unknown]> = [];
  if (change.retentionDays !== undefined) cols.push(['retentionDays', change.retentionDays]);
  if (change.legalHold !== undefined) cols.push(['legalHold', change.legalHold]);
  if (updatedAt) cols.push(['updatedAt', updatedAt]);
  if (cols.length === 0) return;
  await db.execute(`UPDATE ${table} SET ${cols.map(([c]) => `${c} = ?`).join(', ')} WHERE id = ?`, ...cols.map(([, v]) => v), id);
}

/** Changes a project's retention and hold (and its update time). */
export const setProjectPolicy = (db: Sql, projectId: string, change: PolicyChange, updatedAt: Date) => setPolicy(db, 'projects', projectId, change, updatedAt);

/** Changes a team's retention and hold. */
export const setTeamPolicy = (db: Sql, teamId: string, change: PolicyChange) => setPolicy(db, 'teams', teamId, change);

/**
 * Whether the project, or the team that owns it, is on legal hold. Read under a shared lock of
 * both rows for the rest of the transaction: a hold set meanwhile waits for the deletion to
 * commit, and a deletion that starts after it sees it.
 */
export async function projectOnHold(tx: Sql, projectId: string): Promise<boolean> {
  const rows = await tx.query<{ held: number }>(
    `SELECT p.legalHold OR COALESCE(t.legalHold, 0) AS held
       FROM projects p LEFT JOIN teams t ON p.ownerType = 'team' AND t.id = p.ownerId
      WHERE p.id = ? LOCK IN SHARE MODE`,
    projectId,
  );
  return rows[0]?.held === 1;
}

/** Whether the team is on legal hold (read under a shared lock, as projectOnHold). */
export async function teamOnHold(tx: Sql, teamId: string): Promise<boolean> {
  const rows = await tx.query<{ legalHold: number }>('SELECT legalHold FROM teams WHERE id = ? LOCK IN SHARE MODE', teamId);
  return rows[0]?.legalHold === 1;
}

/** The projects among `ids` that are on legal hold, themselves or through their team. */
export async function heldProjectsAmong(db: Sql, ids: readonly string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const rows = await db.query<{ id: string }>(
    `SELECT p.id FROM projects p LEFT JOIN teams t ON p.ownerType = 'team' AND t.id = p.ownerId
      WHERE p.id IN (${marks(ids)}) AND (p.legalHold OR COALESCE(t.legalHold, 0))`,
    ...ids,
  );
  return rows.map((r) => r.id);
}

/** A project whose sessions the sweep looks at: its effective retention (null: kept) and whether it is held. */
export interface RetentionOfProject {
  projectId: string;
  ownerId: string;
  days: number | null;
  held: number;
}

/**
 * Each project's effective retention: its own, else its team's, else `defaultDays`; with
 * `projectId`, that project only (none when it does not exist).
 */
export function retentionOfProjects(db: Sql, defaultDays: number | null, projectId?: string): Promise<RetentionOfProject[]> {
  return db.query<RetentionOfProject>(
    `SELECT p.id AS projectId, p.ownerId, COALESCE(p.retentionDays, t.retentionDays, ?) AS days, (p.legalHold OR COALESCE(t.legalHold, 0)) AS held
       FROM projects p LEFT JOIN teams t ON p.ownerType = 'team' AND t.id = p.ownerId${projectId === undefined ? '' : ' WHERE p.id = ?'}
      ORDER BY p.id`,
    defaultDays,
    ...(projectId === undefined ? [] : [projectId]),
  );
}

/** A session the sweep deletes. */
interface DueSession {
  id: string;
  userId: string;
  name: string;
  updatedAt: Date;
}

/** The project's sessions last updated before `cutoff`, oldest first (at most `limit`; the index on projectId, updatedAt). */
export function sessionsDue(db: Sql, projectId: string, cutoff: Date, limit: number): Promise<DueSession[]> {
  return db.query<DueSession>(
    'SELECT id, userId, name, updatedAt FROM sessions WHERE projectId = ? AND updatedAt < ? ORDER BY updatedAt, id LIMIT ?',
    projectId,
    cutoff,
    limit,
  );
}

/**
 * Deletes those of `ids` still last updated before `cutoff` (one updated meanwhile stays), with
 * their content rows, labels and share links (foreign keys cascade). Returns the deleted sessions
 * and the keys of the content objects they named (gone from the bucket once this commits).
 */
export async function deleteDueSessions(
  tx: Sql,
  projectId: string,
  ids: readonly string[],
  cutoff: Date,
): Promise<{ sessions: Array<Pick<DueSession, 'id' | 'userId'>>; objectKeys: string[] }> {
  const sessions = await tx.query<Pick<DueSession, 'id' | 'userId'>>(
    `SELECT id, userId FROM sessions WHERE projectId = ? AND id IN (${marks(ids)}) AND updatedAt < ? FOR UPDATE`,
    projectId,
    ...ids,
    cutoff,
  );
  if (sessions.length === 0) return { sessions, objectKeys: [] };
  const kept = sessions.map((s) => s.id);
  const objectKeys = (
    await tx.query<{ objectKey: string }>(`SELECT objectKey FROM session_objects WHERE projectId = ? AND sessionId IN (${marks(kept)})`, projectId, ...kept)
  ).map((r) => r.objectKey);
  await tx.execute(`DELETE FROM sessions WHERE projectId = ? AND id IN (${marks(kept)})`, projectId, ...kept);
  return { sessions, objectKeys };
}
