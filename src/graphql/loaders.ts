import DataLoader from 'dataloader';
import type { Ctx } from '../services/context';
import type { SessionFilters } from '../domain/filters';
import { projectsWithStats } from '../services/projects';
import type { ProjectDto } from '../services/presenters/project';
import { markdownOfSessions, sessionsByKeys, sessionsForProjects } from '../services/session-lists';
import type { LabelKind, SessionKey, SessionOrder, SessionRow } from '../domain/session-row';
import { sharesOfSessions } from '../services/shares';
import type { ShareDto } from '../services/presenters/share';
import * as stats from '../services/stats';
import { usageOfSessions } from '../services/usage';
import type { SessionUsage } from '../domain/usage';
import { invalid } from '../errors';

/** One GraphQL response carries at most this much session content. */
const CONTENT_BUDGET_BYTES = 64 * 1024 * 1024;

/** Markdown one operation may make the service split into exchanges (indexes not cached yet). */
export const SCAN_BUDGET_BYTES = 64 * 1024 * 1024;

const overBudget = () =>
  invalid(`Query exceeds the content budget: at most ${CONTENT_BUDGET_BYTES / (1024 * 1024)} MiB of session content per response`, {
    budgetBytes: CONTENT_BUDGET_BYTES,
  });

/**
 * Per-request loaders: every field resolved for many parents (Project.sessions for each project,
 * Session.project for each session, …) becomes one SQL statement per distinct argument set,
 * however many parents there are.
 */
export interface Loaders {
  project: DataLoader<string, ProjectDto | null>;
  session: DataLoader<SessionKey, SessionRow | null, string>;
  /**
   * A session's markdown, charged against the response's content budget by its stored size
   * before anything is loaded; over the budget → VALIDATION_ERROR and nothing of the batch loads.
   */
  markdown(key: SessionKey, storedSize: number): Promise<string>;
  /** Charges `bytes` of other session content (a page of exchanges); over the budget → VALIDATION_ERROR. */
  chargeContent(bytes: number): void;
  /**
   * Charges `bytes` of markdown to scan for exchange indexes not built yet; over SCAN_BUDGET_BYTES
   * per operation → VALIDATION_ERROR (bounded work per request).
   */
  chargeScan(bytes: number): void;
  projectSessions(filters: SessionFilters, order: SessionOrder, limit: number): DataLoader<string, SessionRow[]>;
  projectTotals: DataLoader<string, stats.ProjectTotals>;
  projectLabels(kind: LabelKind): DataLoader<string, string[]>;
  projectSessionsByDay(days: number): DataLoader<string, Array<{ date: string; count: number }>>;
  projectTopTags(limit: number): DataLoader<string, Array<{ tag: string; count: number }>>;
  /** Session.shares: the caller's links of each session, one statement for all of them. */
  sessionShares: DataLoader<SessionKey, ShareDto[], string>;
  /** Session.usage: the usage of sessions already read, one statement for all of them. */
  sessionUsage: DataLoader<SessionKey, SessionUsage | null, string>;
}

const sessionKey = (k: SessionKey) => `${k.projectId}/${k.sessionId.toLowerCase()}`;

/** One loader per distinct argument set, created on first use. */
function keyed<A, L>(make: (args: A) => L): (args: A) => L {
  const cache = new Map<string, L>();
  return (args: A) => {
    const k = JSON.stringify(args);
    let l = cache.get(k);
    if (!l) {
      l = make(args);
      cache.set(k, l);
    }
    return l;
  };
}

