import { projectNotFound, sessionNotFound } from '../errors';
import type { Resolvers, SessionOrder } from '../generated/graphql';
import { normalizeFilters, type SessionFilters, type SessionFiltersInput } from '../services/filters';
import * as access from '../services/access';
import * as exchanges from '../services/exchanges';
import { ExchangeArgs, parseInput } from '../services/inputs';
import * as keys from '../services/keys';
import * as projects from '../services/projects';
import { redactionsOf } from '../services/redaction';
import * as sessions from '../services/sessions';
import * as sessionLists from '../services/session-lists';
import * as sessionChanges from '../services/session-changes';
import type { SessionRow } from '../services/sessions';
import * as stats from '../services/stats';
import type { GraphqlContext } from './context';
import type { SessionConnectionModel } from './models';
import { searchSessions } from '../search/search-service';
import { selects } from './selection';

/** Memoises a thunk so that several fields of one object share one statement. */
function once<T>(f: () => Promise<T>): () => Promise<T> {
  let p: Promise<T> | undefined;
  return () => (p ??= f());
}

function connection(rows: SessionRow[], order: SessionOrder, first: number, after: string | null | undefined): SessionConnectionModel {
  const more = rows.length > first;
  const page = more ? rows.slice(0, first) : rows;
  const edges = page.map((node) => ({ cursor: sessionLists.encodeCursor(order, node), node }));
  return {
    edges,
    pageInfo: {
      hasNextPage: more,
      hasPreviousPage: Boolean(after),
      startCursor: edges[0]?.cursor ?? null,
      endCursor: edges[edges.length - 1]?.cursor ?? null,
    },
  };
}

/** Filters of Project.sessions: the caller's filters narrowed to this project. */
function projectFilters(input: SessionFiltersInput | null | undefined): SessionFilters {
  return normalizeFilters(input);
}

const iso = (d: Date) => d.toISOString();

function primeSessions(gql: GraphqlContext, rows: SessionRow[]): SessionRow[] {
  for (const r of rows) gql.loaders.session.prime({ projectId: r.projectId, sessionId: r.id }, r);
  return rows;
}

