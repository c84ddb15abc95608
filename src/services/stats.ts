import type { Ctx } from './context';
import { DaysArg, FacetLimitArg, parseInput, TimeRangeInput } from './inputs';

/**
 * Aggregates for GraphQL's stats, Project.stats and analytics. Every figure is computed by the
 * database (COUNT / SUM / GROUP BY); no function here loads session rows into memory. The
 * per-project functions take many project ids at once so that loaders can batch them.
 */

const DAY_MS = 86_400_000;
const n = (v: unknown): number => (v == null ? 0 : Number(v));

async function q<T>(ctx: Ctx, sql: string, ...params: unknown[]): Promise<T[]> {
  return ctx.deps.db.reads.query<T>(sql, ...params);
}

const marks = (xs: unknown[]) => xs.map(() => '?').join(', ');

/** UTC midnight of the day `d` falls on. */
const utcDay = (d: Date) => new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate()));
const dayKey = (d: Date) => d.toISOString().slice(0, 10);

/** Every UTC day from `from` to `to` (both midnights), as YYYY-MM-DD. */
function daysBetween(from: Date, to: Date): string[] {
  const out: string[] = [];
  for (let t = from.getTime(); t <= to.getTime(); t += DAY_MS) out.push(dayKey(new Date(t)));
  return out;
}

export interface ProjectTotals {
  totalSessions: number;
  totalMarkdownSize: number;
  totalRawDataSize: number;
}

export async function projectTotals(ctx: Ctx, projectIds: readonly string[]): Promise<Map<string, ProjectTotals>> {
  const out = new Map<string, ProjectTotals>();
  if (projectIds.length === 0) return out;
  const rows = await q<{ projectId: string; c: unknown; md: unknown; raw: unknown }>(
    ctx,
    `SELECT s.projectId, COUNT(*) AS c, COALESCE(SUM(s.markdownSize), 0) AS md, COALESCE(SUM(s.rawDataSize), 0) AS raw
       FROM sessions s WHERE s.userId = ? AND s.projectId IN (${marks(projectIds as string[])}) GROUP BY s.projectId`,
    ctx.user.id,
    ...projectIds,
  );
  for (const r of rows) out.set(r.projectId, { totalSessions: n(r.c), totalMarkdownSize: n(r.md), totalRawDataSize: n(r.raw) });
  return out;
}

export type LabelKind = 'llmModel' | 'tag' | 'gitBranch';

/** Distinct label values per project, sorted. */
export async function projectLabelValues(ctx: Ctx, projectIds: readonly string[], kind: LabelKind): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  if (projectIds.length === 0) return out;
  const rows = await q<{ projectId: string; value: string }>(
    ctx,
    `SELECT DISTINCT l.projectId, l.value FROM session_labels l
      WHERE l.userId = ? AND l.kind = ? AND l.projectId IN (${marks(projectIds as string[])})
      ORDER BY l.projectId, l.value`,
    ctx.user.id,
    kind,
    ...projectIds,
  );
  for (const r of rows) {
    const list = out.get(r.projectId) ?? [];
    list.push(r.value);
    out.set(r.projectId, list);
  }
  for (const list of out.values()) list.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return out;
}

export function checkDays(days: number): number {
  return parseInput(DaysArg, days);
}

/** Sessions created per UTC day over the last `days` days (today included), oldest first, zeros included. */
export async function projectSessionsByDay(
  ctx: Ctx,
  projectIds: readonly string[],
  days: number,
  now = new Date(),
): Promise<Map<string, Array<{ date: string; count: number }>>> {
  checkDays(days);
  const today = utcDay(now);
  const from = new Date(today.getTime() - (days - 1) * DAY_MS);
  const keys = daysBetween(from, today);
  const counts = new Map<string, Map<string, number>>();
  if (projectIds.length) {
    const rows = await q<{ projectId: string; d: string; c: unknown }>(
      ctx,
      `SELECT s.projectId, DATE_FORMAT(s.createdAt, '%Y-%m-%d') AS d, COUNT(*) AS c FROM sessions s
        WHERE s.userId = ? AND s.projectId IN (${marks(projectIds as string[])}) AND s.createdAt >= ?
        GROUP BY s.projectId, d`,
      ctx.user.id,
      ...projectIds,
      from,
    );
    for (const r of rows) {
      const m = counts.get(r.projectId) ?? new Map<string, number>();
      m.set(r.d, n(r.c));
      counts.set(r.projectId, m);
    }
  }
  const out = new Map<string, Array<{ date: string; count: number }>>();
  for (const id of projectIds) {
    const m = counts.get(id);
    out.set(id, keys.map((date) => ({ date, count: m?.get(date) ?? 0 })));
  }
  return out;
}