export function createLoaders(ctx: Ctx, origin: string): Loaders {
  const project = new DataLoader<string, ProjectDto | null>(async (ids) => {
    const rows = await projectsWithStats(ctx, [...ids]);
    const byId = new Map(rows.map((p) => [p.id, p]));
    return ids.map((id) => byId.get(id) ?? null);
  });

  const session = new DataLoader<SessionKey, SessionRow | null, string>(
    async (keys) => {
      const rows = await sessionsByKeys(ctx, keys);
      const byKey = new Map(rows.map((r) => [`${r.projectId}/${r.id}`, r]));
      return keys.map((k) => byKey.get(sessionKey(k)) ?? null);
    },
    { cacheKeyFn: sessionKey },
  );

  // Every field resolved in one tick charges the budget before the batch runs (DataLoader
  // dispatches after the current tick), so a list over budget loads nothing at all.
  let charged = 0;
  const chargedKeys = new Set<string>();
  const markdownLoader = new DataLoader<SessionKey, string, string>(
    async (keys) => {
      if (charged > CONTENT_BUDGET_BYTES) throw overBudget();
      const byKey = await markdownOfSessions(ctx, keys);
      return keys.map((k) => byKey.get(sessionKey(k)) ?? '');
    },
    { cacheKeyFn: sessionKey },
  );

  const projectSessionsFor = keyed(
    ({ filters, order, limit }: { filters: SessionFilters; order: SessionOrder; limit: number }) =>
      new DataLoader<string, SessionRow[]>(async (ids) => {
        const byProject = await sessionsForProjects(ctx, ids, filters, order, limit);
        return ids.map((id) => byProject.get(id) ?? []);
      }),
  );

  const projectTotals = new DataLoader<string, stats.ProjectTotals>(async (ids) => {
    const m = await stats.projectTotals(ctx, ids);
    return ids.map((id) => m.get(id) ?? { totalSessions: 0, totalMarkdownSize: 0, totalRawDataSize: 0 });
  });

  const labelsFor = keyed(
    (kind: LabelKind) =>
      new DataLoader<string, string[]>(async (ids) => {
        const m = await stats.projectLabelValues(ctx, ids, kind);
        return ids.map((id) => m.get(id) ?? []);
      }),
  );

  const byDayFor = keyed(
    (days: number) =>
      new DataLoader<string, Array<{ date: string; count: number }>>(async (ids) => {
        const m = await stats.projectSessionsByDay(ctx, ids, days);
        return ids.map((id) => m.get(id) ?? []);
      }),
  );

  const topTagsFor = keyed(
    (limit: number) =>
      new DataLoader<string, Array<{ tag: string; count: number }>>(async (ids) => {
        const m = await stats.projectTopTags(ctx, ids, limit);
        return ids.map((id) => m.get(id) ?? []);
      }),
  );

  const sessionShares = new DataLoader<SessionKey, ShareDto[], string>(
    async (keys) => {
      const byKey = await sharesOfSessions(ctx, origin, keys);
      return keys.map((k) => byKey.get(sessionKey(k)) ?? []);
    },
    { cacheKeyFn: sessionKey },
  );

  const sessionUsage = new DataLoader<SessionKey, SessionUsage | null, string>(
    async (keys) => {
      const byKey = await usageOfSessions(ctx, keys);
      return keys.map((k) => byKey.get(`${k.projectId}/${k.sessionId}`) ?? null);
    },
    { cacheKeyFn: sessionKey },
  );

  const markdown = (key: SessionKey, storedSize: number): Promise<string> => {
    const k = sessionKey(key);
    if (!chargedKeys.has(k)) {
      chargedKeys.add(k);
      charged += storedSize;
    }
    if (charged > CONTENT_BUDGET_BYTES) return Promise.reject(overBudget());
    return markdownLoader.load(key);
  };

  const chargeContent = (bytes: number): void => {
    charged += bytes;
    if (charged > CONTENT_BUDGET_BYTES) throw overBudget();
  };
  let scanned = 0;
  const chargeScan = (bytes: number): void => {
    scanned += bytes;
    if (scanned > SCAN_BUDGET_BYTES) {
      throw invalid(
        `Query exceeds the exchange budget: at most ${SCAN_BUDGET_BYTES / (1024 * 1024)} MiB of markdown not read before may be split into exchanges per operation; ask for fewer sessions' exchanges at once`,
        {
          budgetBytes: SCAN_BUDGET_BYTES,
        },
      );
    }
  };

  return {
    project,
    session,
    markdown,
    chargeContent,
    chargeScan,
    projectSessions: (filters, order, limit) => projectSessionsFor({ filters, order, limit }),
    projectTotals,
    projectLabels: labelsFor,
    projectSessionsByDay: byDayFor,
    projectTopTags: topTagsFor,
    sessionShares,
    sessionUsage,
  };
}
