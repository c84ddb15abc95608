/**
 * The ownership rule of contract §4, the one place both front doors (REST and GraphQL) get it
 * from: an unknown project or session → 404, another user's → 403. Every error names the ids it
 * is about (GraphQL puts them in `extensions`, contract §6).
 */
import { projectForbidden, projectNotFound, sessionNotFound } from '../errors';
import type { Ctx } from './context';
import { projectById, type ProjectRow } from '../data/projects';
import { sessionWithProject, type SessionRow } from '../data/sessions';
import type { OwnedSession } from './sessions';
import { PROJECT_ID_RE, UUID_RE } from '../domain/validation';

/**
 * The rule itself, for a project's owner as read (`undefined`: no such project). Writes that
 * lock the project row in their transaction apply it to what they locked.
 */
export function checkProjectOwner(ctx: Ctx, projectId: string, ownerId: string | null | undefined): void {
  if (ownerId == null) throw projectNotFound(projectId);
  if (ownerId !== ctx.user.id) throw projectForbidden(projectId);
}

/** Ids that can never name a project or a session are simply unknown (404), never a 400, on reads. */
function checkReadIds(projectId: string, sessionId?: string): void {
  if (!PROJECT_ID_RE.test(projectId)) throw projectNotFound(projectId);
  if (sessionId !== undefined && !UUID_RE.test(sessionId)) throw sessionNotFound(sessionId, projectId);
}

/** The caller's project, or 404 / 403. */
export async function requireOwnedProject(ctx: Ctx, projectId: string): Promise<ProjectRow> {
  checkReadIds(projectId);
  const project = await projectById(ctx.deps.db.reads, projectId);
  checkProjectOwner(ctx, projectId, project?.ownerId);
  return project!;
}

/**
 * The caller's session with the project it belongs to (one statement), or 404 / 403: another
 * user's project → 403 naming the project; the caller's project without that session → 404
 * naming both. Session ids are UUIDs in any case; the row's is lower-case.
 */
export async function requireOwnedSession(ctx: Ctx, projectId: string, rawSessionId: string): Promise<OwnedSession> {
  checkReadIds(projectId, rawSessionId);
  const sessionId = rawSessionId.toLowerCase();
  const r = await sessionWithProject(ctx.deps.db.reads, projectId, sessionId);
  checkProjectOwner(ctx, projectId, r?.ownerId);
  if (!r!.id) throw sessionNotFound(sessionId, projectId);
  const { ownerId: _owner, projectName, projectIcon, projectColor, ...row } = r!;
  return { ...(row as SessionRow), project: { id: projectId, name: projectName, icon: projectIcon, color: projectColor } };
}
