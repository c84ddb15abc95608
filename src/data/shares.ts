/**
 * The share links store (tables `shares` and `share_exchanges`). A share's state for a reader is
 * read in one statement together with everything that can end it (its session, the project's
 * owner, its creator's account and team role), so that deletion, disabling or a lost role holds
 * from the next request on every instance.
 */
import { keyMarks } from './sessions';
import type { ProjectModel, SessionModel, ShareExchangeModel, ShareModel, TeamMemberModel, UserModel } from '../generated/prisma/models';
import { marks, type Sql } from './sql';
import type { DriverRow } from '../domain/driver-row';

/** A share's row (prisma/schema.prisma's `Share`, as the driver returns it): every column. */
type ShareRow = DriverRow<ShareModel>;

/** A share with what decides whether its creator may still share the session. */
export type ShareState = ShareRow &
  Pick<DriverRow<ProjectModel>, 'ownerType' | 'ownerId'> &
  Pick<DriverRow<SessionModel>, 'uploadedBy'> & {
    creatorDisabledAt: UserModel['disabledAt'];
    /** The creator's role in the owning team (team projects), else null. */
    creatorTeamRole: TeamMemberModel['role'] | null;
  };

export type ShareListRow = ShareRow & {
  sessionName: SessionModel['name'];
  sessionUserTitle: SessionModel['userTitle'];
  sessionMetadataJson: SessionModel['metadataJson'];
};

/** An exchange of a snapshot; markdown null: hidden (not copied). */
export type SnapshotExchange = Pick<DriverRow<ShareExchangeModel>, 'number' | 'title' | 'size' | 'markdown'>;

const COLUMNS = `sh.id, sh.nonce, sh.projectId, sh.sessionId, sh.createdBy, sh.createdAt, sh.snapshotAt, sh.expiresAt,
  sh.audience, sh.hiddenJson, sh.title, sh.sessionCreatedAt, sh.agentName, sh.llmModelsJson, sh.exchangeCount, sh.views`;

const STATE = `SELECT ${COLUMNS}, p.ownerType, p.ownerId, s.uploadedBy, u.disabledAt AS creatorDisabledAt, tm.role AS creatorTeamRole
   FROM shares sh
   JOIN sessions s ON s.projectId = sh.projectId AND s.id = sh.sessionId
   JOIN projects p ON p.id = sh.projectId
   JOIN users u ON u.id = sh.createdBy
   LEFT JOIN team_members tm ON p.ownerType = 'team' AND tm.teamId = p.ownerId AND tm.userId = sh.createdBy`;

export async function shareStateByNonce(db: Sql, nonce: string): Promise<ShareState | undefined> {
  return (await db.query<ShareState>(`${STATE} WHERE sh.nonce = ?`, nonce))[0];
}

export async function shareStateById(db: Sql, id: string): Promise<ShareState | undefined> {
  return (await db.query<ShareState>(`${STATE} WHERE sh.id = ?`, id))[0];
}

const LIST = `SELECT ${COLUMNS}, s.name AS sessionName, s.userTitle AS sessionUserTitle, s.metadataJson AS sessionMetadataJson
   FROM shares sh JOIN sessions s ON s.projectId = sh.projectId AND s.id = sh.sessionId`;

export async function sharesOfSession(db: Sql, userId: string, projectId: string, sessionId: string): Promise<ShareListRow[]> {
  return db.query<ShareListRow>(
    `${LIST} WHERE sh.projectId = ? AND sh.sessionId = ? AND sh.createdBy = ? ORDER BY sh.createdAt DESC, sh.id`,
    projectId,
    sessionId,
    userId,
  );
}

/** The user's shares of several sessions in one statement (GraphQL's Session.shares over a list). */
export async function sharesOfSessions(db: Sql, userId: string, keys: ReadonlyArray<{ projectId: string; sessionId: string }>): Promise<ShareListRow[]> {
  if (!keys.length) return [];
  return db.query<ShareListRow>(
    `${LIST} WHERE sh.createdBy = ? AND (sh.projectId, sh.sessionId) IN (${keyMarks(keys)}) ORDER BY sh.createdAt DESC, sh.id`,
    userId,
    ...keys.flatMap((k) => [k.projectId, k.sessionId.toLowerCase()]),
  );
}

