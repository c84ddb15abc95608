import type { Request } from 'express';
import type { teamRoutes } from '../api/routes';
import { ownOrigin } from '../http/auth';
import { publicCtx } from '../services/context';
import * as teams from '../services/teams';
import { ok, readBody, type Door } from './context';
import { ctxOf } from '../http/request-context';
import type { Handlers } from '../api/route';

/**
 * Teams, their members and invitations; and `POST /invitations/lookup {token}` (no
 * authentication: the /join page before anyone signs in): the team, role and email of an open
 * invitation, limited per address like every public door, an unknown token counted as a failed
 * authentication.
 */
export function teamHandlers({ deps, hooks, publicBody }: Door): Handlers<typeof teamRoutes> {
  const base = (req: Request) => deps.config.publicUrl ?? ownOrigin(req, deps.config);

  return {
    listTeams: async (req) => ok({ teams: await teams.listTeams(ctxOf(req, deps)) }),
    createTeam: async (req, res) => {
      res.status(201);
      return ok({ team: await teams.createTeam(ctxOf(req, deps), req.body) });
    },
    joinTeam: async (req) => ok({ team: await teams.acceptInvitation(ctxOf(req, deps), req.body) }),
    getTeam: async (req) => ok(await teams.getTeam(ctxOf(req, deps), req.params.teamId)),
    renameTeam: async (req) => ok({ team: await teams.updateTeam(ctxOf(req, deps), req.params.teamId, req.body) }),
    deleteTeam: async (req) => {
      await teams.deleteTeam(ctxOf(req, deps), req.params.teamId);
      return ok({});
    },
    addMember: async (req, res) => {
      res.status(201);
      return ok({ member: await teams.addMember(ctxOf(req, deps), req.params.teamId, req.body) });
    },
    setMemberRole: async (req) => ok({ member: await teams.setMemberRole(ctxOf(req, deps), req.params.teamId, req.params.userId, req.body) }),
    removeMember: async (req) => {
      await teams.removeMember(ctxOf(req, deps), req.params.teamId, req.params.userId);
      return ok({});
    },
    createInvitation: async (req, res) => {
      res.setHeader('Cache-Control', 'no-store');
      res.status(201);
      return ok(await teams.createInvitation(ctxOf(req, deps), req.params.teamId, req.body, base(req)));
    },
    listInvitations: async (req) => ok({ invitations: await teams.listInvitations(ctxOf(req, deps), req.params.teamId) }),
    revokeInvitation: async (req) => {
      await teams.revokeInvitation(ctxOf(req, deps), req.params.teamId, req.params.invitationId);
      return ok({});
    },

    lookupInvitation: async (req, res) => {
      await hooks.beforeAuth?.(req);
      await readBody(publicBody, req, res);
      try {
        res.setHeader('Cache-Control', 'no-store');
        return ok(await teams.describeInvitation(publicCtx(deps), req.body));
      } catch (err) {
        await hooks.onAuthFailure?.(req);
        throw err;
      }
    },
  };
}
