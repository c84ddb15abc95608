/** Reads of sessions: keyset pages in every order, counts, sizes, the batched reads of GraphQL's loaders. */
import { markdownOfSessions as markdownOf, readContentRange } from '../data/content';
import * as store from '../data/sessions';
import * as pages from '../data/session-pages';
import { ORDER_SQL, type SessionKeyset } from '../data/session-pages';
import type { ContentPart, SessionKey, SessionRow, SessionOrder } from '../domain/session-row';
import { AppError, invalid, projectNotFound, sessionNotFound } from '../errors';
import { readableScopes, requireProjectReader, requireReadableSession, scopesFor } from './access';
import type { Ctx } from './context';
import type { SessionFilters, SessionFiltersInput } from '../domain/filters';
import { presentSession } from './presenters/session';
import { filtersOf, ProjectSessionsQuery, RecentSessionsQuery } from './inputs';
import { parseInput } from '../domain/inputs';
import { PROJECT_ID_RE } from '../domain/project';
import { SESSION_ID_RE } from '../domain/session';

/** Bytes [start, end) of one part of a session the caller has read (fewer past its end): only those bytes are read. */
export function getSessionContentRange(ctx: Ctx, row: SessionRow, part: ContentPart, start: number, end: number): Promise<Buffer> {
  return readContentRange(ctx.deps.db.reads, { projectId: row.projectId, sessionId: row.id, part }, { start, end });
}

/** Opaque keyset cursor: the order, the last row's sort value and key. Stable under inserts. */
export function encodeCursor(order: SessionOrder, row: SessionRow): string {
  const { col } = ORDER_SQL[order];
  const v = row[col];
  return Buffer.from(JSON.stringify([order, v instanceof Date ? v.getTime() : v, row.projectId, row.id])).toString('base64url');
}

function decodeCursor(order: SessionOrder, cursor: string): SessionKeyset {
  try {
    const parsed: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (!Array.isArray(parsed) || parsed.length !== 4 || parsed[0] !== order) throw new Error('mismatch');
    const [, v, p, s] = parsed as unknown[];
    if (typeof p !== 'string' || typeof s !== 'string') throw new Error('bad key');
    const { col } = ORDER_SQL[order];
    if (col === 'name') {
      if (typeof v !== 'string') throw new Error('bad value');
      return [v, p, s];
    }
    // A cost, or null for a session without one.
    if (col === 'costUsd') {
      if (v !== null && (typeof v !== 'number' || !Number.isFinite(v))) throw new Error('bad value');
      return [v, p, s];
    }
    if (typeof v !== 'number' || !Number.isFinite(v)) throw new Error('bad value');
    return [new Date(v), p, s];
  } catch {
    throw invalid('Invalid cursor');
  }
}

interface SessionPage {
  rows: SessionRow[];
  nextCursor: string | null;
}

/**
 * Sessions of the caller matching the filters, in the given order, one keyset page at a time.
 * Everything is decided in SQL; rows carry no content.
 */
async function querySessions(ctx: Ctx, filters: SessionFilters, order: SessionOrder, limit: number, after?: string | null): Promise<SessionPage> {
  const rows = await pages.sessionsInOrder(ctx.deps.db.reads, {
    scopes: await scopesFor(ctx, filters.teamIds),
    filters,
    order,
    count: limit + 1,
    after: after ? decodeCursor(order, after) : undefined,
  });
  const more = rows.length > limit;
  const page = more ? rows.slice(0, limit) : rows;
  return { rows: page, nextCursor: more ? encodeCursor(order, page[page.length - 1]) : null };
}

async function countSessions(ctx: Ctx, filters: SessionFilters): Promise<number> {
  return pages.countSessions(ctx.deps.db.reads, await scopesFor(ctx, filters.teamIds), filters);
}

/**
 * The projects asked for that the filters' `projectIds` (when given) also name. What the caller
 * may read is applied by the statement (`scopesFor`): a project named but not readable matches nothing.
 */
function projectsWithin(filters: SessionFilters, projectIds: readonly string[]): string[] {
  return filters.projectIds ? projectIds.filter((id) => filters.projectIds!.includes(id)) : [...projectIds];
}

/**
 * One project's sessions matching the filters, one keyset page (a project's `sessionsConnection`
 * after its first page): a `projectIds` filter that leaves this project out matches nothing, and
 * the rows are only those the caller reads.
 */
/** One keyset page of sessions: which, in what order, how many, after which cursor. */
interface SessionPageQuery {
  filters: SessionFilters;
  order: SessionOrder;
  limit: number;
  after?: string | null;
}

export async function projectSessionsPage(ctx: Ctx, projectId: string, { filters, order, limit, after }: SessionPageQuery): Promise<SessionPage> {
  const wanted = projectsWithin(filters, [projectId]);
  if (wanted.length === 0) return { rows: [], nextCursor: null };
  return querySessions(ctx, { ...filters, projectIds: wanted }, order, limit, after);
}

