/**
 * The sessions store: every statement on `sessions` and `session_labels` (content is the content
 * store's, src/data/content.ts). Rows come back as SessionRow; services shape them.
 */
import type { SessionFilters } from '../domain/filters';
import type { IndexableSession } from '../domain/search-documents';
import { filtersToSql, type LabelKind } from './session-filters';
import { OWNER_NAME } from './projects';
import { inScopes, marks, prepared, toBuffer, type DriverRow, type Sql } from './sql';
import type { SessionModel } from '../generated/prisma/models';

/**
 * The columns a read of a session row returns, in this order: every column of `sessions` but
 * hasGitBranches (only filters and the search index read it).
 */
export const ROW_KEYS = [
  'projectId',
  'id',
  'userId',
  'name',
  'userTitle',
  'markdownSize',
  'rawDataSize',
  'etag',
  'contentDigest',
  'createdAt',
  'updatedAt',
  'startedAt',
  'endedAt',
  'clientName',
  'clientVersion',
  'agentName',
  'deviceId',
  'metadataJson',
  'sessionDataSize',
  'sessionDataDigest',
  'redactionsJson',
  'uploadedBy',
  'costUsd',
] as const satisfies ReadonlyArray<keyof SessionModel>;

// A column added to the model and not to ROW_KEYS (nor left out on purpose here) fails the typecheck.
const _everyColumn: [Exclude<keyof SessionModel, (typeof ROW_KEYS)[number] | 'hasGitBranches'>] extends [never] ? true : never = true;

/** A session's row (prisma/schema.prisma's `Session`, as the driver returns it). */
export type SessionRow = Pick<DriverRow<SessionModel>, (typeof ROW_KEYS)[number]> & {
  /** The uploader's name (else email), when the read selected it. */
  uploaderName?: string | null;
};

/** The row's own columns (what a locking read takes: it locks nothing else). */
const ROW_COLUMNS = ROW_KEYS.map((k) => `s.${k}`).join(', ');

/** The row and the name of its uploader (a primary-key lookup per row). */
export const SESSION_COLUMNS = `${ROW_COLUMNS}, (SELECT COALESCE(u.name, u.email) FROM users u WHERE u.id = s.uploadedBy) AS uploaderName`;

export interface SessionKey {
  projectId: string;
  sessionId: string;
}

/** `(?, ?), …`: one (projectId, id) pair of placeholders per key. */
export const keyMarks = (keys: readonly unknown[]) => keys.map(() => '(?, ?)').join(', ');

// ---------------------------------------------------------------------------------------------
// Orders (keyset paging)

export type SessionOrder =
  | 'CREATED_AT_DESC'
  | 'CREATED_AT_ASC'
  | 'UPDATED_AT_DESC'
  | 'UPDATED_AT_ASC'
  | 'STARTED_AT_DESC'
  | 'STARTED_AT_ASC'
  | 'NAME_ASC'
  | 'COST_DESC'
  | 'COST_ASC';

/** The sort column of each order; `costUsd` may be NULL (the lowest value, as MariaDB sorts it: last going down, first going up). */
export const ORDER_SQL: Record<SessionOrder, { col: 'createdAt' | 'updatedAt' | 'startedAt' | 'name' | 'costUsd'; dir: 'ASC' | 'DESC' }> = {
  CREATED_AT_DESC: { col: 'createdAt', dir: 'DESC' },
  CREATED_AT_ASC: { col: 'createdAt', dir: 'ASC' },
  UPDATED_AT_DESC: { col: 'updatedAt', dir: 'DESC' },
  UPDATED_AT_ASC: { col: 'updatedAt', dir: 'ASC' },
  STARTED_AT_DESC: { col: 'startedAt', dir: 'DESC' },
  STARTED_AT_ASC: { col: 'startedAt', dir: 'ASC' },
  NAME_ASC: { col: 'name', dir: 'ASC' },
  COST_DESC: { col: 'costUsd', dir: 'DESC' },
  COST_ASC: { col: 'costUsd', dir: 'ASC' },
};

/** Where a keyset page starts: after this row's sort value (null: a session without a cost) and key. */
export type SessionKeyset = [value: string | Date | number | null, projectId: string, sessionId: string];

/**
 * The rows after a keyset position, in the order's direction: later values, or the same value
 * and a later key. NULL sorts lowest: going down, the NULLs follow every value; going up, they
 * come before every value.
 */
