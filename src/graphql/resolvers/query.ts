/** Query: map the arguments, call one service function, prime the loaders with what it read. */
import { PAGES } from '../../domain/pages';
import * as keys from '../../services/keys';
import { exchangeSnippets, searchSessions } from '../../services/search';
import * as projects from '../../services/projects';
import * as sessionLists from '../../services/session-lists';
import * as shares from '../../services/shares';
import * as stats from '../../services/stats';
import * as teams from '../../services/teams';
import * as usage from '../../services/usage';
import type { SearchResultModel } from '../models';
import { selects } from '../selection';
import type { ResolversOf } from './complete';
import { connection, once, primeSessions } from './shared';

export const Query: ResolversOf<'Query'> = {
  teams(_p, _a, { ctx }) {
    return teams.listTeams(ctx);
  },
  team(_p, { id }, { ctx }) {
    return teams.getTeamSummary(ctx, id);
  },
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
    const row = await sessionLists.findSession(gql.ctx, id, projectId);
    primeSessions(gql, [row]);
    return row;
  },
  async sessions(_p, { filters, orderBy, limit }, gql) {
    const page = await sessionLists.findSessions(gql.ctx, filters, orderBy ?? 'CREATED_AT_DESC', limit ?? PAGES.sessions.def);
    return primeSessions(gql, page.rows);
  },
  async sessionsConnection(_p, { filters, orderBy, first, after }, gql) {
    const order = orderBy ?? 'CREATED_AT_DESC';
    const n = first ?? PAGES.sessions.def;
    // One keyset page: the service reads n + 1 rows and says whether there is more.
    const page = await sessionLists.findSessions(gql.ctx, filters, order, n, after);
    primeSessions(gql, page.rows);
    return connection(page.rows, page.nextCursor !== null, order, after);
  },
  async searchSessions(_p, { query, filters, limit, offset }, gql, info) {
    // Matching fragments cost the engine one more query: only when the client asks for them.
    const matchingExchanges = selects(info, ['results', 'matchingExchanges']);
    // So does the exact total (a count over every matching document): only when `total` is asked.
    const countTotal = selects(info, ['total']);
    const found = await searchSessions(gql.ctx, { query, filters, limit: limit ?? undefined, offset: offset ?? undefined, matchingExchanges, countTotal });
    // The re-check read the rows: they answer the results' fields and later `session` lookups.
    const snippetOf = exchangeSnippets(query);
    const results: SearchResultModel[] = found.results.map(({ session, ...hit }) => ({ ...session, hit, snippetOf }));
    primeSessions(
      gql,
      found.results.map((r) => r.session),
    );
    return { total: found.total, results };
  },
  stats(_p, _a, { ctx }) {
    return { totals: once(() => stats.userTotals(ctx)) };
  },
  analytics(_p, { timeRange }, { ctx }) {
    const range = stats.analyticsRange(timeRange);
    return { range, totals: once(() => stats.analyticsTotals(ctx, range)) };
  },
  async usage(_p, { projectIds, teamId, from, to, groupBy, instance }, { ctx }) {
    const report = await usage.usageReport(ctx, { projectIds, teamId, from, to, groupBy: groupBy ?? 'DAY' }, { instance: instance ?? false });
    return { groupBy: groupBy ?? 'DAY', ...report };
  },
  sessionFacets(_p, { projectId, limit }, { ctx }) {
    return stats.sessionFacets(ctx, projectId ?? null, limit ?? PAGES.facets.def);
  },
  apiKeys(_p, _a, { ctx }) {
    return keys.listApiKeys(ctx);
  },
  shares(_p, _a, { ctx, origin }) {
    return shares.listShares(ctx, origin);
  },
};
