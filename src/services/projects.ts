import crypto from 'node:crypto';
import { AppError, invalid } from '../errors';
import { enqueueIndexWork } from '../data/outbox';
import * as store from '../data/projects';
import type { ProjectRow, ProjectStatsRow } from '../data/projects';
import { inTransaction } from '../data/transaction';
import { checkProjectOwner, requireOwnedProject } from './access';
import type { Ctx } from './context';
import { checkString, isPlainObject, oneOf, PROJECT_ID_RE } from './validation';

export const PROJECT_ICONS = [
  'Code2', 'Terminal', 'Bot', 'Brain', 'Sparkles', 'Database', 'GitBranch', 'Bug', 'FolderKanban', 'Folder',
  'Files', 'Library', 'BookOpen', 'Briefcase', 'Package', 'Layers', 'AppWindow', 'Rocket', 'Palette',
  'Paintbrush', 'PenTool', 'Lightbulb', 'BarChart3', 'Settings', 'Globe',
] as const;
export const PROJECT_COLORS = ['rose', 'pink', 'orange', 'amber', 'emerald', 'cyan', 'blue', 'purple', 'slate', 'gray'] as const;
export const DEFAULT_ICON = 'Code2';
export const DEFAULT_COLOR = 'blue';

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

function validateAppearance(input: Record<string, unknown>) {
  const out: { name?: string; icon?: string; color?: string } = {};
  if (input.name !== undefined) out.name = checkString(input.name, 'name', 1, 255);
  if (input.icon !== undefined && input.icon !== null) out.icon = oneOf(input.icon, 'icon', PROJECT_ICONS);
  if (input.color !== undefined && input.color !== null) out.color = oneOf(input.color, 'color', PROJECT_COLORS);
  return out;
}

export async function createProject(ctx: Ctx, input: unknown): Promise<ProjectDto> {
  if (!isPlainObject(input)) throw invalid('Request body must be a JSON object');
  let id: string;
  if (input.id === undefined || input.id === null) {
    id = crypto.randomUUID();
  } else if (typeof input.id !== 'string' || !PROJECT_ID_RE.test(input.id)) {
    throw invalid('Invalid value for id: must match ^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$');
  } else {
    id = input.id;
  }
  if (input.name === undefined || input.name === null) throw invalid('Missing required field: name');
  const v = validateAppearance(input);
  const now = new Date();
  const row: ProjectRow = { id, ownerId: ctx.user.id, name: v.name!, icon: v.icon ?? DEFAULT_ICON, color: v.color ?? DEFAULT_COLOR, createdAt: now, updatedAt: now };
  if (!(await store.insertProjectIfAbsent(ctx.deps.db.writes, row))) {
    const owner = await store.projectById(ctx.deps.db.writes, id);
    if (owner) checkProjectOwner(ctx, id, owner.ownerId);
    throw new AppError('CONFLICT', 'Project already exists', { projectId: id });
  }
  return getProject(ctx, id);
}

export async function updateProject(ctx: Ctx, projectId: string, input: unknown): Promise<ProjectDto> {
  if (!isPlainObject(input)) throw invalid('Request body must be a JSON object');
  const v = validateAppearance(input);
  if (input.name === null) throw invalid('Invalid value for name: must not be null');
  if (Object.keys(v).length === 0) throw invalid('Nothing to update: send name, icon or color');
  await requireOwnedProject(ctx, projectId);
  await store.updateProjectAppearance(ctx.deps.db.writes, projectId, v, new Date());
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
