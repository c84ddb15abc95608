/**
 * The audit log's store (table `audit_entries`): appended, read newest first, pruned by age.
 * Nothing here updates an entry.
 */
import type { AuditEntryModel } from '../generated/prisma/models';
import type { Sql } from './sql';
import type { DriverRow } from '../domain/driver-row';

export type AuditRow = DriverRow<AuditEntryModel>;

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
export interface AuditFilter {
  /** Only entries of these teams (a team admin's view); undefined: all. */
  teamIds?: string[];
  /** The actor's user id or label. */
  actor?: string;
  action?: string;
  targetType?: string;
  targetId?: string;
  from?: Date;
  to?: Date;
  result?: string;
  /** Entries older than this id (the cursor: newest first). */
  beforeId?: number;
}

function whereOf(f: AuditFilter): { where: string; values: unknown[] } {
  const parts: string[] = [];
  const values: unknown[] = [];
  if (f.teamIds) {
    if (f.teamIds.length === 0) parts.push('FALSE');
    else {
      parts.push(`teamId IN (${f.teamIds.map(() => '?').join(', ')})`);
      values.push(...f.teamIds);
    }
  }
  if (f.actor !== undefined) {
    parts.push('(actorUserId = ? OR actorLabel = ?)');
    values.push(f.actor, f.actor);
  }
  const eq = (column: string, v: unknown) => {
    if (v === undefined) return;
    parts.push(`${column} = ?`);
    values.push(v);
  };
  eq('action', f.action);
  eq('targetType', f.targetType);
  eq('targetId', f.targetId);
  eq('result', f.result);
  if (f.from) {
    parts.push('at >= ?');
    values.push(f.from);
  }
  if (f.to) {
    parts.push('at < ?');
    values.push(f.to);
  }
  if (f.beforeId !== undefined) {
    parts.push('id < ?');
    values.push(f.beforeId);
  }
  return { where: parts.length ? `WHERE ${parts.join(' AND ')}` : '', values };
}

const COLUMNS = 'id, at, actorUserId, actorLabel, action, targetType, targetId, teamId, projectId, ip, result, detail';

/** Up to `limit` entries matching `f`, newest first. */
export async function listAuditEntries(db: Sql, f: AuditFilter, limit: number): Promise<AuditRow[]> {
  const { where, values } = whereOf(f);
  return db.query<AuditRow>(`SELECT ${COLUMNS} FROM audit_entries ${where} ORDER BY id DESC LIMIT ?`, ...values, limit);
}

/** Deletes up to `batch` entries written before `before` (oldest first); returns how many went. */
export async function pruneAuditEntries(db: Sql, before: Date, batch: number): Promise<number> {
  return db.execute('DELETE FROM audit_entries WHERE at < ? ORDER BY id LIMIT ?', before, batch);
}
