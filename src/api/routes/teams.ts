/** Teams, their members and invitations. */
import { defineRoute } from '../route';
import { envelope, Timestamp, z } from '../schemas/common';
import { Role, Team, TeamInvitation, TeamMember, UpdatedTeam } from '../schemas/teams';
import * as T from '../../services/teams';

const teamParam = z.object({ teamId: z.string().meta({ description: 'A team you are a member of; any other → 404 `Team not found`.' }) });
const memberParams = teamParam.extend({ userId: z.string() });
const Empty = envelope(z.strictObject({}));

export const teamRoutes = {
  listTeams: defineRoute({
    method: 'get',
    path: '/teams',
    tag: 'Teams',
    auth: 'key',
    summary: 'List your teams',
    responses: { 200: { description: 'Your teams, by name.', schema: envelope(z.strictObject({ teams: z.array(Team) })) } },
  }),
  createTeam: defineRoute({
    method: 'post',
    path: '/teams',
    tag: 'Teams',
    auth: 'key',
    summary: 'Create a team (you are its first admin)',
    body: T.TeamNameInput,
    idempotent: true,
    description: 'With `TEAMS=admins` only instance administrators may (else 403).',
    responses: { 201: { description: 'Created.', schema: envelope(z.strictObject({ team: Team })) } },
    errors: [403],
  }),
  joinTeam: defineRoute({
    method: 'post',
    path: '/teams/join',
    tag: 'Teams',
    auth: 'key',
    summary: 'Accept an invitation',
    body: T.InvitationTokenInput,
    idempotent: true,
    description:
      '404 `Invalid or expired invitation` (unknown, used, revoked or expired), or `This invitation was withdrawn: …` when its creator is no longer an admin of the team (removed or demoted); 403 when it names another email; 409 when you are a member already. Of concurrent joins with one link, one wins.',
    responses: { 200: { description: 'The team you joined.', schema: envelope(z.strictObject({ team: Team })) } },
    errors: [403, 404, 409],
  }),
  getTeam: defineRoute({
    method: 'get',
    path: '/teams/{teamId}',
    tag: 'Teams',
    auth: 'key',
    summary: 'A team with its members',
    params: teamParam,
    responses: { 200: { description: 'The team.', schema: envelope(z.strictObject({ team: Team, members: z.array(TeamMember) })) } },
    errors: [404],
  }),
  renameTeam: defineRoute({
    method: 'patch',
    path: '/teams/{teamId}',
    tag: 'Teams',
    auth: 'key',
    summary: 'Rename a team, set its retention (admins) or its legal hold (instance administrators)',
    description:
      'An instance administrator may set or lift the legal hold of any team, a member of it or not; anyone else → 403. A name or retention needs an admin of the team (not a member → 404).',
    params: z.object({ teamId: z.string() }),
    body: T.UpdateTeamInput,
    responses: { 200: { description: 'The team as it is now.', schema: envelope(z.strictObject({ team: UpdatedTeam })) } },
    errors: [403, 404],
  }),
  deleteTeam: defineRoute({
    method: 'delete',
    path: '/teams/{teamId}',
    tag: 'Teams',
    auth: 'key',
    summary: 'Delete a team (admins)',
    params: teamParam,
    description:
      "409 `Move or delete the team's N projects first` while it owns projects, 409 `Project is on legal hold` while it is on legal hold. Keys and device tokens bound to it create personal projects afterwards.",
    responses: { 200: { description: 'Deleted.', schema: Empty } },
    errors: [403, 404, 409],
  }),
  addMember: defineRoute({
    method: 'post',
    path: '/teams/{teamId}/members',
    tag: 'Teams',
    auth: 'key',
    summary: 'Add an existing user (admins)',
    params: teamParam,
    body: T.AddMemberInput,
    idempotent: true,
    description: 'Unknown email → 404 `No user with that email`; a bad role → 400 listing `admin, member, viewer`; already a member → 409.',
    responses: { 201: { description: 'Added.', schema: envelope(z.strictObject({ member: TeamMember })) } },
    errors: [403, 404, 409],
  }),
  setMemberRole: defineRoute({
    method: 'patch',
    path: '/teams/{teamId}/members/{userId}',
    tag: 'Teams',
    auth: 'key',
    summary: "Change a member's role (admins)",
    params: memberParams,
    body: T.MemberRoleInput,
    description: 'Demoting the last admin → 409 `A team needs at least one admin`. Takes effect from the next request.',
    responses: { 200: { description: 'Changed.', schema: envelope(z.strictObject({ member: TeamMember })) } },
    errors: [403, 404, 409],
  }),
  removeMember: defineRoute({
    method: 'delete',
    path: '/teams/{teamId}/members/{userId}',
    tag: 'Teams',
    auth: 'key',
    summary: 'Remove a member (admins), or leave',
    params: memberParams,
    description:
      'Removing the last admin → 409 `A team needs at least one admin`. From the next request the user reads, searches and counts none of the team\u2019s sessions.',
    responses: { 200: { description: 'Removed.', schema: Empty } },
    errors: [403, 404, 409],
  }),
  createInvitation: defineRoute({
    method: 'post',
    path: '/teams/{teamId}/invitations',
    tag: 'Teams',
    auth: 'key',
    summary: 'Invite someone (admins)',
    params: teamParam,
    body: T.InvitationInput,
    description:
      'A one-time link `<base>/join?token=…`, valid 7 days, shown once. Whoever holds it signs in (or creates an account, even with sign-up off: for the invitation\u2019s email when it names one) and joins with the role. `Idempotency-Key` is not honoured here.',
    responses: { 201: { description: 'The invitation and its link.', schema: envelope(z.strictObject({ invitation: TeamInvitation, url: z.string() })) } },
    errors: [403, 404],
  }),
  listInvitations: defineRoute({
    method: 'get',
    path: '/teams/{teamId}/invitations',
    tag: 'Teams',
    auth: 'key',
    summary: 'Open invitations (admins)',
    params: teamParam,
    responses: { 200: { description: 'Unused and unexpired, newest first.', schema: envelope(z.strictObject({ invitations: z.array(TeamInvitation) })) } },
    errors: [403, 404],
  }),
  revokeInvitation: defineRoute({
    method: 'delete',
    path: '/teams/{teamId}/invitations/{invitationId}',
    tag: 'Teams',
    auth: 'key',
    summary: 'Revoke an invitation (admins)',
    params: teamParam.extend({ invitationId: z.string() }),
    responses: { 200: { description: 'Revoked.', schema: Empty } },
    errors: [403, 404],
  }),
  lookupInvitation: defineRoute({
    method: 'post',
    path: '/invitations/lookup',
    tag: 'Teams',
    auth: 'none',
    summary: 'What an invitation is for (the /join page)',
    body: T.InvitationTokenInput,
    description:
      'No authentication; limited per address, an unknown token counts as a failed authentication. 404 `Invalid or expired invitation`, or `This invitation was withdrawn: …` when its creator is no longer an admin of the team.',
    responses: {
      200: {
        description: 'The team, role and email of an open invitation.',
        schema: envelope(
          z.strictObject({ team: z.strictObject({ id: z.string(), name: z.string() }), role: Role, email: z.string().nullable(), expiresAt: Timestamp }),
        ),
      },
    },
    errors: [404, 429],
  }),
};
