/**
 * The writes of the sessions store (inside the caller's transaction): rows of `sessions` and
 * `session_labels`. Reads are src/data/sessions.ts.
 */
import { deleteContentPart } from './content';
import { ROW_KEYS, type LabelKind, type SessionRow } from '../domain/session-row';
import { marks, type Sql } from './sql';

const INSERT_SESSION = `INSERT INTO sessions (${ROW_KEYS.join(', ')}, hasGitBranches) VALUES (${marks(ROW_KEYS.length + 1)})`;

export async function insertSession(tx: Sql, row: SessionRow, hasGitBranches: boolean): Promise<void> {
  await tx.execute(
    INSERT_SESSION,
    ...ROW_KEYS.map((k) => row[k]),
    hasGitBranches,
  );
}

/**
 * Columns a new version keeps from the stored row: the key, the owner, who first uploaded it and
 * the cost (the usage write sets it). Every other column is replaced, a new one included.
 */
const KEPT = ['projectId', 'id', 'userId', 'uploadedBy', 'costUsd'] as const;
const REPLACED = ROW_KEYS.filter((k): k is Exclude<(typeof ROW_KEYS)[number], (typeof KEPT)[number]> => !(KEPT as readonly string[]).includes(k));
const REPLACE_SESSION = `UPDATE sessions SET ${REPLACED.map((k) => `${k} = ?`).join(', ')}, hasGitBranches = ? WHERE projectId = ? AND id = ?`;

/** A new version of the session replaces the stored one (an upload passes the stored creation time and title; an import its own). */
export async function replaceSession(tx: Sql, row: SessionRow, hasGitBranches: boolean): Promise<void> {
  await tx.execute(REPLACE_SESSION, ...REPLACED.map((k) => row[k]), hasGitBranches, row.projectId, row.id);
}

/** A version without session data drops the stored part. */
export async function deleteSessionData(tx: Sql, projectId: string, sessionId: string): Promise<void> {
  await deleteContentPart(tx, projectId, sessionId, 'session');
}

/** A patch: name, title and metadata (tags), with the new tag and time. */
export async function updateSessionNaming(tx: Sql, row: SessionRow): Promise<void> {
  await tx.execute(
    'UPDATE sessions SET name = ?, userTitle = ?, metadataJson = ?, etag = ?, redactionsJson = ?, updatedAt = ? WHERE projectId = ? AND id = ?',
    row.name, row.userTitle, row.metadataJson, row.etag, row.redactionsJson, row.updatedAt, row.projectId, row.id,
  );
}

/** A rescan's redaction: name, metadata columns, digests, tag, findings and time. */
export async function updateRedactedSession(tx: Sql, row: SessionRow): Promise<void> {
  await tx.execute(
    `UPDATE sessions SET name = ?, clientName = ?, clientVersion = ?, agentName = ?, deviceId = ?, metadataJson = ?,
            contentDigest = ?, sessionDataDigest = ?, etag = ?, redactionsJson = ?, updatedAt = ? WHERE projectId = ? AND id = ?`,
    row.name, row.clientName, row.clientVersion, row.agentName, row.deviceId, row.metadataJson,
    row.contentDigest, row.sessionDataDigest, row.etag, row.redactionsJson, row.updatedAt, row.projectId, row.id,
  );
}

/** Deletes the session held in this owner scope (content and labels cascade); returns how many rows went (0 or 1). */
export function deleteSessionRow(tx: Sql, ownerId: string, projectId: string, sessionId: string): Promise<number> {
  return tx.execute('DELETE FROM sessions WHERE projectId = ? AND id = ? AND userId = ?', projectId, sessionId, ownerId);
}

/** A project's move to another owner: its sessions and labels are read through the new scope from now on. */
export async function moveSessionsOfProject(tx: Sql, projectId: string, ownerId: string): Promise<void> {
  await tx.execute('UPDATE sessions SET userId = ? WHERE projectId = ?', ownerId, projectId);
  await tx.execute('UPDATE session_labels SET userId = ? WHERE projectId = ?', ownerId, projectId);
}

/** Writes the session's labels (kind, value); `replace` drops the old ones first. */
export async function writeLabels(
  tx: Sql,
  row: Pick<SessionRow, 'projectId' | 'id' | 'userId'>,
  labels: ReadonlyArray<readonly [LabelKind, string]>,
  replace: boolean,
): Promise<void> {
  if (replace) await tx.execute('DELETE FROM session_labels WHERE projectId = ? AND sessionId = ?', row.projectId, row.id);
  if (labels.length === 0) return;
  await tx.execute(
    `INSERT IGNORE INTO session_labels (projectId, sessionId, kind, value, userId) VALUES ${labels.map(() => '(?, ?, ?, ?, ?)').join(', ')}`,
    ...labels.flatMap(([kind, value]) => [row.projectId, row.id, kind, value, row.userId]),
  );
}

