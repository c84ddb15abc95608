/** Project: its sessions (the first page of many projects in one statement, through the loaders) and its stats. */
import { PAGES } from '../../domain/pages';
import { projectPermissions } from '../../services/access';
import { filtersOf } from '../../services/inputs';
import * as sessionLists from '../../services/session-lists';
import type { ResolversOf } from './complete';
import { connection } from './shared';
import { ownerOfProject } from './team';

export const Project: ResolversOf<'Project'> = {
  owner: (p, _a, gql) => ownerOfProject(p, gql),
  viewerCan: (p, _a, { ctx }) => projectPermissions(ctx, p.ownerId),
  sessions(p, { limit, orderBy, filters }, { loaders }) {
    return loaders.projectSessions(filtersOf(filters), orderBy ?? 'CREATED_AT_DESC', limit ?? PAGES.sessions.def).load(p.id);
  },
  async sessionsConnection(p, { first, after, orderBy, filters }, gql) {
    const order = orderBy ?? 'CREATED_AT_DESC';
    const n = first ?? PAGES.sessions.def;
    const f = filtersOf(filters);
    // Later pages are one project's keyset page (the service reads n + 1 rows and says whether there is more).
    if (after) {
      const page = await sessionLists.projectSessionsPage(gql.ctx, p.id, { filters: f, order, limit: n, after });
      return connection(page.rows, page.nextCursor !== null, order, after);
    }
    // The first page of many projects batches: n + 1 rows of each project in one statement.
    const rows = await gql.loaders.projectSessions(f, order, n + 1).load(p.id);
    return connection(rows.slice(0, n), rows.length > n, order, after);
  },
  stats(p) {
    return { projectId: p.id };
  },
};