/** GET /projects/{id}/sessions: most recently updated first unless `orderBy` says otherwise, filtered by cost when asked, keyset paging. */
export async function listProjectSessions(ctx: Ctx, projectId: string, query: unknown) {
  const { limit, cursor, orderBy, minCostUsd, maxCostUsd } = parseInput(ProjectSessionsQuery, query);
  if (cursor) decodeCursor(orderBy, cursor);
  await requireProjectReader(ctx, projectId);
  const filters: SessionFilters = { projectIds: [projectId], costFrom: minCostUsd, costTo: maxCostUsd };
  const [page, total] = await Promise.all([querySessions(ctx, filters, orderBy, limit, cursor), countSessions(ctx, filters)]);
  return { sessions: page.rows.map((r) => presentSession(r)), total, projectId, nextCursor: page.nextCursor };
}

/**
 * GET /projects/{id}/sessions/sizes: markdown size per session, plus `"<id>:sessionData"` for each
 * session that has session data. A project the caller does not have yet is empty
 * (the upload CLI asks before its first sync and retries a 404); another user's stays 403, and an
 * id that can never be a project stays 404.
 */
export async function projectSessionSizes(ctx: Ctx, projectId: string): Promise<Record<string, number>> {
  // An id that can never be a project stays a 404.
  if (!PROJECT_ID_RE.test(projectId)) throw projectNotFound(projectId);
  try {
    await requireProjectReader(ctx, projectId);
  } catch (err) {
    if (err instanceof AppError && err.code === 'NOT_FOUND') return {};
    throw err;
  }
  const out: Record<string, number> = {};
  for (const r of await store.sessionSizes(ctx.deps.db.reads, projectId)) {
    out[r.id] = r.markdownSize;
    if (r.sessionDataSize > 0) out[`${r.id}:sessionData`] = r.sessionDataSize;
  }
  return out;
}

export async function listRecentSessions(ctx: Ctx, query: unknown) {
  const { limit } = parseInput(RecentSessionsQuery, query);
  // No next page to tell of: exactly `limit` rows, no cursor.
  const rows = await pages.sessionsInOrder(ctx.deps.db.reads, { scopes: await scopesFor(ctx), filters: {}, order: 'UPDATED_AT_DESC', count: limit });
  const sessions = rows.map((r) => presentSession(r, false));
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
  return querySessions(ctx, filtersOf(filtersInput), order, limit, after);
}

// ---------------------------------------------------------------------------------------------
// Batched reads (GraphQL loaders: one statement for many projects or sessions)

/**
 * The first `limit` sessions of each of several projects (filters and order as querySessions),
 * in one statement.
 */
export async function sessionsForProjects(
  ctx: Ctx,
  projectIds: readonly string[],
  filters: SessionFilters,
  order: SessionOrder,
  limit: number,
): Promise<Map<string, SessionRow[]>> {
  if (projectIds.length === 0) return new Map();
  const wanted = projectsWithin(filters, projectIds);
  if (wanted.length === 0) return new Map();
  return pages.firstSessionsOfProjects(ctx.deps.db.reads, await scopesFor(ctx, filters.teamIds), { ...filters, projectIds: wanted }, order, limit);
}

/**
 * A session by id: in the named project (404 / 403 as the access rule says), else the caller's most
 * recently updated session with this id in any project they read.
 */
export async function findSession(ctx: Ctx, sessionId: string, projectId?: string | null): Promise<SessionRow> {
  return projectId != null ? requireReadableSession(ctx, projectId, sessionId) : findLatestSessionById(ctx, sessionId);
}

/**
 * Sessions as `findSessions` reads them, of one project when `projectId` is given: a project the
 * caller cannot read is 403 (unknown: 404) rather than an empty page.
 */
export async function findProjectSessions(
  ctx: Ctx,
  projectId: string | null | undefined,
  {
    filters: filtersInput,
    order,
    limit,
    after,
  }: {
    filters: SessionFiltersInput;
    order: SessionOrder;
    limit: number;
    /** The cursor, or how to read it (a door's own cursor format, read once the project is checked). */
    after?: string | null | (() => string | null);
  },
): Promise<SessionPage> {
  if (projectId) await requireProjectReader(ctx, projectId);
  const cursor = typeof after === 'function' ? after() : after;
  return findSessions(ctx, { ...filtersInput, projectIds: projectId ? [projectId] : null }, order, limit, cursor);
}

/** The caller's most recently updated session with this id, in any project; none → NOT_FOUND. */
async function findLatestSessionById(ctx: Ctx, rawSessionId: string): Promise<SessionRow> {
  if (!SESSION_ID_RE.test(rawSessionId)) throw sessionNotFound(rawSessionId);
  const sessionId = rawSessionId.toLowerCase();
  const row = await store.latestSessionById(ctx.deps.db.reads, await readableScopes(ctx), sessionId);
  if (!row) throw sessionNotFound(sessionId);
  return row;
}

/** The caller's sessions among `keys` (others' and missing ones are simply absent). */
export async function sessionsByKeys(ctx: Ctx, keys: readonly SessionKey[]): Promise<SessionRow[]> {
  return store.sessionsByKeys(ctx.deps.db.reads, await readableScopes(ctx), keys);
}

/** Markdown of several of the caller's sessions in one statement, keyed `${projectId}/${sessionId}`. */
export async function markdownOfSessions(ctx: Ctx, keys: readonly SessionKey[]): Promise<Map<string, string>> {
  return markdownOf(ctx.deps.db.reads, await readableScopes(ctx), keys);
}
