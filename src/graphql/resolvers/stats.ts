/** Stats: the totals come from one aggregate statement, run once when first asked for. */
import { PAGES } from '../../domain/pages';
import * as stats from '../../services/stats';
import type { ResolversOf } from './complete';

export const Stats: ResolversOf<'Stats'> = {
  totalSessions: async (s) => (await s.totals()).totalSessions,
  totalProjects: async (s) => (await s.totals()).totalProjects,
  sessionsThisWeek: async (s) => (await s.totals()).sessionsThisWeek,
  totalMarkdownSize: async (s) => (await s.totals()).totalMarkdownSize,
  topLLMModels: (_s, { limit }, { ctx }) => stats.topLLMModels(ctx, limit ?? PAGES.topValues.def),
};
