/** Teams: roles and their names. Pure. */

/** A member's role: admin (everything of the team), member (reads, uploads, their own sessions), viewer (reads only). */
export const TEAM_ROLES = ['admin', 'member', 'viewer'] as const;
export type TeamRole = (typeof TEAM_ROLES)[number];

export const isTeamRole = (v: unknown): v is TeamRole => typeof v === 'string' && (TEAM_ROLES as readonly string[]).includes(v);

/** How long an invitation link can be used. */
export const INVITATION_TTL_MS = 7 * 24 * 60 * 60 * 1000;

/** A project's owner as clients see it. */
interface OwnerRef {
  type: 'user' | 'team';
  id: string;
  name: string;
}

export const ownerOf = (p: { ownerType: string; ownerId: string; ownerName?: string | null }): OwnerRef => ({
  type: p.ownerType === 'team' ? 'team' : 'user',
  id: p.ownerId,
  name: p.ownerName ?? '',
});