export const resolvers: Resolvers = {
  Query: {
    async projects(_p, _a, { ctx, loaders }) {
      const list = await projects.listProjects(ctx);
      for (const p of list) loaders.project.prime(p.id, p);
      return list;
    },
    async project(_p, { id }, { ctx, loaders }) {
      const p = await projects.getProject(ctx, id);
      loaders.project.prime(p.id, p);
      return p;
    },
    async session(_p, { id, projectId }, gql) {
      const row = projectId != null ? await access.requireOwnedSession(gql.ctx, projectId, id) : await sessionLists.findLatestSessionById(gql.ctx, id);
      primeSessions(gql, [row]);
      return row;
    },
    async sessions(_p, { filters, orderBy, limit }, gql) {
      const page = await sessionLists.findSessions(gql.ctx, filters, orderBy ?? 'CREATED_AT_DESC', limit ?? 20);
      return primeSessions(gql, page.rows);
    },
    async sessionsConnection(_p, { filters, orderBy, first, after }, gql) {
      const order = orderBy ?? 'CREATED_AT_DESC';
      const n = first ?? 20;
      const page = await sessionLists.findSessions(gql.ctx, filters, order, n + 1, after);
      return connection(primeSessions(gql, page.rows), order, n, after);
    },
    async searchSessions(_p, { query, filters, limit, offset }, gql, info) {
      // Matching fragments cost the engine one more query: only when the client asks for them.
      const matchingExchanges = selects(info, ['results', 'matchingExchanges']);
      const found = await searchSessions(gql.ctx.deps, gql.ctx.user.id, query, filters, limit ?? 10, offset ?? 0, { matchingExchanges });
      const rows = await gql.loaders.session.loadMany(found.results.map((h) => ({ projectId: h.projectId, sessionId: h.sessionId })));
      const results = [];
      for (let i = 0; i < found.results.length; i++) {
        const row = rows[i];
        if (row instanceof Error) throw row;
        if (row) results.push({ hit: found.results[i], row });
      }
      return { total: found.total, results };
    },
    stats(_p, _a, { ctx }) {
      return { totals: once(() => stats.userTotals(ctx)) };
    },
    analytics(_p, { timeRange }, { ctx }) {
      const range = stats.analyticsRange(timeRange);
      return { range, totals: once(() => stats.analyticsTotals(ctx, range)) };
    },
    async sessionFacets(_p, { projectId, limit }, { ctx }) {
      if (projectId != null) await access.requireOwnedProject(ctx, projectId);
      return stats.sessionFacets(ctx, projectId ?? null, limit ?? 50);
    },
    apiKeys(_p, _a, { ctx }) {
      return keys.listApiKeys(ctx);
    },
  },

  Mutation: {
    async createProject(_p, { input }, { ctx }) {
      return projects.createProject(ctx, { ...input });
    },
    async updateProject(_p, { id, input }, { ctx }) {
      return projects.updateProject(ctx, id, { ...input });
    },
    async deleteProject(_p, { id }, { ctx }) {
      const r = await projects.deleteProject(ctx, id);
      return { project: r.deletedProject, deletedAt: r.deletedAt };
    },
    async updateSession(_p, { projectId, id, input }, { ctx }) {
      return sessionChanges.patchSession(ctx, projectId, id, { ...input });
    },
    async deleteSession(_p, { projectId, id }, { ctx }) {
      await sessionChanges.deleteSession(ctx, projectId, id);
      return true;
    },
    createApiKey(_p, { name, expiresInDays }, { ctx }) {
      return keys.createApiKey(ctx, { name, expiresInDays });
    },
    revokeApiKey(_p, { id }, { ctx }) {
      return keys.revokeApiKey(ctx, id);
    },
  },

  Project: {
    sessions(p, { limit, orderBy, filters }, { loaders }) {
      return loaders.projectSessions(projectFilters(filters), orderBy ?? 'CREATED_AT_DESC', limit ?? 20).load(p.id);
    },
    async sessionsConnection(p, { first, after, orderBy, filters }, gql) {
      const order = orderBy ?? 'CREATED_AT_DESC';
      const n = first ?? 20;
      const f = projectFilters(filters);
      // The first page of many projects batches; later pages are one project's keyset query.
      const rows = after
        ? f.projectIds && !f.projectIds.includes(p.id)
          ? []
          : (await sessionLists.querySessions(gql.ctx, { ...f, projectIds: [p.id] }, order, n + 1, after)).rows
        : await gql.loaders.projectSessions(f, order, n + 1).load(p.id);
      return connection(rows, order, n, after);
    },
    stats(p) {
      return { projectId: p.id };
    },
  },

  ProjectStats: {
    async totalSessions(s, _a, { loaders }) {
      return (await loaders.projectTotals.load(s.projectId)).totalSessions;
    },
    async totalMarkdownSize(s, _a, { loaders }) {
      return (await loaders.projectTotals.load(s.projectId)).totalMarkdownSize;
    },
    async totalRawDataSize(s, _a, { loaders }) {
      return (await loaders.projectTotals.load(s.projectId)).totalRawDataSize;
    },
    uniqueLLMModels(s, _a, { loaders }) {
      return loaders.projectLabels('llmModel').load(s.projectId);
    },
    uniqueGitBranches(s, _a, { loaders }) {
      return loaders.projectLabels('gitBranch').load(s.projectId);
    },
    sessionsByDay(s, { days }, { loaders }) {
      return loaders.projectSessionsByDay(stats.checkDays(days ?? 30)).load(s.projectId);
    },
    topTags(s, { limit }, { loaders }) {
      return loaders.projectTopTags(limit ?? 10).load(s.projectId);
    },
  },

  Session: {
    markdownSize: (r) => Number(r.markdownSize),
    rawDataSize: (r) => Number(r.rawDataSize),
    sessionDataSize: (r) => Number(r.sessionDataSize ?? 0),
    createdAt: (r) => iso(r.createdAt),
    updatedAt: (r) => iso(r.updatedAt),
    startedAt: (r) => iso(r.startedAt),
    endedAt: (r) => iso(r.endedAt),
    metadata: (r) => sessions.metadataOf(r),
    redactions: (r) => redactionsOf(r.redactionsJson),
    async project(r, _a, { loaders }) {
      const p = await loaders.project.load(r.projectId);
      if (!p) throw projectNotFound(r.projectId);
      return p;
    },
    markdownContent(r, _a, { loaders }) {
      return loaders.markdown({ projectId: r.projectId, sessionId: r.id }, Number(r.markdownSize));
    },
    async exchanges(r, { offset, limit }, gql, info) {
      const args = { ...parseInput(ExchangeArgs, { offset: offset ?? 0, limit: limit ?? 20 }), content: selects(info, ['exchanges', 'markdown']) };
      // A page of markdown is bounded before anything is read (contract §16 content budget).
      if (args.content) gql.loaders.chargeContent(Math.min(Number(r.markdownSize), exchanges.PAGE_CONTENT_BYTES));
      // And a version not split into exchanges yet costs a scan of its markdown, bounded per operation.
      if (!exchanges.isIndexCached(r)) gql.loaders.chargeScan(Number(r.markdownSize));
      return exchanges.exchangePage(gql.ctx.deps.db.reads, r, args);
    },
  },

  SessionExchange: {
    markdown: (e) => e.markdown ?? '',
  },

  SessionMetadata: {
    clientName: (m) => m.clientName,
    clientVersion: (m) => m.clientVersion,
    agentName: (m) => m.agentName,
    deviceId: (m) => m.deviceId,
    gitBranches: (m) => m.gitBranches,
    llmModels: (m) => m.llmModels,
    tags: (m) => m.tags,
    machineName: (m) => extra(m, 'machineName'),
    title: (m) => extra(m, 'title'),
    summary: (m) => extra(m, 'summary'),
  },

  SearchResult: {
    id: (r) => r.row.id,
    sessionId: (r) => r.row.id,
    clientId: (r) => r.row.id,
    projectId: (r) => r.row.projectId,
    name: (r) => r.row.name,
    userTitle: (r) => r.row.userTitle,
    rank: (r) => r.hit.rank,
    snippet: (r) => r.hit.snippet,
    createdAt: (r) => iso(r.row.createdAt),
    updatedAt: (r) => iso(r.row.updatedAt),
    startedAt: (r) => iso(r.row.startedAt),
    endedAt: (r) => iso(r.row.endedAt),
    markdownSize: (r) => Number(r.row.markdownSize),
    markdownContent: (r, _a, { loaders }) =>
      loaders.markdown({ projectId: r.row.projectId, sessionId: r.row.id }, Number(r.row.markdownSize)),
    metadata: (r) => sessions.metadataOf(r.row),
    matchingExchanges: (r) => r.hit.matchingExchanges.map((m) => ({ ...m, start: m.start ?? null, exchange: m.exchange ?? null })),
    async project(r, _a, { loaders }) {
      const p = await loaders.project.load(r.row.projectId);
      if (!p) throw projectNotFound(r.row.projectId);
      return p;
    },
    async session(r, _a, { loaders }) {
      const row = await loaders.session.load({ projectId: r.row.projectId, sessionId: r.row.id });
      if (!row) throw sessionNotFound(r.row.id, r.row.projectId);
      return row;
    },
  },

  Stats: {
    totalSessions: async (s) => (await s.totals()).totalSessions,
    totalProjects: async (s) => (await s.totals()).totalProjects,
    sessionsThisWeek: async (s) => (await s.totals()).sessionsThisWeek,
    totalMarkdownSize: async (s) => (await s.totals()).totalMarkdownSize,
    topLLMModels: (_s, { limit }, { ctx }) => stats.topLLMModels(ctx, limit ?? 10),
  },

  Analytics: {
    totalSessions: async (a) => (await a.totals()).totalSessions,
    totalProjects: async (a) => (await a.totals()).totalProjects,
    sessionsByModel: (a, _args, { ctx }) => stats.analyticsByModel(ctx, a.range),
    sessionsByClient: (a, _args, { ctx }) => stats.analyticsByClient(ctx, a.range),
    activityByDay: (a, _args, { ctx }) => stats.analyticsByDay(ctx, a.range),
  },
};

function extra(m: sessions.SessionMetadata, key: string): string | null {
  const v = m[key];
  return typeof v === 'string' ? v : null;
}

export type { GraphqlContext };
