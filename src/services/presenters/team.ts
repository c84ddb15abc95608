/**
 * How teams, their members and their invitations are shown to clients: REST's objects and
 * GraphQL's `Team`, `TeamMember` and `TeamInvitation` (whose resolvers read these objects).
 */
import type { InvitationRow, MemberRow, TeamCounts, TeamListRow, TeamRow } from '../../data/teams';
import type { TeamRole } from '../../domain/teams';

export interface TeamDto {
  id: string;
  name: string;
  /** The caller's role. */
  role: TeamRole;
  memberCount: number;
  projectCount: number;
  createdAt: string;
}

export interface MemberDto {
  user: { id: string; email: string; name: string | null };
  role: TeamRole;
  joinedAt: string;
}

export interface InvitationDto {
  id: string;
  role: TeamRole;
  email: string | null;
  createdAt: string;
  expiresAt: string;
}

/** A team as one of its members sees it. */
export const presentTeam = (t: TeamListRow): TeamDto => ({
  id: t.id,
  name: t.name,
  role: t.role as TeamRole,
  memberCount: t.memberCount,
  projectCount: t.projectCount,
  createdAt: t.createdAt.toISOString(),
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
