/**
 * The audit log's store (table `audit_entries`): appended, read newest first, pruned by age.
 * Nothing here updates an entry.
 */
import type { Sql } from './sql';

interface NewAuditEntry {
  actorUserId: string | null;
  /** The label when the actor is not a user (or a user id that names no one). */
  actorLabel: string;
  action: string;
  targetType: string;
  targetId: string | null;
  teamId: string | null;
  projectId: string | null;
  ip: string | null;
  result: string;
  detail: string | null;
}

/**
 * Appends an entry. The actor's label is the user's email when the id names a user (read in the
 * same statement), and the team is the project's owning team when none is given.
 */
export async function insertAuditEntry(db: Sql, e: NewAuditEntry): Promise<void> {
  await db.execute(
    `INSERT INTO audit_entries (at, actorUserId, actorLabel, action, targetType, targetId, teamId, projectId, ip, result, detail)
     SELECT NOW(3), ?, COALESCE((SELECT email FROM users WHERE id = ?), ?), ?, ?, ?,
            COALESCE(?, (SELECT ownerId FROM projects WHERE id = ? AND ownerType = 'team')), ?, ?, ?, ?`,
    e.actorUserId,
    e.actorUserId,
    e.actorLabel,
    e.action,
    e.targetType,
    e.targetId,
    e.teamId,
    e.projectId,
    e.projectId,
    e.ip,
    e.result,
    e.detail,
  );
}
