/** Query: map the arguments, call one service function, prime the loaders with what it read. */
import { searchSessions } from '../../search/search-service';
import * as access from '../../services/access';
import * as keys from '../../services/keys';
import * as projects from '../../services/projects';
import * as sessionLists from '../../services/session-lists';
import * as stats from '../../services/stats';
import type { SearchResultModel } from '../models';
import { selects } from '../selection';
import type { ResolversOf } from './complete';
import { connection, once, primeSessions } from './shared';

export const Query: ResolversOf<'Query'> = {
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
    const results: SearchResultModel[] = [];
    for (let i = 0; i < found.results.length; i++) {
      const row = rows[i];
      if (row instanceof Error) throw row;
      if (row) results.push({ ...row, hit: found.results[i] });
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
};
