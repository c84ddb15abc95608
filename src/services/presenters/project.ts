/**
 * How a project is shown to clients: REST's `Project` objects and GraphQL's `Project` (whose
 * resolvers read this object) are both `presentProject`; a session's `project` is `presentProjectRef`.
 */
import type { ProjectRow, ProjectStatsRow } from '../../data/projects';
import { ownerOf, type OwnerRef } from '../../domain/teams';

export interface ProjectDto {
  id: string;
  /** The owning user's or team's id. */
  ownerId: string;
  owner: OwnerRef;
  name: string;
  icon: string;
  color: string;
  createdAt: string;
  updatedAt: string;
  sessionCount: number;
  totalMarkdownSize: number;
  lastActivity: string;
  /** = lastActivity (client-compatible: the upload CLI reads this name). */
  lastUpdated: string;
}

export const presentProject = (p: ProjectRow, s: ProjectStatsRow): ProjectDto => {
  const lastActivity = (s.lastSessionUpdate ?? p.updatedAt).toISOString();
  return {
    id: p.id,
    ownerId: p.ownerId,
    owner: ownerOf(p),
    name: p.name,
    icon: p.icon,
    color: p.color,
    createdAt: p.createdAt.toISOString(),
    updatedAt: p.updatedAt.toISOString(),
    sessionCount: s.sessionCount,
    totalMarkdownSize: s.totalMarkdownSize,
    lastActivity,
    lastUpdated: lastActivity,
  };
};

/** What a session's read selects of its project (the owner when the read joined it). */
export interface ProjectRef {
  id: string;
  name: string;
  icon: string;
  color: string;
  ownerId?: string;
  ownerType?: string;
  ownerName?: string | null;
}

/** The `project` inside a session object: its appearance and owner. */
export const presentProjectRef = (p: ProjectRef) => ({
  id: p.id,
  name: p.name,
  icon: p.icon,
  color: p.color,
  ...(p.ownerId ? { owner: ownerOf({ ownerId: p.ownerId, ownerType: p.ownerType ?? 'user', ownerName: p.ownerName }) } : {}),
});
