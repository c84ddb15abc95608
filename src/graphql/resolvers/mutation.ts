/** Mutation: one service call each; the services validate (src/services/inputs.ts) and check ownership (access.ts). */
import * as keys from '../../services/keys';
import * as projects from '../../services/projects';
import * as sessionChanges from '../../services/session-changes';
import * as shares from '../../services/shares';
import * as teams from '../../services/teams';
import { serviceAudience } from './share';
import { serviceRole } from './team';
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
  createApiKey(_p, { name, expiresInDays, scopes, teamId }, { ctx }) {
    return keys.createApiKey(ctx, { name, expiresInDays, scopes, teamId });
  },
  createTeam(_p, { name }, { ctx }) {
    return teams.createTeam(ctx, { name });
  },
  renameTeam(_p, { id, name }, { ctx }) {
    return teams.renameTeam(ctx, id, { name });
  },
  updateTeam(_p, { id, input }, { ctx }) {
    return teams.renameTeam(ctx, id, { ...input });
  },
  async deleteTeam(_p, { id }, { ctx }) {
    await teams.deleteTeam(ctx, id);
    return true;
  },
  addTeamMember(_p, { teamId, email, role }, { ctx }) {
    return teams.addMember(ctx, teamId, { email, role: serviceRole(role) });
  },
  setTeamMemberRole(_p, { teamId, userId, role }, { ctx }) {
    return teams.setMemberRole(ctx, teamId, userId, { role: serviceRole(role) });
  },
  async removeTeamMember(_p, { teamId, userId }, { ctx }) {
    await teams.removeMember(ctx, teamId, userId);
    return true;
  },
  createTeamInvitation(_p, { teamId, role, email }, { ctx, origin }) {
    // The same link as REST's: PUBLIC_URL, else the origin the request came to (not the listen address).
    return teams.createInvitation(ctx, teamId, { role: serviceRole(role), email }, origin);
  },
  async revokeTeamInvitation(_p, { teamId, id }, { ctx }) {
    await teams.revokeInvitation(ctx, teamId, id);
    return true;
  },
  joinTeam(_p, { token }, { ctx }) {
    return teams.acceptInvitation(ctx, { token });
  },
  moveProject(_p, { id, teamId }, { ctx }) {
    return projects.moveProject(ctx, id, { teamId: teamId ?? null });
  },
  revokeApiKey(_p, { id }, { ctx }) {
    return keys.revokeApiKey(ctx, id);
  },
  // The share service validates (expiry values, hidden numbers, audience under SHARES) and checks
  // who may share; an absent field stays absent, `expiresInDays: null` means never.
  createShare(_p, { projectId, sessionId, input }, { ctx, origin }) {
    const { audience, hiddenExchanges, ...rest } = input ?? {};
    return shares.createShare(ctx, origin, projectId, sessionId, {
      ...rest,
      ...(hiddenExchanges != null && { hiddenExchanges }),
      ...(audience != null && { audience: serviceAudience(audience) }),
    });
  },
  updateShare(_p, { id, input }, { ctx, origin }) {
    const { hiddenExchanges, refresh, ...rest } = input;
    return shares.updateShare(ctx, origin, id, { ...rest, ...(hiddenExchanges != null && { hiddenExchanges }), ...(refresh != null && { refresh }) });
  },
  async deleteShare(_p, { id }, { ctx }) {
    await shares.deleteShare(ctx, id);
    return true;
  },
};
