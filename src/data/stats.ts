/**
 * The stats queries: every figure is computed by the database (COUNT / SUM / GROUP BY), scoped to
 * the owner scopes the caller reads through (their own id and their teams'); nothing here loads session rows. Per-project queries take many project ids at once so
 * that loaders can batch them. Values come back as the driver reads them (services count them).
 */
import type { LabelKind } from '../domain/session-row';
import { inScopes, marks, type Sql } from './sql';

export function projectTotals(db: Sql, scopes: readonly string[], projectIds: readonly string[]) {
  return db.query<{ projectId: string; c: unknown; md: unknown; raw: unknown }>(
    `SELECT s.projectId, COUNT(*) AS c, COALESCE(SUM(s.markdownSize), 0) AS md, COALESCE(SUM(s.rawDataSize), 0) AS raw
       FROM sessions s WHERE ${inScopes('s.userId', scopes)} AND s.projectId IN (${marks(projectIds)}) GROUP BY s.projectId`,
    ...scopes,
    ...projectIds,
  );
}

/** Distinct label values per project. */
export function projectLabelValues(db: Sql, scopes: readonly string[], projectIds: readonly string[], kind: LabelKind) {
  return db.query<{ projectId: string; value: string }>(
    `SELECT DISTINCT l.projectId, l.value FROM session_labels l
      WHERE ${inScopes('l.userId', scopes)} AND l.kind = ? AND l.projectId IN (${marks(projectIds)})
      ORDER BY l.projectId, l.value`,
    ...scopes,
    kind,
    ...projectIds,
  );
}

/** Sessions created per project and UTC day (YYYY-MM-DD) since `from`; days without any are absent. */
export function projectSessionsByDay(db: Sql, scopes: readonly string[], projectIds: readonly string[], from: Date) {
  return db.query<{ projectId: string; d: string; c: unknown }>(
    `SELECT s.projectId, DATE_FORMAT(s.createdAt, '%Y-%m-%d') AS d, COUNT(*) AS c FROM sessions s
      WHERE ${inScopes('s.userId', scopes)} AND s.projectId IN (${marks(projectIds)}) AND s.createdAt >= ?
      GROUP BY s.projectId, d`,
    ...scopes,
    ...projectIds,
    from,
  );
}

/** The `limit` most used tags per project (count desc, then tag), one statement for all projects. */
export function projectTopTags(db: Sql, scopes: readonly string[], projectIds: readonly string[], limit: number) {
  return db.query<{ projectId: string; value: string; c: unknown }>(
    `SELECT t.projectId, t.value, t.c FROM (
        SELECT l.projectId, l.value, COUNT(*) AS c,
               ROW_NUMBER() OVER (PARTITION BY l.projectId ORDER BY COUNT(*) DESC, l.value ASC) AS rn
          FROM session_labels l
         WHERE ${inScopes('l.userId', scopes)} AND l.kind = 'tag' AND l.projectId IN (${marks(projectIds)})
         GROUP BY l.projectId, l.value) t
      WHERE t.rn <= ? ORDER BY t.projectId, t.rn`,
    ...scopes,
    ...projectIds,
    limit,
  );
}

/** Sessions, markdown bytes, sessions created since `weekAgo`, and projects of a user. */
export async function userTotals(db: Sql, scopes: readonly string[], weekAgo: Date) {
  const [s] = await db.query<{ c: unknown; md: unknown; week: unknown; projects: unknown }>(
    `SELECT COUNT(*) AS c, COALESCE(SUM(s.markdownSize), 0) AS md, COALESCE(SUM(s.createdAt >= ?), 0) AS week,
            (SELECT COUNT(*) FROM projects p WHERE ${inScopes('p.ownerId', scopes)}) AS projects
       FROM sessions s WHERE ${inScopes('s.userId', scopes)}`,
    weekAgo,
    ...scopes,
    ...scopes,
  );
  return s;
}

export function topLLMModels(db: Sql, scopes: readonly string[], limit: number) {
  return db.query<{ value: string; c: unknown }>(
    `SELECT l.value, COUNT(*) AS c FROM session_labels l WHERE ${inScopes('l.userId', scopes)} AND l.kind = 'llmModel'
      GROUP BY l.value ORDER BY c DESC, l.value ASC LIMIT ?`,
    ...scopes,
    limit,
  );
}

