import crypto from 'node:crypto';
import { AppError, unauthenticated } from '../errors';
import { DEFAULT_COLOR, DEFAULT_ICON } from '../domain/project';
import { redactField } from '../domain/redaction';
import { keyById } from '../data/api-keys';
import { enqueueIndexWork, enqueueProjectReindex } from '../data/outbox';
import { announceSessionChanges } from '../data/signal';
import * as store from '../data/projects';
import type { ProjectRow } from '../data/projects';
import { moveSessionsOfProject } from '../data/session-writes';
import { inTransaction, type Tx } from '../data/transaction';
import {
  canUpload,
  checkProjectAdmin,
  projectRole,
  teamRole,
  readableScopes,
  requireProjectAdmin,
  requireReadableProject,
  requireTeamWriter,
  teamNotFound,
} from './access';
import { recordAudit } from './audit';
import type { AnyCtx, Ctx } from './context';
import { CreateProjectInput, MoveProjectInput, UpdateProjectInput } from './inputs';
import { parseInput } from '../domain/inputs';
import { presentProject, type ProjectDto } from './presenters/project';
import { changeProjectPolicy, refuseIfProjectHeld } from './retention';
import { projectMoved, sessionsDeleted } from './webhook-events';

/** Projects the caller can read (their own and their teams') with their aggregates, in one statement. */
export async function projectsWithStats(ctx: Ctx, ids?: string[]): Promise<ProjectDto[]> {
  if (ids && ids.length === 0) return [];
  const rows = await store.projectsWithStats(ctx.deps.db.reads, await readableScopes(ctx), ids);
  return rows.map((r) => presentProject(r, r));
}

export const listProjects = (ctx: Ctx) => projectsWithStats(ctx);

export async function getProject(ctx: Ctx, projectId: string): Promise<ProjectDto> {
  await requireReadableProject(ctx, projectId);
  const [p] = await projectsWithStats(ctx, [projectId]);
  return p;
}

/** The team a key or device token is bound to (null: personal; a browser session never is). */
export async function credentialTeamId(ctx: Ctx): Promise<string | null> {
  if (!ctx.user.keyId) return null;
  return (await keyById(ctx.deps.db.reads, ctx.user.keyId))?.teamId ?? null;
}

/**
 * Who owns a project the caller creates: the team named (`teamId`; null: the caller), else the
 * team the credential is bound to, else the caller. A team needs the role admin or member
 * (not a member → 404 `Team not found`, a viewer → 403).
 */
export async function newProjectOwner(ctx: Ctx, teamId?: string | null): Promise<{ ownerType: 'user' | 'team'; ownerId: string }> {
  const team = teamId === undefined ? await credentialTeamId(ctx) : teamId;
  if (team == null) return { ownerType: 'user', ownerId: ctx.user.id };
  if (teamId === undefined && !canUpload(await teamRole(ctx, team))) {
    // The credential's team, which the caller has left (or only views) since it was bound.
    throw new AppError(
      'FORBIDDEN',
      'This client is logged in for a team where you can no longer create projects. Log it in again (choose where new projects go under "Upload new projects to" on /cli-login) or use another key.',
      { teamId: team },
    );
  }
  await requireTeamWriter(ctx, team);
  return { ownerType: 'team', ownerId: team };
}

/**
 * Inserts a new project unless one with its id exists (returns whether it did), in a transaction
 * that holds its owner's row: a user or team deleted meanwhile never leaves an ownerless project
 * (their delete waits and takes it along, or went first: 401 for a user, 404 for a team).
 */
export async function insertNewProject(tx: Tx, row: ProjectRow): Promise<boolean> {
  const team = row.ownerType === 'team';
  if (!(await store.lockOwnerShared(tx, team ? 'team' : 'user', row.ownerId))) throw team ? teamNotFound(row.ownerId) : unauthenticated();
  return store.insertProjectIfAbsent(tx, row);
}

export async function createProject(ctx: Ctx, input: unknown): Promise<ProjectDto> {
  const v = parseInput(CreateProjectInput, input);
  v.name = redactField(v.name, ctx.deps.config.redactSecrets);
  const id = v.id ?? crypto.randomUUID();
  const now = new Date();
  const owner = await newProjectOwner(ctx, v.teamId);
  const row: ProjectRow = { id, ...owner, name: v.name, icon: v.icon ?? DEFAULT_ICON, color: v.color ?? DEFAULT_COLOR, createdAt: now, updatedAt: now };
  if (!(await inTransaction(ctx.deps.db, ctx.guard, (tx) => insertNewProject(tx, row)))) {
    const existing = await store.projectById(ctx.deps.db.writes, id);
    if (existing && !(await projectRole(ctx, existing.ownerId))) throw new AppError('FORBIDDEN', 'Insufficient permissions', { projectId: id });
    throw new AppError('CONFLICT', 'Project already exists', { projectId: id });
  }
  return getProject(ctx, id);
}