function afterKeyset(col: string, dir: 'ASC' | 'DESC', [v, p, s]: SessionKeyset): { sql: string; params: unknown[] } {
  const cmp = dir === 'DESC' ? '<' : '>';
  const sameKeyAfter = `(s.projectId ${cmp} ? OR (s.projectId = ? AND s.id ${cmp} ?))`;
  if (v === null) {
    return dir === 'DESC'
      ? { sql: `(s.${col} IS NULL AND ${sameKeyAfter})`, params: [p, p, s] }
      : { sql: `(s.${col} IS NOT NULL OR ${sameKeyAfter})`, params: [p, p, s] };
  }
  const nulls = dir === 'DESC' && col === 'costUsd' ? ` OR s.${col} IS NULL` : '';
  return { sql: `(s.${col} ${cmp} ?${nulls} OR (s.${col} = ? AND ${sameKeyAfter}))`, params: [v, v, p, p, s] };
}

/** Up to `count` of the sessions in these owner scopes matching the filters, in `order`, after `after`. No content. */
/** A keyset page of the sessions of some owner scopes: filters, order, how many, after which row. */
export interface SessionsInOrderQuery {
  scopes: readonly string[];
  filters: SessionFilters;
  order: SessionOrder;
  count: number;
  after?: SessionKeyset;
}

export async function sessionsInOrder(db: Sql, { scopes, filters, order, count, after }: SessionsInOrderQuery): Promise<SessionRow[]> {
  const { col, dir } = ORDER_SQL[order];
  const { where, params } = filtersToSql(scopes, filters);
  const clauses = [where];
  if (after) {
    const next = afterKeyset(col, dir, after);
    clauses.push(next.sql);
    params.push(...next.params);
  }
  // Prepared: the text varies with the request's shape only (lists and recent sessions, every request).
  return db.query<SessionRow>(
    prepared(
      `SELECT ${SESSION_COLUMNS} FROM sessions s WHERE ${clauses.join(' AND ')}
      ORDER BY s.${col} ${dir}, s.projectId ${dir}, s.id ${dir} LIMIT ?`,
    ),
    ...params,
    count,
  );
}

export async function countSessions(db: Sql, scopes: readonly string[], filters: SessionFilters): Promise<number> {
  const { where, params } = filtersToSql(scopes, filters);
  const [r] = await db.query<{ n: number }>(prepared(`SELECT COUNT(*) AS n FROM sessions s WHERE ${where}`), ...params);
  return r.n;
}

/**
 * The first `limit` sessions of each of several projects (filters and order as sessionsInOrder),
 * in one statement: ROW_NUMBER() per project, cut in SQL.
 */
