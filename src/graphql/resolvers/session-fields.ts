/**
 * The fields `Session` and `SearchResult` share (a search result is the session row with its hit
 * beside it: src/graphql/models.ts): the session presenter's, as REST shows them, and the loads.
 */
import { projectNotFound } from '../../errors';
import type { SessionResolvers } from '../../generated/graphql';
import { sessionFields as present } from '../../services/presenters/session';
import { sessionTitle } from '../../services/sessions';
import { userModel } from './team';

type Shared =
  | 'id'
  | 'projectId'
  | 'name'
  | 'userTitle'
  | 'displayTitle'
  | 'createdAt'
  | 'updatedAt'
  | 'startedAt'
  | 'endedAt'
  | 'markdownSize'
  | 'markdownContent'
  | 'metadata'
  | 'project'
  | 'uploadedBy';

export const sessionFields = {
  id: present.id,
  projectId: present.projectId,
  name: present.name,
  userTitle: present.userTitle,
  /** GraphQL only: REST's session object keeps its exact shape (clients check it). */
  displayTitle: (r) => sessionTitle(r),
  createdAt: present.createdAt,
  updatedAt: present.updatedAt,
  startedAt: present.startedAt,
  endedAt: present.endedAt,
  markdownSize: present.markdownSize,
  markdownContent: (r, _a, { loaders }) => loaders.markdown({ projectId: r.projectId, sessionId: r.id }, r.markdownSize),
  metadata: present.metadata,
  uploadedBy: (r) => {
    const u = present.uploadedBy(r);
    return u && userModel(u.id, u.name);
  },
  async project(r, _a, { loaders }) {
    const p = await loaders.project.load(r.projectId);
    if (!p) throw projectNotFound(r.projectId);
    return p;
  },
} satisfies Required<Pick<SessionResolvers, Shared>>;
