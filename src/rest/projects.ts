import { Router } from 'express';
import type { Deps } from '../services/context';
import * as projects from '../services/projects';
import { resumableParam, resumableProjects } from '../services/resume';
import { ctxOf, ok } from './context';

export function projectsRouter(deps: Deps): Router {
  const r = Router();
  r.get('/projects', async (req, res) => {
    // ?resumable=true (the upload CLI's resume): projects with resumable sessions, their summaries inline.
    if (resumableParam(req.query.resumable)) {
      res.json(ok(await resumableProjects(ctxOf(req, deps))));
      return;
    }
    const list = await projects.listProjects(ctxOf(req, deps));
    res.json(ok({ projects: list, total: list.length }));
  });
  r.post('/projects', async (req, res) => {
    const project = await projects.createProject(ctxOf(req, deps), req.body);
    res.status(201).json(ok({ project }));
  });
  r.get('/projects/:projectId', async (req, res) => {
    res.json(ok({ project: await projects.getProject(ctxOf(req, deps), req.params.projectId) }));
  });
  r.patch('/projects/:projectId', async (req, res) => {
    // The project's fields directly in `data`, as both SDKs read them.
    res.json(ok(await projects.updateProject(ctxOf(req, deps), req.params.projectId, req.body)));
  });
  r.delete('/projects/:projectId', async (req, res) => {
    res.json(ok(await projects.deleteProject(ctxOf(req, deps), req.params.projectId)));
  });
  return r;
}
