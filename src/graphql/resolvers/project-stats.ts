/** ProjectStats: every field through a per-request loader keyed by project id (one statement for all projects asked). */
import { PAGES } from '../../domain/pages';
import * as stats from '../../services/stats';
import type { ResolversOf } from './complete';

export const ProjectStats: ResolversOf<'ProjectStats'> = {
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
    return loaders.projectSessionsByDay(stats.checkDays(days ?? PAGES.days.def)).load(s.projectId);
  },
  topTags(s, { limit }, { loaders }) {
    return loaders.projectTopTags(limit ?? PAGES.topValues.def).load(s.projectId);
  },
};
