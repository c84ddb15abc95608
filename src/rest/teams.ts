import { Router, type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { ownOrigin } from '../http/auth';
import type { RateLimitHooks } from '../http/rate-limit';
import { publicCtx, type Deps } from '../services/context';
import { moveProject } from '../services/projects';
import * as teams from '../services/teams';
import { ctxOf, ok } from './context';

/** Teams, their members and invitations, and moving a project between owners. */
export function teamsRouter(deps: Deps): Router {
  const r = Router();
  const base = (req: Request) => deps.config.publicUrl ?? ownOrigin(req, deps.config);

  r.get('/teams', async (req, res) => {
    res.json(ok({ teams: await teams.listTeams(ctxOf(req, deps)) }));
  });
  r.post('/teams', async (req, res) => {
    res.status(201).json(ok({ team: await teams.createTeam(ctxOf(req, deps), req.body) }));
  });
  r.post('/teams/join', async (req, res) => {
    res.json(ok({ team: await teams.acceptInvitation(ctxOf(req, deps), req.body) }));
  });
  r.get('/teams/:teamId', async (req, res) => {
    res.json(ok(await teams.getTeam(ctxOf(req, deps), req.params.teamId)));
  });
  r.patch('/teams/:teamId', async (req, res) => {
    res.json(ok({ team: await teams.renameTeam(ctxOf(req, deps), req.params.teamId, req.body) }));
  });
  r.delete('/teams/:teamId', async (req, res) => {
    await teams.deleteTeam(ctxOf(req, deps), req.params.teamId);
    res.json(ok({}));
  });
  r.post('/teams/:teamId/members', async (req, res) => {
    res.status(201).json(ok({ member: await teams.addMember(ctxOf(req, deps), req.params.teamId, req.body) }));
  });
  r.patch('/teams/:teamId/members/:userId', async (req, res) => {
    res.json(ok({ member: await teams.setMemberRole(ctxOf(req, deps), req.params.teamId, req.params.userId, req.body) }));
  });
  r.delete('/teams/:teamId/members/:userId', async (req, res) => {
    await teams.removeMember(ctxOf(req, deps), req.params.teamId, req.params.userId);
    res.json(ok({}));
  });
  r.post('/teams/:teamId/invitations', async (req, res) => {
    res.setHeader('Cache-Control', 'no-store');
    res.status(201).json(ok(await teams.createInvitation(ctxOf(req, deps), req.params.teamId, req.body, base(req))));
  });
  r.get('/teams/:teamId/invitations', async (req, res) => {
    res.json(ok({ invitations: await teams.listInvitations(ctxOf(req, deps), req.params.teamId) }));
  });
  r.delete('/teams/:teamId/invitations/:invitationId', async (req, res) => {
    await teams.revokeInvitation(ctxOf(req, deps), req.params.teamId, req.params.invitationId);
    res.json(ok({}));
  });
  r.post('/projects/:projectId/move', async (req, res) => {
    res.json(ok({ project: await moveProject(ctxOf(req, deps), req.params.projectId, req.body) }));
  });
  return r;
}

type Handler = (req: Request, res: Response) => Promise<void>;
const wrap = (h: Handler) => (req: Request, res: Response, next: NextFunction) => h(req, res).catch(next);

/**
 * `POST /invitations/lookup {token}` (no authentication: the /join page before anyone signs in):
 * the team, role and email of an open invitation. Limited per address like every public door;
 * an unknown token counts as a failed authentication.
 */
export function invitationLookupRouter(deps: Deps, hooks: RateLimitHooks, body: RequestHandler): Router {
  const r = Router();
  r.post(
    '/invitations/lookup',
    wrap(async (req, res) => {
      await hooks.beforeAuth?.(req);
      await new Promise<void>((resolve, reject) =>
        body(req, res, (err?: unknown) => (err ? reject(err instanceof Error ? err : new Error('request body could not be read')) : resolve())),
      );
      try {
        res.setHeader('Cache-Control', 'no-store');
        res.json(ok(await teams.describeInvitation(publicCtx(deps), req.body)));
      } catch (err) {
        await hooks.onAuthFailure?.(req);
        throw err;
      }
    }),
  );
  return r;
}