export async function sharesOfUser(db: Sql, userId: string): Promise<ShareListRow[]> {
  return db.query<ShareListRow>(`${LIST} WHERE sh.createdBy = ? ORDER BY sh.createdAt DESC, sh.id LIMIT 1000`, userId);
}

export async function insertShare(tx: Sql, row: Omit<ShareRow, 'views'>): Promise<void> {
  await tx.execute(
    `INSERT INTO shares (id, nonce, projectId, sessionId, createdBy, createdAt, snapshotAt, expiresAt, audience, hiddenJson,
            title, sessionCreatedAt, agentName, llmModelsJson, exchangeCount)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    row.id, row.nonce, row.projectId, row.sessionId, row.createdBy, row.createdAt, row.snapshotAt, row.expiresAt,
    row.audience, row.hiddenJson, row.title, row.sessionCreatedAt, row.agentName, row.llmModelsJson, row.exchangeCount,
  );
}

export async function updateShareRow(
  tx: Sql,
  id: string,
  fields: Partial<Pick<ShareRow, 'expiresAt' | 'hiddenJson' | 'snapshotAt' | 'title' | 'sessionCreatedAt' | 'agentName' | 'llmModelsJson' | 'exchangeCount'>>,
): Promise<void> {
  const keys = Object.keys(fields) as Array<keyof typeof fields>;
  if (!keys.length) return;
  await tx.execute(`UPDATE shares SET ${keys.map((k) => `${k} = ?`).join(', ')} WHERE id = ?`, ...keys.map((k) => fields[k]), id);
}

export async function deleteShareRow(tx: Sql, id: string): Promise<number> {
  return tx.execute('DELETE FROM shares WHERE id = ?', id);
}

export async function countView(db: Sql, id: string): Promise<void> {
  await db.execute('UPDATE shares SET views = views + 1 WHERE id = ?', id);
}

/** Snapshot rows, a batch at a time (each row at most one exchange piece). */
export async function insertSnapshotExchanges(tx: Sql, shareId: string, rows: readonly SnapshotExchange[]): Promise<void> {
  if (!rows.length) return;
  const values: unknown[] = [];
  for (const r of rows) values.push(shareId, r.number, r.title, r.size, r.markdown);
  await tx.execute(
    `INSERT INTO share_exchanges (shareId, number, title, size, markdown) VALUES ${rows.map(() => '(?, ?, ?, ?, ?)').join(', ')}
     ON DUPLICATE KEY UPDATE title = VALUES(title), size = VALUES(size), markdown = VALUES(markdown)`,
    ...values,
  );
}

export async function deleteSnapshotExchanges(tx: Sql, shareId: string): Promise<void> {
  await tx.execute('DELETE FROM share_exchanges WHERE shareId = ?', shareId);
}

/** Hides exchanges: their markdown and title are removed from the snapshot. */
export async function hideSnapshotExchanges(tx: Sql, shareId: string, numbers: readonly number[]): Promise<void> {
  if (!numbers.length) return;
  await tx.execute(`UPDATE share_exchanges SET markdown = NULL, title = NULL WHERE shareId = ? AND number IN (${marks(numbers)})`, shareId, ...numbers);
}

/** Numbers of the snapshot's exchanges that hold content. */
export async function heldNumbers(db: Sql, shareId: string): Promise<Set<number>> {
  const rows = await db.query<{ number: number }>('SELECT number FROM share_exchanges WHERE shareId = ? AND markdown IS NOT NULL', shareId);
  return new Set(rows.map((r) => r.number));
}

/** The sizes of a page's exchanges, from `from` (1-based), at most `limit`. */
export async function snapshotSizes(db: Sql, shareId: string, from: number, limit: number): Promise<Array<Pick<SnapshotExchange, 'number' | 'size'> & { hidden: number }>> {
  return db.query(
    'SELECT number, size, markdown IS NULL AS hidden FROM share_exchanges WHERE shareId = ? AND number >= ? ORDER BY number LIMIT ?',
    shareId,
    from,
    limit,
  );
}

export async function snapshotRange(db: Sql, shareId: string, from: number, to: number): Promise<SnapshotExchange[]> {
  return db.query<SnapshotExchange>(
    'SELECT number, title, size, markdown FROM share_exchanges WHERE shareId = ? AND number BETWEEN ? AND ? ORDER BY number',
    shareId,
    from,
    to,
  );
}
