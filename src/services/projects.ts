import crypto from 'node:crypto';
import { AppError } from '../errors';
import { DEFAULT_COLOR, DEFAULT_ICON } from '../domain/project';
import { redactField } from '../domain/redaction';
import { enqueueIndexWork } from '../data/outbox';
import * as store from '../data/projects';
import type { ProjectRow, ProjectStatsRow } from '../data/projects';
import { inTransaction } from '../data/transaction';
import { checkProjectOwner, requireOwnedProject } from './access';
import type { Ctx } from './context';
import { CreateProjectInput, parseInput, UpdateProjectInput } from './inputs';

export { DEFAULT_COLOR, DEFAULT_ICON, PROJECT_COLORS, PROJECT_ICONS } from '../domain/project';

export type { ProjectRow, ProjectStatsRow } from '../data/projects';

export interface ProjectDto {
  id: string;
  ownerId: string;
  name: string;
  icon: string;
  color: string;
  createdAt: string;
  updatedAt: string;
  sessionCount: number;
  totalMarkdownSize: number;
  lastActivity: string;
  /** = lastActivity (client-compatible: the upload CLI reads this name; contract §15). */
  lastUpdated: string;
}

export const toProject = (p: ProjectRow, s: ProjectStatsRow): ProjectDto => {
  const lastActivity = (s.lastSessionUpdate ?? p.updatedAt).toISOString();
  return {
    id: p.id,
    ownerId: p.ownerId,
    name: p.name,
    icon: p.icon,
    color: p.color,
    createdAt: p.createdAt.toISOString(),
    updatedAt: p.updatedAt.toISOString(),
    sessionCount: Number(s.sessionCount),
    totalMarkdownSize: Number(s.totalMarkdownSize),
    lastActivity,
    lastUpdated: lastActivity,
  };
};

/** Projects with their aggregates, computed by the database in one statement. */
export async function projectsWithStats(ctx: Ctx, ids?: string[]): Promise<ProjectDto[]> {
  if (ids && ids.length === 0) return [];
  const rows = await store.projectsWithStats(ctx.deps.db.reads, ctx.user.id, ids);
  return rows.map((r) => toProject(r, r));
}

export const listProjects = (ctx: Ctx) => projectsWithStats(ctx);

export async function getProject(ctx: Ctx, projectId: string): Promise<ProjectDto> {
  await requireOwnedProject(ctx, projectId);
  const [p] = await projectsWithStats(ctx, [projectId]);
  return p;
}

export async function createProject(ctx: Ctx, input: unknown): Promise<ProjectDto> {
  const v = parseInput(CreateProjectInput, input);
  v.name = redactField(v.name, ctx.deps.config.redactSecrets);
  const id = v.id ?? crypto.randomUUID();
  const now = new Date();
  const row: ProjectRow = { id, ownerId: ctx.user.id, name: v.name, icon: v.icon ?? DEFAULT_ICON, color: v.color ?? DEFAULT_COLOR, createdAt: now, updatedAt: now };
  if (!(await store.insertProjectIfAbsent(ctx.deps.db.writes, row))) {
    const owner = await store.projectById(ctx.deps.db.writes, id);
    if (owner) checkProjectOwner(ctx, id, owner.ownerId);
    throw new AppError('CONFLICT', 'Project already exists', { projectId: id });
  }
  return getProject(ctx, id);
}

export async function updateProject(ctx: Ctx, projectId: string, input: unknown): Promise<ProjectDto> {
  const { name, icon, color } = parseInput(UpdateProjectInput, input);
  await requireOwnedProject(ctx, projectId);
  const redacted = name == null ? name : redactField(name, ctx.deps.config.redactSecrets);
  await store.updateProjectAppearance(ctx.deps.db.writes, projectId, { name: redacted, icon: icon ?? undefined, color: color ?? undefined }, new Date());
  return getProject(ctx, projectId);
}

/**
 * Deletes a project with its sessions and content (foreign keys cascade) and records the
 * index work in the same transaction.
 */
export async function deleteProject(ctx: Ctx, projectId: string): Promise<{ deletedProject: ProjectDto; deletedAt: string }> {
  await requireOwnedProject(ctx, projectId);
  const result = await inTransaction(ctx.deps.db, ctx.guard, async (tx) => {
    checkProjectOwner(ctx, projectId, await store.lockProjectOwner(tx, projectId, 'update'));
    const before = (await store.projectWithStats(tx, projectId))!;
    await enqueueIndexWork(tx, 'delete_project', ctx.user.id, projectId, null);
    await store.deleteProjectRow(tx, projectId);
    return toProject(before, before);
  });
  return { deletedProject: result, deletedAt: new Date().toISOString() };
}
