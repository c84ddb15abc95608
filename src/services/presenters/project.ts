/**
 * How a project is shown to clients: REST's `Project` objects and GraphQL's `Project` (whose
 * resolvers read this object) are both `presentProject`; a session's `project` is `presentProjectRef`.
 */
import type { z } from 'zod';
import type { Project, ProjectRef as ProjectRefShape } from '../../api/schemas/resources';
import type { ProjectPolicyRow, ProjectRow, ProjectStatsRow } from '../../data/projects';
import type { PROJECT_COLORS, PROJECT_ICONS } from '../../domain/project';
import { ownerOf } from '../../domain/teams';

/** REST's `Project` schema is the type (`sessions` is added by the upload CLI's resumable listing). */
export type ProjectDto = z.input<typeof Project>;

/** The column holds one of the icons (and colors) inputs allow. */
const icon = (v: string) => v as (typeof PROJECT_ICONS)[number];
const color = (v: string) => v as (typeof PROJECT_COLORS)[number];

export const presentProject = (p: ProjectRow & ProjectPolicyRow, s: ProjectStatsRow): ProjectDto => {
  const lastActivity = (s.lastSessionUpdate ?? p.updatedAt).toISOString();
  return {
    id: p.id,
    ownerId: p.ownerId,
    owner: ownerOf(p),
    name: p.name,
    icon: icon(p.icon),
    color: color(p.color),
    createdAt: p.createdAt.toISOString(),
    updatedAt: p.updatedAt.toISOString(),
    sessionCount: s.sessionCount,
    totalMarkdownSize: s.totalMarkdownSize,
    lastActivity,
    lastUpdated: lastActivity,
    retentionDays: p.retentionDays,
    legalHold: p.legalHold === 1,
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
export const presentProjectRef = (p: ProjectRef): Omit<z.input<typeof ProjectRefShape>, 'owner'> & Partial<Pick<z.input<typeof ProjectRefShape>, 'owner'>> => ({
  id: p.id,
  name: p.name,
  icon: p.icon,
  color: p.color,
  ...(p.ownerId ? { owner: ownerOf({ ownerId: p.ownerId, ownerType: p.ownerType ?? 'user', ownerName: p.ownerName }) } : {}),
});
