import type { projectRoutes } from '../api/routes';
import * as projects from '../services/projects';
import { resumableParam, resumableProjects } from '../services/resume';
import { ok, type Door } from './context';
import { ctxOf } from '../http/request-context';
import type { Handlers } from '../api/route';
import { retentionPreview } from '../services/retention-sweep';

export function projectHandlers({ deps }: Door): Handlers<typeof projectRoutes> {
  return {
    listProjects: async (req) => {
      // ?resumable=true (the upload CLI's resume): projects with resumable sessions, their summaries inline.
      if (resumableParam(req.query.resumable)) return ok(await resumableProjects(ctxOf(req, deps)));
      const list = await projects.listProjects(ctxOf(req, deps));
      return ok({ projects: list, total: list.length });
    },
    createProject: async (req) => ok({ project: await projects.createProject(ctxOf(req, deps), req.body) }),
    getProject: async (req) => ok({ project: await projects.getProject(ctxOf(req, deps), req.params.projectId) }),
    // The project's fields directly in `data`, as both SDKs read them.
    updateProject: async (req) => ok(await projects.updateProject(ctxOf(req, deps), req.params.projectId, req.body)),
    deleteProject: async (req) => ok(await projects.deleteProject(ctxOf(req, deps), req.params.projectId)),
    retentionPreview: async (req) => ok(await retentionPreview(ctxOf(req, deps), req.params.projectId)),
    moveProject: async (req) => ok({ project: await projects.moveProject(ctxOf(req, deps), req.params.projectId, req.body) }),
  };
}