export async function firstSessionsOfProjects(
  db: Sql,
  scopes: readonly string[],
  filters: SessionFilters & { projectIds: string[] },
  order: SessionOrder,
  limit: number,
): Promise<Map<string, SessionRow[]>> {
  const out = new Map<string, SessionRow[]>();
  const { col, dir } = ORDER_SQL[order];
  const { where, params } = filtersToSql(scopes, filters);
  const rows = await db.query<SessionRow & { rn: unknown }>(
    `SELECT t.* FROM (
        SELECT ${SESSION_COLUMNS},
               ROW_NUMBER() OVER (PARTITION BY s.projectId ORDER BY s.${col} ${dir}, s.id ${dir}) AS rn
          FROM sessions s WHERE ${where}) t
      WHERE t.rn <= ? ORDER BY t.projectId, t.rn`,
    ...params,
    limit,
  );
  for (const r of rows) {
    const { rn: _rn, ...row } = r;
    const list = out.get(row.projectId) ?? [];
    list.push(row);
    out.set(row.projectId, list);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Single rows and sets of rows

interface ProjectOfSession {
  ownerId: string;
  ownerType: string;
  ownerName: string | null;
  projectName: string;
  projectIcon: string;
  projectColor: string;
}

type PartSizes = Pick<SessionRow, 'markdownSize' | 'rawDataSize' | 'sessionDataSize'>;

/** The stored size of one content part, as the row says. */
export function partSizeOf(row: Partial<PartSizes>, part: InlinePart['part']): number {
  return (part === 'markdown' ? row.markdownSize : part === 'raw' ? row.rawDataSize : row.sessionDataSize) ?? 0;
}

/**
 * The whole part as read by sessionWithProject with `inline`, or undefined when it has to be read
 * chunk by chunk (larger than `upTo`, or spread over several chunks): the row's size for the part
 * and the first chunk come from one statement, so a first chunk of exactly that size is all of it.
 */
export function inlinePartOf(row: { inlineData?: unknown } & Partial<PartSizes>, inline: InlinePart): Buffer | undefined {
  const size = partSizeOf(row, inline.part);
  if (size > inline.upTo) return undefined;
  const data = row.inlineData == null ? Buffer.alloc(0) : toBuffer(row.inlineData);
  return data.length === size ? data : undefined;
}

/** The column holding the size of each content part. */
const PART_SIZE = { markdown: 's.markdownSize', raw: 's.rawDataSize', session: 's.sessionDataSize' } as const;

/** A content part of at most `upTo` bytes, read with the row (see sessionWithProject). */
export interface InlinePart {
  part: keyof typeof PART_SIZE;
  upTo: number;
}

/**
 * The session with the owner and appearance of its project: the project row even when the session is missing.
 * With `inline`, the part's first chunk (`inlineData`) comes along when the part is no larger than
 * `upTo` bytes (NULL otherwise): one statement is one consistent read, so a small session is read
 * whole without holding a snapshot open.
 */
export async function sessionWithProject(
  db: Sql,
  projectId: string,
  sessionId: string,
  inline?: InlinePart,
): Promise<(Partial<SessionRow> & ProjectOfSession & { inlineData?: unknown }) | undefined> {
  const rows = await db.query<SessionRow & ProjectOfSession & { inlineData?: unknown }>(
    SESSION_WITH_PROJECT[inline?.part ?? 'none'],
    ...(inline ? [inline.upTo, inline.part] : []),
    sessionId,
    projectId,
  );
  return rows[0];
}

/** sessionWithProject's statement, without a part and with each part inline: texts of fixed shape, prepared (a read of every request). */
const SESSION_WITH_PROJECT = Object.fromEntries(
  (['none', 'markdown', 'raw', 'session'] as const).map((part) => {
    const inlineColumn =
      part === 'none'
        ? ''
        : `, CASE WHEN ${PART_SIZE[part]} <= ? THEN (SELECT c.data FROM session_chunks c WHERE c.projectId = s.projectId AND c.sessionId = s.id AND c.part = ? AND c.seq = 0) END AS inlineData`;
    return [
      part,
      prepared(
        `SELECT p.ownerId, p.ownerType, ${OWNER_NAME}, p.name AS projectName, p.icon AS projectIcon, p.color AS projectColor, ${SESSION_COLUMNS}${inlineColumn}
       FROM projects p LEFT JOIN sessions s ON s.projectId = p.id AND s.id = ?
      WHERE p.id = ?`,
      ),
    ];
  }),
) as Record<InlinePart['part'] | 'none', string>;

export async function sessionByKey(db: Sql, projectId: string, sessionId: string): Promise<SessionRow | undefined> {
  const rows = await db.query<SessionRow>(`SELECT ${SESSION_COLUMNS} FROM sessions s WHERE s.projectId = ? AND s.id = ?`, projectId, sessionId);
  return rows[0];
}

/** The session, locked for the rest of the transaction. */
export async function lockSession(tx: Sql, projectId: string, sessionId: string): Promise<SessionRow | undefined> {
  const rows = await tx.query<SessionRow>(
    `SELECT ${ROW_COLUMNS} FROM sessions s WHERE s.projectId = ? AND s.id = ? FOR UPDATE`,
    projectId,
    sessionId,
  );
  return rows[0];
}

/** The most recently updated session with this id in these owner scopes, in any project. */
export async function latestSessionById(db: Sql, scopes: readonly string[], sessionId: string): Promise<SessionRow | undefined> {
  const rows = await db.query<SessionRow>(
    `SELECT ${SESSION_COLUMNS} FROM sessions s WHERE ${inScopes('s.userId', scopes)} AND s.id = ? ORDER BY s.updatedAt DESC, s.projectId ASC LIMIT 1`,
    ...scopes,
    sessionId,
  );
  return rows[0];
}

/**
 * Sessions by key in the caller's scopes, read through the (userId, id) index: the condition on
 * (projectId, id) pairs alone made MariaDB plan a range over the primary key that cost 4× the
 * statement (1.7 vs 0.5 ms for 10 keys at 20k sessions), and many scopes × ids can pass the
 * optimizer's index-dive limit (see sessionsMatchingAmongSql). The pairs still decide.
 */
export function sessionsByKeysSql(scopes: readonly string[], keys: readonly SessionKey[]): { from: string; where: string; params: unknown[] } {
  const ids = [...new Set(keys.map((k) => k.sessionId))];
  return {
    from: BY_USER_AND_ID,
    where: `${inScopes('s.userId', scopes)} AND s.id IN (${marks(ids)}) AND (s.projectId, s.id) IN (${keyMarks(keys)})`,
    params: [...scopes, ...ids, ...keys.flatMap((k) => [k.projectId, k.sessionId])],
  };
}

/** The sessions among `keys` in these owner scopes (others' and missing ones are simply absent). */
export async function sessionsByKeys(db: Sql, scopes: readonly string[], keys: readonly SessionKey[]): Promise<SessionRow[]> {
  if (keys.length === 0) return [];
  const { from, where, params } = sessionsByKeysSql(
    scopes,
    keys.map((k) => ({ projectId: k.projectId, sessionId: k.sessionId.toLowerCase() })),
  );
  return db.query<SessionRow>(`SELECT ${SESSION_COLUMNS} FROM ${from} WHERE ${where}`, ...params);
}

/** Sessions read through their (userId, id) index, named: see sessionsMatchingAmongSql. */
const BY_USER_AND_ID = 'sessions s FORCE INDEX (sessions_userId_id_idx)';

/**
 * The statement of sessionsMatchingAmong. It names its index: with several scopes (a member of
 * many teams) scopes × ids exceeds the optimizer's index-dive limit (200 ranges), it then
 * estimates from statistics, and right after a bulk load those chose a scan of the whole table
 * (9 ms instead of under 1 ms at 20k sessions). The ids bound the answer to one page whatever
 * the filters, so the (userId, id) index is always the right way in.
 */
export function sessionsMatchingAmongSql(
  scopes: readonly string[],
  filters: SessionFilters,
  ids: readonly string[],
): { from: string; where: string; params: unknown[] } {
  const { where, params } = filtersToSql(scopes, filters, 's');
  return { from: BY_USER_AND_ID, where: `${where} AND s.id IN (${marks(ids)})`, params: [...params, ...ids] };
}

/**
 * The user's sessions with one of these ids that pass the filters (search's re-check of its hits:
 * one statement returns the rows the results are made of).
 */
export function sessionsMatchingAmong(db: Sql, scopes: readonly string[], filters: SessionFilters, ids: readonly string[]): Promise<SessionRow[]> {
  if (ids.length === 0) return Promise.resolve([]);
  const { from, where, params } = sessionsMatchingAmongSql(scopes, filters, ids);
  return db.query<SessionRow>(`SELECT ${SESSION_COLUMNS} FROM ${from} WHERE ${where}`, ...params);
}

/** The content digest and session-data digest of one session, or null when there is none. */
export async function sessionDigests(db: Sql, projectId: string, sessionId: string): Promise<Pick<SessionRow, 'contentDigest' | 'sessionDataDigest'> | null> {
  const [row] = await db.query<Pick<SessionRow, 'contentDigest' | 'sessionDataDigest'>>(
    'SELECT contentDigest, sessionDataDigest FROM sessions WHERE projectId = ? AND id = ?',
    projectId,
    sessionId,
  );
  return row ?? null;
}

/** Markdown size and session-data size of every session of a project, by id. */
export function sessionSizes(db: Sql, projectId: string): Promise<Array<Pick<SessionRow, 'id' | 'markdownSize' | 'sessionDataSize'>>> {
  return db.query('SELECT id, markdownSize, sessionDataSize FROM sessions WHERE projectId = ? ORDER BY id', projectId);
}

const NEWEST_FIRST = 'ORDER BY s.updatedAt DESC, s.projectId DESC, s.id DESC';

/** The user's sessions that carry session data (resumable by the upload CLI), newest first; one project's when given. */
export function resumableSessions(db: Sql, scopes: readonly string[], projectId?: string): Promise<SessionRow[]> {
  const where = inScopes('s.userId', scopes);
  return projectId === undefined
    ? db.query<SessionRow>(`SELECT ${SESSION_COLUMNS} FROM sessions s WHERE ${where} AND s.sessionDataSize > 0 ${NEWEST_FIRST}`, ...scopes)
    : db.query<SessionRow>(
        `SELECT ${SESSION_COLUMNS} FROM sessions s WHERE ${where} AND s.projectId = ? AND s.sessionDataSize > 0 ${NEWEST_FIRST}`,
        ...scopes,
        projectId,
      );
}

/** The resumable sessions among `keys`, with their project's name, newest first, at most `limit`. */
export function resumableSessionsByKeys(
  db: Sql,
  scopes: readonly string[],
  keys: readonly SessionKey[],
  limit: number,
): Promise<Array<SessionRow & { projectName: string }>> {
  if (keys.length === 0) return Promise.resolve([]);
  const { from, where, params } = sessionsByKeysSql(scopes, keys);
  return db.query<SessionRow & { projectName: string }>(
    `SELECT ${SESSION_COLUMNS}, p.name AS projectName FROM ${from} JOIN projects p ON p.id = s.projectId
      WHERE ${where} AND s.sessionDataSize > 0 ${NEWEST_FIRST} LIMIT ?`,
    ...params,
    limit,
  );
}

/** How many sessions there are (all users). */
export async function sessionCount(db: Sql): Promise<number> {
  const [{ n }] = await db.query<{ n: number }>('SELECT COUNT(*) AS n FROM sessions');
  return n;
}

/** Keys of all sessions in key order, `limit` at a time after `after` (a walk over everything). */
export function sessionKeysAfter(db: Sql, after: [string, string] | null, limit: number): Promise<Array<{ projectId: string; id: string }>> {
  return after
    ? db.query('SELECT projectId, id FROM sessions WHERE (projectId, id) > (?, ?) ORDER BY projectId, id LIMIT ?', ...after, limit)
    : db.query('SELECT projectId, id FROM sessions ORDER BY projectId, id LIMIT ?', limit);
}

// ---------------------------------------------------------------------------------------------
// Writes (inside the caller's transaction)

const INSERT_SESSION = `INSERT INTO sessions (${ROW_KEYS.join(', ')}, hasGitBranches) VALUES (${marks(ROW_KEYS.length + 1)})`;

export async function insertSession(tx: Sql, row: SessionRow, hasGitBranches: boolean): Promise<void> {
  await tx.execute(
    INSERT_SESSION,
    ...ROW_KEYS.map((k) => row[k]),
    hasGitBranches,
  );
}

/** An upload's replacement of everything but the key, the owner, the creation time and the user's title. */
export async function updateUploadedSession(tx: Sql, row: SessionRow, hasGitBranches: boolean): Promise<void> {
  await tx.execute(
    `UPDATE sessions SET name = ?, markdownSize = ?, rawDataSize = ?, etag = ?, contentDigest = ?, updatedAt = ?,
            startedAt = ?, endedAt = ?, clientName = ?, clientVersion = ?, agentName = ?, deviceId = ?,
            metadataJson = ?, hasGitBranches = ?, sessionDataSize = ?, sessionDataDigest = ?, redactionsJson = ?
      WHERE projectId = ? AND id = ?`,
    row.name, row.markdownSize, row.rawDataSize, row.etag, row.contentDigest, row.updatedAt,
    row.startedAt, row.endedAt, row.clientName, row.clientVersion, row.agentName, row.deviceId,
    row.metadataJson, hasGitBranches, row.sessionDataSize, row.sessionDataDigest, row.redactionsJson, row.projectId, row.id,
  );
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

/** Ids of a project's sessions (the index work of a move). */
export async function sessionIdsOfProject(tx: Sql, projectId: string): Promise<string[]> {
  const rows = await tx.query<{ id: string }>('SELECT id FROM sessions WHERE projectId = ? ORDER BY id', projectId);
  return rows.map((r) => r.id);
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

/** What the search worker indexes of a session (src/domain/search-documents.ts), with its markdown size. */
export type IndexableSessionRow = IndexableSession & Pick<SessionRow, 'markdownSize'>;

/** The indexable part of those of these sessions that exist (any owner), in one statement. */
export function indexableSessions(db: Sql, keys: readonly SessionKey[]): Promise<IndexableSessionRow[]> {
  return db.query<IndexableSessionRow>(
    `SELECT projectId, id, userId, uploadedBy, name, createdAt, clientName, agentName, deviceId, metadataJson, hasGitBranches, contentDigest, markdownSize
       FROM sessions WHERE ${keys.map(() => '(projectId = ? AND id = ?)').join(' OR ')}`,
    ...keys.flatMap((k) => [k.projectId, k.sessionId]),
  );
}
