import crypto from 'node:crypto';
import { AppError, invalid, MESSAGES, projectNotFound, sessionNotFound } from '../errors';
import { readContent, writeContent, markdownOfSessions as markdownOf, type ContentPart } from '../data/content';
import { isDuplicateKey, RetryTransaction } from '../data/errors';
import { enqueueIndexWork } from '../data/outbox';
import { inTransaction, type Tx } from '../data/transaction';
import { upsertOp } from '../domain/index-work';
import { checkProjectOwner, requireOwnedProject, requireOwnedSession } from './access';
import type { Ctx } from './context';
import { filtersToSql, LABEL_KINDS, normalizeFilters, type SessionFilters, type SessionFiltersInput } from './filters';
import { DEFAULT_COLOR, DEFAULT_ICON } from './projects';
import { DeferredJson, inlineOffload } from '../offload';
import { redactionsOf, redactionsToJson, sessionDataFindingsOf } from './redaction';
import { contentDigestOf, DOC_ARRAY_FIELDS, prepareUpload, validateStringArray, type PreparedUpload, type StoredMetaJson } from './upload-input';
import {
  checkString,
  hasLoneSurrogate,
  intParam,
  isPlainObject,
  parseIsoDate,
  PROJECT_ID_RE,
  UUID_RE,
} from './validation';

export { contentDigestOf, DOC_STRING_FIELDS, sessionDataDigestOf, type StoredMetaJson } from './upload-input';

// ---------------------------------------------------------------------------------------------
// Shapes

export interface SessionRow {
  projectId: string;
  id: string;
  userId: string;
  name: string;
  userTitle: string | null;
  markdownSize: number;
  rawDataSize: number;
  etag: string;
  contentDigest: string;
  createdAt: Date;
  updatedAt: Date;
  startedAt: Date;
  endedAt: Date;
  clientName: string | null;
  clientVersion: string | null;
  agentName: string | null;
  deviceId: string | null;
  metadataJson: string;
  /** Bytes of the session data (contract §15); 0 when none. */
  sessionDataSize: number;
  sessionDataDigest: string | null;
  /** Findings of secret redaction: JSON [{rule, count}] (contract §14). */
  redactionsJson: string;
}

export const SESSION_COLUMNS =
  's.projectId, s.id, s.userId, s.name, s.userTitle, s.markdownSize, s.rawDataSize, s.etag, s.contentDigest, ' +
  's.createdAt, s.updatedAt, s.startedAt, s.endedAt, s.clientName, s.clientVersion, s.agentName, s.deviceId, s.metadataJson, ' +
  's.sessionDataSize, s.sessionDataDigest, s.redactionsJson';

export interface SessionMetadata {
  clientName: string | null;
  clientVersion: string | null;
  agentName: string | null;
  deviceId: string | null;
  gitBranches: string[];
  llmModels: string[];
  tags: string[];
  [extra: string]: string | string[] | null;
}

export interface SessionDto {
  id: string;
  /** = id (client-compatible: the upload CLI's native session id; contract §15). */
  clientId: string;
  projectId: string;
  name: string;
  userTitle: string | null;
  markdownSize: number;
  rawDataSize: number;
  sessionDataSize: number;
  createdAt: string;
  updatedAt: string;
  startedAt: string;
  endedAt: string;
  metadata: SessionMetadata;
  /** Secrets found per rule (contract §14); never a value. */
  redactions: Array<{ rule: string; count: number }>;
  etag?: string;
}

export function parseStoredMeta(json: string): StoredMetaJson {
  const m = JSON.parse(json) as Partial<StoredMetaJson>;
  return { llmModels: m.llmModels ?? [], tags: m.tags ?? [], gitBranches: m.gitBranches ?? [], extra: m.extra ?? {} };
}

export function metadataOf(row: SessionRow): SessionMetadata {
  const m = parseStoredMeta(row.metadataJson);
  return {
    ...m.extra,
    clientName: row.clientName,
    clientVersion: row.clientVersion,
    agentName: row.agentName,
    deviceId: row.deviceId,
    gitBranches: m.gitBranches,
    llmModels: m.llmModels,
    tags: m.tags,
  };
}

