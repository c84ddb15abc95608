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
