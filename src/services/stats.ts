import type { LabelKind } from '../domain/session-row';
import * as store from '../data/stats';
import type { Ctx } from './context';
import { readableScopes, requireReadableProject } from './access';
import { DaysArg, FacetLimitArg, TimeRangeInput } from './inputs';
import { parseInput } from '../domain/inputs';

/**
 * Aggregates for GraphQL's stats, Project.stats and analytics: bounds, days without sessions, the
 * figures' shapes. The statements are src/data/stats.ts; every figure is computed by the database.
 */

const DAY_MS = 86_400_000;
const n = (v: unknown): number => (v == null ? 0 : Number(v));

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
  const rows = await store.projectTotals(ctx.deps.db.reads, await readableScopes(ctx), projectIds);
  for (const r of rows) out.set(r.projectId, { totalSessions: n(r.c), totalMarkdownSize: n(r.md), totalRawDataSize: n(r.raw) });
  return out;
}

/** Distinct label values per project, sorted. */
export async function projectLabelValues(ctx: Ctx, projectIds: readonly string[], kind: LabelKind): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  if (projectIds.length === 0) return out;
  const rows = await store.projectLabelValues(ctx.deps.db.reads, await readableScopes(ctx), projectIds, kind);
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
    const rows = await store.projectSessionsByDay(ctx.deps.db.reads, await readableScopes(ctx), projectIds, from);
    for (const r of rows) {
      const m = counts.get(r.projectId) ?? new Map<string, number>();
      m.set(r.d, n(r.c));
      counts.set(r.projectId, m);
    }
  }
  const out = new Map<string, Array<{ date: string; count: number }>>();
  for (const id of projectIds) {
    const m = counts.get(id);
    out.set(
      id,
      keys.map((date) => ({ date, count: m?.get(date) ?? 0 })),
    );
  }
  return out;
}

/** The `limit` most used tags per project (count desc, then tag), one statement for all projects. */
export async function projectTopTags(ctx: Ctx, projectIds: readonly string[], limit: number): Promise<Map<string, Array<{ tag: string; count: number }>>> {
  const out = new Map<string, Array<{ tag: string; count: number }>>();
  if (projectIds.length === 0) return out;
  const rows = await store.projectTopTags(ctx.deps.db.reads, await readableScopes(ctx), projectIds, limit);
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
  const s = await store.userTotals(ctx.deps.db.reads, await readableScopes(ctx), weekAgo);
  return { totalSessions: n(s.c), totalProjects: n(s.projects), sessionsThisWeek: n(s.week), totalMarkdownSize: n(s.md) };
}

export async function topLLMModels(ctx: Ctx, limit: number): Promise<Array<{ model: string; count: number }>> {
  const rows = await store.topLLMModels(ctx.deps.db.reads, await readableScopes(ctx), limit);
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
  const s = await store.analyticsTotals(ctx.deps.db.reads, await readableScopes(ctx), r.start, r.end);
  return { totalSessions: n(s.c), totalProjects: n(s.p) };
}

export async function analyticsByModel(ctx: Ctx, r: AnalyticsRange): Promise<Array<{ model: string; count: number; totalSize: number }>> {
  const rows = await store.analyticsByModel(ctx.deps.db.reads, await readableScopes(ctx), r.start, r.end);
  return rows.map((x) => ({ model: x.value, count: n(x.c), totalSize: n(x.size) }));
}

export async function analyticsByClient(ctx: Ctx, r: AnalyticsRange): Promise<Array<{ client: string; count: number; averageSize: number }>> {
  const rows = await store.analyticsByClient(ctx.deps.db.reads, await readableScopes(ctx), r.start, r.end);
  return rows.map((x) => ({ client: x.client, count: n(x.c), averageSize: n(x.avg) }));
}

/** Longest range whose zero days are listed; longer ranges list only the days with activity. */
const MAX_FILLED_DAYS = 3660;

export async function analyticsByDay(ctx: Ctx, r: AnalyticsRange): Promise<Array<{ date: string; sessions: number; projects: number }>> {
  const rows = await store.analyticsByDay(ctx.deps.db.reads, await readableScopes(ctx), r.start, r.end);
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
  // One project's: only one the caller reads (404 / 403 otherwise), checked before the limit.
  if (projectId != null) await requireReadableProject(ctx, projectId);
  checkFacetLimit(limit);
  const counts = await store.facetCounts(ctx.deps.db.reads, await readableScopes(ctx), projectId, limit);
  const out: SessionFacets = { llmModels: [], tags: [], gitBranches: [], clientNames: [], agentNames: [], deviceIds: [] };
  const key: Record<string, keyof SessionFacets> = {
    llmModel: 'llmModels',
    tag: 'tags',
    gitBranch: 'gitBranches',
    clientName: 'clientNames',
    agentName: 'agentNames',
    deviceId: 'deviceIds',
  };
  for (const r of counts) out[key[r.kind]].push({ value: r.value, count: n(r.c) });
  return out;
}
