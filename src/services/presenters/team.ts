/**
 * How teams, their members and their invitations are shown to clients: REST's objects and
 * GraphQL's `Team`, `TeamMember` and `TeamInvitation` (whose resolvers read these objects).
 */
import type { z } from 'zod';
import type { Team, TeamInvitation, TeamMember, UpdatedTeam } from '../../api/schemas/teams';
import type { InvitationRow, MemberRow, TeamCounts, TeamListRow, TeamRow } from '../../data/teams';
import type { TeamRole } from '../../domain/teams';

/** REST's `Team`, `TeamMember` and `TeamInvitation` schemas are the types. */
export type TeamDto = z.input<typeof Team>;
export type MemberDto = z.input<typeof TeamMember>;
export type InvitationDto = z.input<typeof TeamInvitation>;
export type UpdatedTeamDto = z.input<typeof UpdatedTeam>;

/** A team as one of its members sees it. */
export const presentTeam = (t: TeamListRow): TeamDto => presentTeamSeenBy(t) as TeamDto;

/** A team as a member or an instance administrator sees it (`role` null: not a member). */
export const presentTeamSeenBy = (t: Omit<TeamListRow, 'role'> & { role: string | null }): UpdatedTeamDto => ({
  id: t.id,
  name: t.name,
  role: t.role as TeamRole | null,
  memberCount: t.memberCount,
  projectCount: t.projectCount,
  createdAt: t.createdAt.toISOString(),
  retentionDays: t.retentionDays,
  legalHold: t.legalHold === 1,
});

/** A team as the operator sees it (the admin CLI: no role of their own). */
export const presentTeamOverview = (t: TeamRow & TeamCounts) => ({
  id: t.id,
  name: t.name,
  memberCount: t.memberCount,
  projectCount: t.projectCount,
  createdAt: t.createdAt.toISOString(),
});

export const presentMember = (m: MemberRow): MemberDto => ({
  user: { id: m.userId, email: m.email, name: m.name },
  role: m.role as TeamRole,
  joinedAt: m.joinedAt.toISOString(),
});

export const presentInvitation = (i: InvitationRow): InvitationDto => ({
  id: i.id,
  role: i.role as TeamRole,
  email: i.email,
  createdAt: i.createdAt.toISOString(),
  expiresAt: i.expiresAt.toISOString(),
});