/** The `limit` most used tags per project (count desc, then tag), one statement for all projects. */
export async function projectTopTags(
  ctx: Ctx,
  projectIds: readonly string[],
  limit: number,
): Promise<Map<string, Array<{ tag: string; count: number }>>> {
  const out = new Map<string, Array<{ tag: string; count: number }>>();
  if (projectIds.length === 0) return out;
  const rows = await q<{ projectId: string; value: string; c: unknown }>(
    ctx,
    `SELECT t.projectId, t.value, t.c FROM (
        SELECT l.projectId, l.value, COUNT(*) AS c,
               ROW_NUMBER() OVER (PARTITION BY l.projectId ORDER BY COUNT(*) DESC, l.value ASC) AS rn
          FROM session_labels l
         WHERE l.userId = ? AND l.kind = 'tag' AND l.projectId IN (${marks(projectIds as string[])})
         GROUP BY l.projectId, l.value) t
      WHERE t.rn <= ? ORDER BY t.projectId, t.rn`,
    ctx.user.id,
    ...projectIds,
    limit,
  );
  for (const r of rows) {
    const list = out.get(r.projectId) ?? [];
    list.push({ tag: r.value, count: n(r.c) });
    out.set(r.projectId, list);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Across all of the caller's sessions

export interface UserTotals {
  totalSessions: number;
  totalProjects: number;
  sessionsThisWeek: number;
  totalMarkdownSize: number;
}

export async function userTotals(ctx: Ctx, now = new Date()): Promise<UserTotals> {
  const weekAgo = new Date(now.getTime() - 7 * DAY_MS);
  const [s] = await q<{ c: unknown; md: unknown; week: unknown; projects: unknown }>(
    ctx,
    `SELECT COUNT(*) AS c, COALESCE(SUM(s.markdownSize), 0) AS md, COALESCE(SUM(s.createdAt >= ?), 0) AS week,
            (SELECT COUNT(*) FROM projects p WHERE p.ownerId = ?) AS projects
       FROM sessions s WHERE s.userId = ?`,
    weekAgo,
    ctx.user.id,
    ctx.user.id,
  );
  return { totalSessions: n(s.c), totalProjects: n(s.projects), sessionsThisWeek: n(s.week), totalMarkdownSize: n(s.md) };
}

export async function topLLMModels(ctx: Ctx, limit: number): Promise<Array<{ model: string; count: number }>> {
  const rows = await q<{ value: string; c: unknown }>(
    ctx,
    `SELECT l.value, COUNT(*) AS c FROM session_labels l WHERE l.userId = ? AND l.kind = 'llmModel'
      GROUP BY l.value ORDER BY c DESC, l.value ASC LIMIT ?`,
    ctx.user.id,
    limit,
  );
  return rows.map((r) => ({ model: r.value, count: n(r.c) }));
}

export interface AnalyticsRange {
  start: Date;
  end: Date;
}

export function analyticsRange(input: { start: unknown; end: unknown }): AnalyticsRange {
  return parseInput(TimeRangeInput, input);
}

export async function analyticsTotals(ctx: Ctx, r: AnalyticsRange): Promise<{ totalSessions: number; totalProjects: number }> {
  const [s] = await q<{ c: unknown; p: unknown }>(
    ctx,
    `SELECT COUNT(*) AS c, COUNT(DISTINCT s.projectId) AS p FROM sessions s
      WHERE s.userId = ? AND s.createdAt >= ? AND s.createdAt <= ?`,
    ctx.user.id,
    r.start,
    r.end,
  );
  return { totalSessions: n(s.c), totalProjects: n(s.p) };
}

export async function analyticsByModel(ctx: Ctx, r: AnalyticsRange): Promise<Array<{ model: string; count: number; totalSize: number }>> {
  const rows = await q<{ value: string; c: unknown; size: unknown }>(
    ctx,
    `SELECT l.value, COUNT(*) AS c, COALESCE(SUM(s.markdownSize), 0) AS size
       FROM session_labels l JOIN sessions s ON s.projectId = l.projectId AND s.id = l.sessionId
      WHERE l.userId = ? AND l.kind = 'llmModel' AND s.userId = ? AND s.createdAt >= ? AND s.createdAt <= ?
      GROUP BY l.value ORDER BY c DESC, l.value ASC`,
    ctx.user.id,
    ctx.user.id,
    r.start,
    r.end,
  );
  return rows.map((x) => ({ model: x.value, count: n(x.c), totalSize: n(x.size) }));
}

export async function analyticsByClient(ctx: Ctx, r: AnalyticsRange): Promise<Array<{ client: string; count: number; averageSize: number }>> {
  const rows = await q<{ client: string; c: unknown; avg: unknown }>(
    ctx,
    `SELECT COALESCE(NULLIF(s.clientName, ''), 'unknown') AS client, COUNT(*) AS c, COALESCE(AVG(s.markdownSize), 0) AS avg
       FROM sessions s WHERE s.userId = ? AND s.createdAt >= ? AND s.createdAt <= ?
      GROUP BY client ORDER BY c DESC, client ASC`,
    ctx.user.id,
    r.start,
    r.end,
  );
  return rows.map((x) => ({ client: x.client, count: n(x.c), averageSize: n(x.avg) }));
}

/** Longest range whose zero days are listed; longer ranges list only the days with activity. */
const MAX_FILLED_DAYS = 3660;

export async function analyticsByDay(ctx: Ctx, r: AnalyticsRange): Promise<Array<{ date: string; sessions: number; projects: number }>> {
  const rows = await q<{ d: string; c: unknown; p: unknown }>(
    ctx,
    `SELECT DATE_FORMAT(s.createdAt, '%Y-%m-%d') AS d, COUNT(*) AS c, COUNT(DISTINCT s.projectId) AS p
       FROM sessions s WHERE s.userId = ? AND s.createdAt >= ? AND s.createdAt <= ?
      GROUP BY d ORDER BY d`,
    ctx.user.id,
    r.start,
    r.end,
  );
  const byDay = new Map(rows.map((x) => [x.d, { date: x.d, sessions: n(x.c), projects: n(x.p) }]));
  const from = utcDay(r.start);
  const to = utcDay(r.end);
  if ((to.getTime() - from.getTime()) / DAY_MS + 1 > MAX_FILLED_DAYS) return [...byDay.values()];
  return daysBetween(from, to).map((date) => byDay.get(date) ?? { date, sessions: 0, projects: 0 });
}

// ---------------------------------------------------------------------------------------------
// Facets: what a filter form offers

export interface FacetCount {
  value: string;
  count: number;
}

export interface SessionFacets {
  llmModels: FacetCount[];
  tags: FacetCount[];
  gitBranches: FacetCount[];
  clientNames: FacetCount[];
  agentNames: FacetCount[];
  deviceIds: FacetCount[];
}

export function checkFacetLimit(limit: number): number {
  return parseInput(FacetLimitArg, limit);
}

/**
 * The `limit` most used values of each list filter over the caller's sessions (one project's when
 * `projectId` is given): two statements whatever the number of sessions, each bounded by `limit`
 * rows per facet (a window function over the labels, one ordered LIMIT per session column).
 */
export async function sessionFacets(ctx: Ctx, projectId: string | null, limit: number): Promise<SessionFacets> {
  checkFacetLimit(limit);
  const inProject = projectId == null ? '' : ' AND projectId = ?';
  const p = projectId == null ? [] : [projectId];
  const labels = await q<{ kind: string; value: string; c: unknown }>(
    ctx,
    `SELECT t.kind, t.value, t.c FROM (
        SELECT kind, value, COUNT(*) AS c, ROW_NUMBER() OVER (PARTITION BY kind ORDER BY COUNT(*) DESC, value ASC) AS rn
          FROM session_labels WHERE userId = ?${inProject} AND kind IN ('llmModel', 'tag', 'gitBranch')
         GROUP BY kind, value) t
      WHERE t.rn <= ? ORDER BY t.kind, t.rn`,
    ctx.user.id,
    ...p,
    limit,
  );
  const column = (name: 'clientName' | 'agentName' | 'deviceId') =>
    `(SELECT '${name}' AS kind, ${name} AS value, COUNT(*) AS c FROM sessions
       WHERE userId = ?${inProject} AND ${name} IS NOT NULL AND ${name} <> ''
       GROUP BY ${name} ORDER BY c DESC, ${name} ASC LIMIT ?)`;
  const columns = await q<{ kind: string; value: string; c: unknown }>(
    ctx,
    [column('clientName'), column('agentName'), column('deviceId')].join(' UNION ALL '),
    ...[0, 1, 2].flatMap(() => [ctx.user.id, ...p, limit]),
  );
  const out: SessionFacets = { llmModels: [], tags: [], gitBranches: [], clientNames: [], agentNames: [], deviceIds: [] };
  const key: Record<string, keyof SessionFacets> = {
    llmModel: 'llmModels', tag: 'tags', gitBranch: 'gitBranches', clientName: 'clientNames', agentName: 'agentNames', deviceId: 'deviceIds',
  };
  for (const r of [...labels, ...columns]) out[key[r.kind]].push({ value: r.value, count: n(r.c) });
  return out;
}