export async function analyticsTotals(db: Sql, scopes: readonly string[], start: Date, end: Date) {
  const [s] = await db.query<{ c: unknown; p: unknown }>(
    `SELECT COUNT(*) AS c, COUNT(DISTINCT s.projectId) AS p FROM sessions s
      WHERE ${inScopes('s.userId', scopes)} AND s.createdAt >= ? AND s.createdAt <= ?`,
    ...scopes,
    start,
    end,
  );
  return s;
}

export function analyticsByModel(db: Sql, scopes: readonly string[], start: Date, end: Date) {
  return db.query<{ value: string; c: unknown; size: unknown }>(
    `SELECT l.value, COUNT(*) AS c, COALESCE(SUM(s.markdownSize), 0) AS size
       FROM session_labels l JOIN sessions s ON s.projectId = l.projectId AND s.id = l.sessionId
      WHERE ${inScopes('l.userId', scopes)} AND l.kind = 'llmModel' AND ${inScopes('s.userId', scopes)} AND s.createdAt >= ? AND s.createdAt <= ?
      GROUP BY l.value ORDER BY c DESC, l.value ASC`,
    ...scopes,
    ...scopes,
    start,
    end,
  );
}

export function analyticsByClient(db: Sql, scopes: readonly string[], start: Date, end: Date) {
  return db.query<{ client: string; c: unknown; avg: unknown }>(
    `SELECT COALESCE(NULLIF(s.clientName, ''), 'unknown') AS client, COUNT(*) AS c, COALESCE(AVG(s.markdownSize), 0) AS avg
       FROM sessions s WHERE ${inScopes('s.userId', scopes)} AND s.createdAt >= ? AND s.createdAt <= ?
      GROUP BY client ORDER BY c DESC, client ASC`,
    ...scopes,
    start,
    end,
  );
}

export function analyticsByDay(db: Sql, scopes: readonly string[], start: Date, end: Date) {
  return db.query<{ d: string; c: unknown; p: unknown }>(
    `SELECT DATE_FORMAT(s.createdAt, '%Y-%m-%d') AS d, COUNT(*) AS c, COUNT(DISTINCT s.projectId) AS p
       FROM sessions s WHERE ${inScopes('s.userId', scopes)} AND s.createdAt >= ? AND s.createdAt <= ?
      GROUP BY d ORDER BY d`,
    ...scopes,
    start,
    end,
  );
}

/**
 * The `limit` most used values of each list filter over a user's sessions (one project's when
 * `projectId` is given): two statements whatever the number of sessions, each bounded by `limit`
 * rows per facet (a window function over the labels, one ordered LIMIT per session column).
 */
export async function facetCounts(db: Sql, scopes: readonly string[], projectId: string | null, limit: number) {
  const inProject = projectId == null ? '' : ' AND projectId = ?';
  const p = projectId == null ? [] : [projectId];
  const labels = await db.query<{ kind: string; value: string; c: unknown }>(
    `SELECT t.kind, t.value, t.c FROM (
        SELECT kind, value, COUNT(*) AS c, ROW_NUMBER() OVER (PARTITION BY kind ORDER BY COUNT(*) DESC, value ASC) AS rn
          FROM session_labels WHERE ${inScopes('userId', scopes)}${inProject} AND kind IN ('llmModel', 'tag', 'gitBranch')
         GROUP BY kind, value) t
      WHERE t.rn <= ? ORDER BY t.kind, t.rn`,
    ...scopes,
    ...p,
    limit,
  );
  const column = (name: 'clientName' | 'agentName' | 'deviceId') =>
    `(SELECT '${name}' AS kind, ${name} AS value, COUNT(*) AS c FROM sessions
       WHERE ${inScopes('userId', scopes)}${inProject} AND ${name} IS NOT NULL AND ${name} <> ''
       GROUP BY ${name} ORDER BY c DESC, ${name} ASC LIMIT ?)`;
  const columns = await db.query<{ kind: string; value: string; c: unknown }>(
    [column('clientName'), column('agentName'), column('deviceId')].join(' UNION ALL '),
    ...[0, 1, 2].flatMap(() => [...scopes, ...p, limit]),
  );
  return [...labels, ...columns];
}
