/**
 * The one mapping of a session row to the fields `Session` and `SearchResult` share (a search
 * result is the session row with its hit beside it: src/graphql/models.ts).
 */
import { projectNotFound } from '../../errors';
import type { SessionResolvers } from '../../generated/graphql';
import { metadataOf } from '../../services/sessions';
import { userModel } from './team';

const iso = (d: Date) => d.toISOString();

type Shared =
  | 'id'
  | 'projectId'
  | 'name'
  | 'userTitle'
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
  id: (r) => r.id,
  projectId: (r) => r.projectId,
  name: (r) => r.name,
  userTitle: (r) => r.userTitle,
  createdAt: (r) => iso(r.createdAt),
  updatedAt: (r) => iso(r.updatedAt),
  startedAt: (r) => iso(r.startedAt),
  endedAt: (r) => iso(r.endedAt),
  markdownSize: (r) => Number(r.markdownSize),
  markdownContent: (r, _a, { loaders }) => loaders.markdown({ projectId: r.projectId, sessionId: r.id }, Number(r.markdownSize)),
  metadata: (r) => metadataOf(r),
  uploadedBy: (r) => (r.uploadedBy ? userModel(r.uploadedBy, r.uploaderName) : null),
  async project(r, _a, { loaders }) {
    const p = await loaders.project.load(r.projectId);
    if (!p) throw projectNotFound(r.projectId);
    return p;
  },
} satisfies Required<Pick<SessionResolvers, Shared>>;
