import type { TeamRole } from '../gql/graphql';

/** Team roles as the console names them (the API's words: admin, member, viewer). */
export const ROLES: readonly TeamRole[] = ['ADMIN', 'MEMBER', 'VIEWER'];

export const roleName = (r: TeamRole): string => r.toLowerCase();

/** Admins and members may upload into a team's projects, bind credentials to it and move projects into it. */
export const canUploadTo = (r: TeamRole): boolean => r === 'ADMIN' || r === 'MEMBER';
