/** Teams: Team, TeamMember, TeamInvitation, User and the Owner union (roles are lower-case in services, enum values here). */
import type { TeamRole as ServiceRole } from '../../domain/teams';
import type { ProjectDto } from '../../services/presenters/project';
import type { TeamDto } from '../../services/presenters/team';
import * as teams from '../../services/teams';
import type { GraphqlContext } from '../context';
import type { OwnerModel, UserModel } from '../models';
import type { ResolversOf } from './complete';

const gqlRole = (r: ServiceRole) => r.toUpperCase() as 'ADMIN' | 'MEMBER' | 'VIEWER';
export const serviceRole = (r: string) => r.toLowerCase();

// The caller's teams, read once per operation (Project.owner of many projects needs them).
const perOperation = new WeakMap<GraphqlContext, Promise<TeamDto[]>>();
function myTeams(gql: GraphqlContext): Promise<TeamDto[]> {
  let p = perOperation.get(gql);
  if (!p) {
    p = teams.listTeams(gql.ctx);
    perOperation.set(gql, p);
  }
  return p;
}

export const userModel = (id: string, name: string | null | undefined): UserModel => ({ __typename: 'User', id, name: name ?? '' });

/** Project.owner: the owning user, or the owning team as the caller sees it. */
export async function ownerOfProject(p: ProjectDto, gql: GraphqlContext): Promise<OwnerModel> {
  if (p.owner.type === 'user') return userModel(p.owner.id, p.owner.name);
  const team = (await myTeams(gql)).find((t) => t.id === p.owner.id);
  // A project is only ever read by a member of its team; the fallback is the project's own view.
  return {
    __typename: 'Team',
    ...(team ?? {
      id: p.owner.id,
      name: p.owner.name,
      role: 'viewer',
      memberCount: 0,
      projectCount: 0,
      createdAt: p.createdAt,
      retentionDays: null,
      legalHold: false,
    }),
  };
}

export const Team: ResolversOf<'Team'> = {
  role: (t) => gqlRole(t.role),
  async members(t, _a, { ctx }) {
    return (await teams.getTeam(ctx, t.id)).members;
  },
  invitations(t, _a, { ctx }) {
    return teams.invitationsSeenBy(ctx, t.id);
  },
};

export const TeamMember: ResolversOf<'TeamMember'> = {
  user: (m) => userModel(m.user.id, m.user.name ?? m.user.email),
  email: (m) => m.user.email,
  role: (m) => gqlRole(m.role),
};

export const TeamInvitation: ResolversOf<'TeamInvitation'> = {
  role: (i) => gqlRole(i.role),
};

export const Owner = {
  __resolveType: (o: OwnerModel) => o.__typename,
};
