/**
 * The sessions store: the row's columns and the reads of single rows and sets of rows (content is
 * the content store's, src/data/content.ts). Pages in an order are src/data/session-pages.ts,
 * writes src/data/session-writes.ts. Rows come back as SessionRow; services shape them.
 */
import type { SessionFilters } from '../domain/filters';
import type { IndexableSession } from '../domain/search-documents';
import { filtersToSql } from './session-filters';
import { OWNER_NAME } from './projects';
import { inScopes, marks, prepared, toBuffer, type Sql } from './sql';
import { ROW_KEYS, type SessionKey, type SessionRow } from '../domain/session-row';

/** The row's own columns (what a locking read takes: it locks nothing else). */
const ROW_COLUMNS = ROW_KEYS.map((k) => `s.${k}`).join(', ');

/** The row and the name of its uploader (a primary-key lookup per row). */
export const SESSION_COLUMNS = `${ROW_COLUMNS}, (SELECT COALESCE(u.name, u.email) FROM users u WHERE u.id = s.uploadedBy) AS uploaderName`;

/** `(?, ?), …`: one (projectId, id) pair of placeholders per key. */
export const keyMarks = (keys: readonly unknown[]) => keys.map(() => '(?, ?)').join(', ');

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

/** What the search worker indexes of a session (src/domain/search-documents.ts), with its markdown size. */
type IndexableSessionRow = IndexableSession & Pick<SessionRow, 'markdownSize'>;

/** The indexable part of those of these sessions that exist (any owner), in one statement. */
export function indexableSessions(db: Sql, keys: readonly SessionKey[]): Promise<IndexableSessionRow[]> {
  return db.query<IndexableSessionRow>(
    `SELECT projectId, id, userId, uploadedBy, name, createdAt, clientName, agentName, deviceId, metadataJson, hasGitBranches, contentDigest, markdownSize
       FROM sessions WHERE ${keys.map(() => '(projectId = ? AND id = ?)').join(' OR ')}`,
    ...keys.flatMap((k) => [k.projectId, k.sessionId]),
  );
}