export async function updateProject(ctx: Ctx, projectId: string, input: unknown): Promise<ProjectDto> {
  const { name, icon, color, ...policy } = parseInput(UpdateProjectInput, input);
  const redacted = name == null ? name : redactField(name, ctx.deps.config.redactSecrets);
  const appearance = { name: redacted, icon: icon ?? undefined, color: color ?? undefined };
  const changed = name !== undefined || icon != null || color != null;
  return changeProjectPolicy(ctx, projectId, policy, {
    changed,
    write: async () => {
      if (changed) await store.updateProjectAppearance(ctx.deps.db.writes, projectId, appearance, new Date());
    },
  });
}

/**
 * Deletes a project with its sessions and content (foreign keys cascade) and records the
 * index work in the same transaction. The owner, or an admin of the owning team.
 */
export async function deleteProject(ctx: Ctx, projectId: string): Promise<{ deletedProject: ProjectDto; deletedAt: string }> {
  await requireProjectAdmin(ctx, projectId, 'delete');
  const result = await inTransaction(ctx.deps.db, ctx.guard, async (tx) => {
    const ownerId = await store.lockProjectOwner(tx, projectId, 'update');
    await checkProjectAdmin(ctx, projectId, ownerId, 'delete');
    return deleteLockedProject(ctx, tx, projectId, ownerId!);
  });
  return { deletedProject: result, deletedAt: new Date().toISOString() };
}

/**
 * The deletion itself, in the caller's transaction, of a project whose row it has locked (`FOR
 * UPDATE`) and whose deletion it has allowed: refused (409) while on legal hold; the index work,
 * the live updates, a `session.deleted` for each session, the `project.delete` entry, then the row
 * (sessions, content, labels and share links cascade; objects in S3 are left to the content sweep).
 * A project's delete and a user's (src/services/user-delete.ts) both go through here.
 */
export async function deleteLockedProject(ctx: AnyCtx, tx: Tx, projectId: string, ownerId: string): Promise<ProjectDto> {
  await refuseIfProjectHeld(tx, projectId);
  const before = (await store.projectWithStats(tx, projectId))!;
  await enqueueIndexWork(tx, 'delete_project', ownerId, projectId, null);
  const sessionIds = await store.sessionIdsOfProject(tx, projectId);
  announceSessionChanges(tx, 'DELETED', ownerId, projectId, sessionIds);
  await sessionsDeleted(tx, ctx.deps.config, ownerId, projectId, sessionIds);
  // Before the row goes: the entry's team is read from it.
  await recordAudit(ctx, { action: 'project.delete', target: { type: 'project', id: projectId }, projectId, detail: { sessions: before.sessionCount } }, tx);
  await store.deleteProjectRow(tx, projectId);
  return presentProject(before, before);
}

/**
 * Moves a project into a team (`teamId`: by its owner or an admin of its team, into a team where
 * the caller is admin or member) or to the caller (`teamId: null`: a team admin takes it).
 * Sessions and their uploaders stay; the search index follows through the outbox: the entries
 * under the old owner go, every session is indexed again under the new one.
 */
export async function moveProject(ctx: Ctx, projectId: string, input: unknown): Promise<ProjectDto> {
  const { teamId } = parseInput(MoveProjectInput, input);
  const before = await requireProjectAdmin(ctx, projectId, 'move');
  const target = teamId === null ? { ownerType: 'user' as const, ownerId: ctx.user.id } : await newProjectOwner(ctx, teamId);
  await inTransaction(ctx.deps.db, ctx.guard, async (tx) => {
    const ownerId = await store.lockProjectOwner(tx, projectId, 'update');
    await checkProjectAdmin(ctx, projectId, ownerId, 'move');
    if (ownerId === target.ownerId) return;
    // Into a team: that team's entry; to a user: the team it leaves (read from the row, not yet
    // moved). From one team to another: an entry for each, so that both teams' logs show it.
    const detail = { from: ownerId ?? null, to: target.ownerId, toType: target.ownerType };
    const entry = { action: 'project.move', target: { type: 'project', id: projectId }, projectId, detail } as const;
    await recordAudit(ctx, { ...entry, teamId }, tx);
    if (teamId && before.ownerType === 'team') await recordAudit(ctx, entry, tx);
    await enqueueIndexWork(tx, 'delete_project', ownerId!, projectId, null);
    await store.setProjectOwner(tx, projectId, target.ownerType, target.ownerId, new Date());
    await moveSessionsOfProject(tx, projectId, target.ownerId);
    await enqueueProjectReindex(tx, projectId);
    // Gone for whoever read it through the old owner; there for whoever reads the new one.
    const moved = await store.sessionIdsOfProject(tx, projectId);
    announceSessionChanges(tx, 'DELETED', ownerId!, projectId, moved);
    announceSessionChanges(tx, 'UPDATED', target.ownerId, projectId, moved);
    const from = { ownerType: before.ownerType === 'team' ? ('team' as const) : ('user' as const), ownerId: ownerId! };
    await projectMoved(tx, ctx.deps.config, { projectId, name: before.name, from, to: target });
  });
  return getProject(ctx, projectId);
}
