/** Analytics: aggregates over a range of `createdAt`; the totals are one statement, run once when asked for. */
import * as stats from '../../services/stats';
import type { ResolversOf } from './complete';

export const Analytics: ResolversOf<'Analytics'> = {
  totalSessions: async (a) => (await a.totals()).totalSessions,
  totalProjects: async (a) => (await a.totals()).totalProjects,
  sessionsByModel: (a, _args, { ctx }) => stats.analyticsByModel(ctx, a.range),
  sessionsByClient: (a, _args, { ctx }) => stats.analyticsByClient(ctx, a.range),
  activityByDay: (a, _args, { ctx }) => stats.analyticsByDay(ctx, a.range),
};
