/** Mutation: one service call each; the services validate (src/services/inputs.ts) and check ownership (access.ts). */
import * as keys from '../../services/keys';
import * as projects from '../../services/projects';
import * as sessionChanges from '../../services/session-changes';
import type { ResolversOf } from './complete';

export const Mutation: ResolversOf<'Mutation'> = {
  createProject(_p, { input }, { ctx }) {
    return projects.createProject(ctx, { ...input });
  },
  updateProject(_p, { id, input }, { ctx }) {
    return projects.updateProject(ctx, id, { ...input });
  },
  async deleteProject(_p, { id }, { ctx }) {
    const r = await projects.deleteProject(ctx, id);
    return { project: r.deletedProject, deletedAt: r.deletedAt };
  },
  updateSession(_p, { projectId, id, input }, { ctx }) {
    return sessionChanges.patchSession(ctx, projectId, id, { ...input });
  },
  async deleteSession(_p, { projectId, id }, { ctx }) {
    await sessionChanges.deleteSession(ctx, projectId, id);
    return true;
  },
  createApiKey(_p, { name, expiresInDays, scopes }, { ctx }) {
    return keys.createApiKey(ctx, { name, expiresInDays, scopes });
  },
  revokeApiKey(_p, { id }, { ctx }) {
    return keys.revokeApiKey(ctx, id);
  },
};