export function toSession(row: SessionRow, withEtag = true): SessionDto {
  const dto: SessionDto = {
    id: row.id,
    clientId: row.id,
    projectId: row.projectId,
    name: row.name,
    userTitle: row.userTitle,
    markdownSize: Number(row.markdownSize),
    rawDataSize: Number(row.rawDataSize),
    sessionDataSize: Number(row.sessionDataSize ?? 0),
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
    startedAt: row.startedAt.toISOString(),
    endedAt: row.endedAt.toISOString(),
    metadata: metadataOf(row),
    redactions: redactionsOf(row.redactionsJson),
  };
  if (withEtag) dto.etag = row.etag;
  return dto;
}

// ---------------------------------------------------------------------------------------------
// Entity tags

/** A weak tag over everything a client can read of the session. */
export function sessionEtag(fields: {
  name: string;
  userTitle: string | null;
  startedAt: Date;
  endedAt: Date;
  metadata: SessionMetadata;
  contentDigest: string;
  /** Part of the tag only when something was found, so tags of clean sessions stay as they were. */
  redactionsJson?: string;
}): string {
  const meta = Object.fromEntries(Object.entries(fields.metadata).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  const h = crypto
    .createHash('sha256')
    .update(
      JSON.stringify([
        fields.name,
        fields.userTitle,
        fields.startedAt.toISOString(),
        fields.endedAt.toISOString(),
        meta,
        fields.contentDigest,
        ...(fields.redactionsJson && fields.redactionsJson !== '[]' ? [fields.redactionsJson] : []),
      ]),
    )
    .digest('hex');
  return `W/"${h.slice(0, 40)}"`;
}

/** Weak comparison against an If-None-Match / If-Match list (`*` matches anything). */
export function etagMatches(header: string | undefined, etag: string | null): boolean {
  if (!header || !etag) return false;
  const opaque = (t: string) => t.trim().replace(/^W\//, '');
  const mine = opaque(etag);
  return header.split(',').some((t) => t.trim() === '*' || opaque(t) === mine);
}

// ---------------------------------------------------------------------------------------------
// Validation of uploads

export interface UploadConditions {
  ifMatch?: string;
  ifNoneMatch?: string;
}

/** An upload's path ids: on a write an id that can never be valid is a 400 (reads: src/services/access.ts). */
function checkUploadPath(projectId: string, sessionId: string): string {
  if (!PROJECT_ID_RE.test(projectId)) throw invalid('Invalid project id: must match ^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$');
  if (!UUID_RE.test(sessionId)) throw invalid('Invalid session id: must be a UUID');
  return sessionId.toLowerCase();
}

// ---------------------------------------------------------------------------------------------
// Upload

export interface UploadResult {
  created: boolean;
  /** False for an identical re-upload, which changes nothing. */
  changed: boolean;
  session: SessionRow;
}

export async function writeLabels(tx: Tx, row: Pick<SessionRow, 'projectId' | 'id' | 'userId'>, meta: StoredMetaJson, replace: boolean) {
  if (replace) {
    await tx.execute('DELETE FROM session_labels WHERE projectId = ? AND sessionId = ?', row.projectId, row.id);
  }
  const values: unknown[] = [];
  for (const key of DOC_ARRAY_FIELDS) {
    for (const v of new Set(meta[key])) values.push(row.projectId, row.id, LABEL_KINDS[key], v, row.userId);
  }
  if (values.length) {
    await tx.execute(
      `INSERT IGNORE INTO session_labels (projectId, sessionId, kind, value, userId) VALUES ${Array(values.length / 5)
        .fill('(?, ?, ?, ?, ?)')
        .join(', ')}`,
      ...values,
    );
  }
}

export async function lockSession(tx: Tx, projectId: string, sessionId: string): Promise<SessionRow | undefined> {
  const rows = await tx.query<SessionRow>(
    `SELECT ${SESSION_COLUMNS} FROM sessions s WHERE s.projectId = ? AND s.id = ? FOR UPDATE`,
    projectId,
    sessionId,
  );
  return rows[0];
}

/** PUT: creates or replaces a session (and its project when new), atomically. */
export async function upsertSession(
  ctx: Ctx,
  projectId: string,
  rawSessionId: string,
  body: unknown,
  cond: UploadConditions = {},
): Promise<UploadResult> {
  const sessionId = checkUploadPath(projectId, rawSessionId);
  // Secrets go before anything is stored, logged or indexed (contract §14). The tag is taken over
  // what is stored, so re-sending the same original body is still a no-op. A large body is
  // prepared on a worker thread (src/offload), a small one here.
  const mode = ctx.deps.config.redactSecrets;
  const prepared =
    body instanceof DeferredJson ? await (ctx.deps.offload ?? inlineOffload).prepareUploadJson(body.bytes, mode) : prepareUpload(body, mode);
  return writeUpload(ctx, projectId, sessionId, prepared, cond);
}

async function writeUpload(ctx: Ctx, projectId: string, sessionId: string, prepared: PreparedUpload, cond: UploadConditions): Promise<UploadResult> {
  const { upload: up, findings, sessionDataFindings, sentDataDigest } = prepared;
  const userId = ctx.user.id;
  return inTransaction(ctx.deps.db, ctx.guard, async (tx) => {
    const now = new Date();
    await tx.execute(
      'INSERT IGNORE INTO projects (id, ownerId, name, icon, color, createdAt, updatedAt) VALUES (?, ?, ?, ?, ?, ?, ?)',
      projectId,
      userId,
      up.projectName ?? projectId,
      DEFAULT_ICON,
      DEFAULT_COLOR,
      now,
      now,
    );
    const owner = await tx.query<{ ownerId: string }>(
      'SELECT ownerId FROM projects WHERE id = ? LOCK IN SHARE MODE',
      projectId,
    );
    if (!owner[0]) throw new RetryTransaction('project deleted during upload; retrying');
    checkProjectOwner(ctx, projectId, owner[0].ownerId);

    const old = await lockSession(tx, projectId, sessionId);
    if (cond.ifNoneMatch && old && etagMatches(cond.ifNoneMatch, old.etag)) {
      throw new AppError('PRECONDITION_FAILED', MESSAGES.preconditionFailed);
    }
    if (cond.ifMatch && (!old || !etagMatches(cond.ifMatch, old.etag))) {
      throw new AppError('PRECONDITION_FAILED', MESSAGES.preconditionFailed);
    }

    // An upload without session data keeps the stored one (its digest stays part of the etag).
    const sessionDataDigest = sentDataDigest ?? old?.sessionDataDigest ?? null;
    const sessionDataSize = up.sessionData ? up.sessionData.length : Number(old?.sessionDataSize ?? 0);
    // Kept session data is part of the digest: only then is it taken again (here, at its cost).
    const contentDigest = sessionDataDigest === sentDataDigest ? prepared.contentDigest : contentDigestOf(up.markdown, up.rawData, sessionDataDigest);
    // Findings of kept session data stay with it.
    const redactionsJson = redactionsToJson(
      findings,
      sessionDataFindings ?? sessionDataFindingsOf(old?.redactionsJson),
      ctx.deps.config.redactSecrets,
    );
    const startedAt = up.startedAt ?? old?.startedAt ?? now;
    const endedAt = up.endedAt ?? old?.endedAt ?? now;
    const userTitle = old?.userTitle ?? null;
    const next: SessionRow = {
      projectId,
      id: sessionId,
      userId,
      name: up.name,
      userTitle,
      markdownSize: up.markdown.length,
      rawDataSize: up.rawData.length,
      etag: '',
      contentDigest,
      createdAt: old?.createdAt ?? now,
      updatedAt: now,
      startedAt,
      endedAt,
      ...up.metaColumns,
      metadataJson: JSON.stringify(up.meta),
      sessionDataSize,
      sessionDataDigest,
      redactionsJson,
    };
    next.etag = sessionEtag({ ...next, metadata: metadataOf(next) });
    if (old && old.etag === next.etag) return { created: false, changed: false, session: old };

    const hasGitBranches = up.meta.gitBranches.length > 0;
    if (old) {
      await tx.execute(
        `UPDATE sessions SET name = ?, markdownSize = ?, rawDataSize = ?, etag = ?, contentDigest = ?, updatedAt = ?,
                startedAt = ?, endedAt = ?, clientName = ?, clientVersion = ?, agentName = ?, deviceId = ?,
                metadataJson = ?, hasGitBranches = ?, sessionDataSize = ?, sessionDataDigest = ?, redactionsJson = ?
          WHERE projectId = ? AND id = ?`,
        next.name, next.markdownSize, next.rawDataSize, next.etag, next.contentDigest, next.updatedAt,
        next.startedAt, next.endedAt, next.clientName, next.clientVersion, next.agentName, next.deviceId,
        next.metadataJson, hasGitBranches, sessionDataSize, sessionDataDigest, redactionsJson, projectId, sessionId,
      );
    } else {
      await tx.execute(
        `INSERT INTO sessions (projectId, id, userId, name, userTitle, markdownSize, rawDataSize, etag, contentDigest,
                createdAt, updatedAt, startedAt, endedAt, clientName, clientVersion, agentName, deviceId, metadataJson, hasGitBranches,
                sessionDataSize, sessionDataDigest, redactionsJson)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        projectId, sessionId, userId, next.name, null, next.markdownSize, next.rawDataSize, next.etag, next.contentDigest,
        next.createdAt, next.updatedAt, next.startedAt, next.endedAt, next.clientName, next.clientVersion,
        next.agentName, next.deviceId, next.metadataJson, hasGitBranches, sessionDataSize, sessionDataDigest, redactionsJson,
      );
    }
    if (!old || old.contentDigest !== contentDigest) {
      await writeContent(tx, projectId, sessionId, { markdown: up.markdown, raw: up.rawData, session: up.sessionData });
    }
    await writeLabels(tx, next, up.meta, Boolean(old));
    await enqueueIndexWork(tx, upsertOp(next.markdownSize), userId, projectId, sessionId);
    return { created: !old, changed: true, session: next };
  }).catch((err) => {
    // Two first uploads of one session raced: the loser's INSERT hit the winner's row.
    if (isDuplicateKey(err)) {
      return writeUpload(ctx, projectId, sessionId, prepared, cond);
    }
    throw err;
  });
}

// ---------------------------------------------------------------------------------------------
// Reads

export interface ProjectRef {
  id: string;
  name: string;
  icon: string;
  color: string;
}

/** A session the caller owns, with the project it belongs to (read in the same statement). */
export type OwnedSession = SessionRow & { project: ProjectRef };

export async function getSessionContent(ctx: Ctx, row: SessionRow, part: ContentPart): Promise<Buffer> {
  return readContent(ctx.deps.db.reads, row.projectId, row.id, part);
}

export type SessionOrder =
  | 'CREATED_AT_DESC'
  | 'CREATED_AT_ASC'
  | 'UPDATED_AT_DESC'
  | 'UPDATED_AT_ASC'
  | 'STARTED_AT_DESC'
  | 'STARTED_AT_ASC'
  | 'NAME_ASC';

export const ORDER_SQL: Record<SessionOrder, { col: 'createdAt' | 'updatedAt' | 'startedAt' | 'name'; dir: 'ASC' | 'DESC' }> = {
  CREATED_AT_DESC: { col: 'createdAt', dir: 'DESC' },
  CREATED_AT_ASC: { col: 'createdAt', dir: 'ASC' },
  UPDATED_AT_DESC: { col: 'updatedAt', dir: 'DESC' },
  UPDATED_AT_ASC: { col: 'updatedAt', dir: 'ASC' },
  STARTED_AT_DESC: { col: 'startedAt', dir: 'DESC' },
  STARTED_AT_ASC: { col: 'startedAt', dir: 'ASC' },
  NAME_ASC: { col: 'name', dir: 'ASC' },
};

/** Opaque keyset cursor: the order, the last row's sort value and key. Stable under inserts. */
export function encodeCursor(order: SessionOrder, row: SessionRow): string {
  const { col } = ORDER_SQL[order];
  const v = row[col];
  return Buffer.from(JSON.stringify([order, v instanceof Date ? v.getTime() : v, row.projectId, row.id])).toString('base64url');
}

function decodeCursor(order: SessionOrder, cursor: string): [string | Date, string, string] {
  try {
    const parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (!Array.isArray(parsed) || parsed.length !== 4 || parsed[0] !== order) throw new Error('mismatch');
    const [, v, p, s] = parsed;
    if (typeof p !== 'string' || typeof s !== 'string') throw new Error('bad key');
    const { col } = ORDER_SQL[order];
    if (col === 'name') {
      if (typeof v !== 'string') throw new Error('bad value');
      return [v, p, s];
    }
    if (typeof v !== 'number' || !Number.isFinite(v)) throw new Error('bad value');
    return [new Date(v), p, s];
  } catch {
    throw invalid('Invalid cursor');
  }
}

export interface SessionPage {
  rows: SessionRow[];
  nextCursor: string | null;
}

/**
 * Sessions of the caller matching the filters, in the given order, one keyset page at a time.
 * Everything is decided in SQL; rows carry no content.
 */
export async function querySessions(
  ctx: Ctx,
  filters: SessionFilters,
  order: SessionOrder,
  limit: number,
  after?: string | null,
): Promise<SessionPage> {
  const { col, dir } = ORDER_SQL[order];
  const { where, params } = filtersToSql(ctx.user.id, filters);
  const clauses = [where];
  if (after) {
    const [v, p, s] = decodeCursor(order, after);
    const cmp = dir === 'DESC' ? '<' : '>';
    clauses.push(`(s.${col} ${cmp} ? OR (s.${col} = ? AND (s.projectId ${cmp} ? OR (s.projectId = ? AND s.id ${cmp} ?))))`);
    params.push(v, v, p, p, s);
  }
  const rows = await ctx.deps.db.reads.query<SessionRow>(
    `SELECT ${SESSION_COLUMNS} FROM sessions s WHERE ${clauses.join(' AND ')}
      ORDER BY s.${col} ${dir}, s.projectId ${dir}, s.id ${dir} LIMIT ?`,
    ...params,
    limit + 1,
  );
  const more = rows.length > limit;
  const page = more ? rows.slice(0, limit) : rows;
  return { rows: page, nextCursor: more ? encodeCursor(order, page[page.length - 1]) : null };
}

export async function countSessions(ctx: Ctx, filters: SessionFilters): Promise<number> {
  const { where, params } = filtersToSql(ctx.user.id, filters);
  const [r] = await ctx.deps.db.reads.query<{ n: number }>(
    `SELECT COUNT(*) AS n FROM sessions s WHERE ${where}`,
    ...params,
  );
  return Number(r.n);
}

/** GET /projects/{id}/sessions: most recently updated first, keyset paging. */
export async function listProjectSessions(ctx: Ctx, projectId: string, query: { limit?: unknown; cursor?: unknown }) {
  const limit = intParam(query.limit, 'limit', 200, 1, 1000);
  if (query.cursor !== undefined && (typeof query.cursor !== 'string' || query.cursor === '')) throw invalid('Invalid cursor');
  const cursor = query.cursor as string | undefined;
  if (cursor) decodeCursor('UPDATED_AT_DESC', cursor);
  await requireOwnedProject(ctx, projectId);
  const filters = { projectIds: [projectId] };
  const [page, total] = await Promise.all([
    querySessions(ctx, filters, 'UPDATED_AT_DESC', limit, cursor),
    countSessions(ctx, filters),
  ]);
  return { sessions: page.rows.map((r) => toSession(r)), total, projectId, nextCursor: page.nextCursor };
}

/**
 * GET /projects/{id}/sessions/sizes: markdown size per session, plus `"<id>:sessionData"` for each
 * session that has session data (contract §15). A project the caller does not have yet is empty
 * (the upload CLI asks before its first sync and retries a 404); another user's stays 403, and an
 * id that can never be a project stays 404 (§9).
 */
export async function projectSessionSizes(ctx: Ctx, projectId: string): Promise<Record<string, number>> {
  // An id that can never be a project stays a 404 (contract §9).
  if (!PROJECT_ID_RE.test(projectId)) throw projectNotFound(projectId);
  try {
    await requireOwnedProject(ctx, projectId);
  } catch (err) {
    if (err instanceof AppError && err.code === 'NOT_FOUND') return {};
    throw err;
  }
  const rows = await ctx.deps.db.reads.query<{ id: string; markdownSize: number; sessionDataSize: number }>(
    'SELECT id, markdownSize, sessionDataSize FROM sessions WHERE projectId = ? ORDER BY id',
    projectId,
  );
  const out: Record<string, number> = {};
  for (const r of rows) {
    out[r.id] = Number(r.markdownSize);
    if (Number(r.sessionDataSize) > 0) out[`${r.id}:sessionData`] = Number(r.sessionDataSize);
  }
  return out;
}

export async function listRecentSessions(ctx: Ctx, query: { limit?: unknown }) {
  const limit = intParam(query.limit, 'limit', 5, 1, 100);
  const page = await querySessions(ctx, {}, 'UPDATED_AT_DESC', limit);
  const sessions = page.rows.map((r) => toSession(r, false));
  return { sessions, total: sessions.length };
}

/** GraphQL-style listing: filters as sent by clients. */
export async function findSessions(
  ctx: Ctx,
  filtersInput: SessionFiltersInput | null | undefined,
  order: SessionOrder,
  limit: number,
  after?: string | null,
): Promise<SessionPage> {
  return querySessions(ctx, normalizeFilters(filtersInput), order, limit, after);
}

// ---------------------------------------------------------------------------------------------
// Changes

export async function patchSession(ctx: Ctx, projectId: string, rawSessionId: string, body: unknown): Promise<SessionRow> {
  if (!isPlainObject(body)) throw invalid('Request body must be a JSON object');
  const patch: { name?: string; tags?: string[]; userTitle?: string | null } = {};
  if (body.name !== undefined) patch.name = checkString(body.name, 'name', 1, 255);
  if (body.tags !== undefined) patch.tags = validateStringArray(body.tags, 'tags');
  if (body.userTitle !== undefined) {
    patch.userTitle = body.userTitle === null ? null : checkString(body.userTitle, 'userTitle', 0, 1000);
  }
  if (Object.keys(patch).length === 0) throw invalid('Nothing to update: send name, tags or userTitle');
  const current = await requireOwnedSession(ctx, projectId, rawSessionId);
  const updated = await inTransaction(ctx.deps.db, ctx.guard, async (tx) => {
    const old = await lockSession(tx, current.projectId, current.id);
    if (!old) throw sessionNotFound(current.id, projectId);
    const meta = parseStoredMeta(old.metadataJson);
    if (patch.tags) meta.tags = patch.tags;
    const next: SessionRow = {
      ...old,
      name: patch.name ?? old.name,
      userTitle: patch.userTitle !== undefined ? patch.userTitle : old.userTitle,
      metadataJson: JSON.stringify(meta),
    };
    next.etag = sessionEtag({ ...next, metadata: metadataOf(next) });
    // A patch always counts as a change (contract §9): it moves updatedAt.
    next.updatedAt = new Date(Math.max(Date.now(), old.updatedAt.getTime() + 1));
    await tx.execute(
      'UPDATE sessions SET name = ?, userTitle = ?, metadataJson = ?, etag = ?, updatedAt = ? WHERE projectId = ? AND id = ?',
      next.name, next.userTitle, next.metadataJson, next.etag, next.updatedAt, old.projectId, old.id,
    );
    if (patch.tags) await writeLabels(tx, next, meta, true);
    await enqueueIndexWork(tx, upsertOp(Number(old.markdownSize)), ctx.user.id, old.projectId, old.id);
    return next;
  });
  return updated;
}

export async function deleteSession(ctx: Ctx, projectId: string, rawSessionId: string): Promise<void> {
  const row = await requireOwnedSession(ctx, projectId, rawSessionId);
  await inTransaction(ctx.deps.db, ctx.guard, async (tx) => {
    const n = await tx.execute('DELETE FROM sessions WHERE projectId = ? AND id = ? AND userId = ?', row.projectId, row.id, ctx.user.id);
    if (n === 0) throw sessionNotFound(row.id, projectId);
    await enqueueIndexWork(tx, 'delete', ctx.user.id, row.projectId, row.id);
  });
}


// ---------------------------------------------------------------------------------------------
// Batched reads (GraphQL loaders: one statement for many projects or sessions)

/**
 * The first `limit` sessions of each of several projects (filters and order as querySessions),
 * in one statement: ROW_NUMBER() per project, cut in SQL.
 */
export async function sessionsForProjects(
  ctx: Ctx,
  projectIds: readonly string[],
  filters: SessionFilters,
  order: SessionOrder,
  limit: number,
): Promise<Map<string, SessionRow[]>> {
  const out = new Map<string, SessionRow[]>();
  if (projectIds.length === 0) return out;
  const { col, dir } = ORDER_SQL[order];
  const wanted = filters.projectIds ? projectIds.filter((id) => filters.projectIds!.includes(id)) : [...projectIds];
  if (wanted.length === 0) return out;
  const { where, params } = filtersToSql(ctx.user.id, { ...filters, projectIds: wanted });
  const rows = await ctx.deps.db.reads.query<SessionRow & { rn: unknown }>(
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
    list.push(row as SessionRow);
    out.set(row.projectId, list);
  }
  return out;
}

/** The caller's most recently updated session with this id, in any project; none → NOT_FOUND. */
export async function findLatestSessionById(ctx: Ctx, rawSessionId: string): Promise<SessionRow> {
  if (!UUID_RE.test(rawSessionId)) throw sessionNotFound(rawSessionId);
  const sessionId = rawSessionId.toLowerCase();
  const rows = await ctx.deps.db.reads.query<SessionRow>(
    `SELECT ${SESSION_COLUMNS} FROM sessions s WHERE s.userId = ? AND s.id = ? ORDER BY s.updatedAt DESC, s.projectId ASC LIMIT 1`,
    ctx.user.id,
    sessionId,
  );
  if (!rows[0]) throw sessionNotFound(sessionId);
  return rows[0];
}

export interface SessionKey {
  projectId: string;
  sessionId: string;
}

/** The caller's sessions among `keys` (others' and missing ones are simply absent). */
export async function sessionsByKeys(ctx: Ctx, keys: readonly SessionKey[]): Promise<SessionRow[]> {
  if (keys.length === 0) return [];
  return ctx.deps.db.reads.query<SessionRow>(
    `SELECT ${SESSION_COLUMNS} FROM sessions s WHERE s.userId = ? AND (s.projectId, s.id) IN (${keys.map(() => '(?, ?)').join(', ')})`,
    ctx.user.id,
    ...keys.flatMap((k) => [k.projectId, k.sessionId.toLowerCase()]),
  );
}

/** Markdown of several of the caller's sessions in one statement, keyed `${projectId}/${sessionId}`. */
export function markdownOfSessions(ctx: Ctx, keys: readonly SessionKey[]): Promise<Map<string, string>> {
  return markdownOf(ctx.deps.db.reads, ctx.user.id, keys);
}
