/**
 * The access rule, the one place every door (REST, GraphQL, search, stats, and what reads through
 * them) gets it from.
 *
 * A project is owned by one user or one team (projects.ownerId; sessions.userId carries the same
 * id, the "owner scope" a session is read through). It and its sessions are readable by the owning
 * user and by every member of the owning team; anyone else gets 403, an unknown id 404. Writes:
 *
 * | right                                  | owning user | team admin | team member          | viewer |
 * |----------------------------------------|-------------|------------|----------------------|--------|
 * | read the project and its sessions      | yes         | yes        | yes                  | yes    |
 * | upload new sessions into it            | yes         | yes        | yes                  | no     |
 * | change / delete a session              | yes         | yes        | the ones they uploaded | no   |
 * | project settings, move, delete         | yes         | yes        | no                   | no     |
 *
 * Memberships are read from the primary with the credential, in the statement that authenticates
 * the request (key or browser session; a context built outside a request reads them once, the
 * first time a check needs them), and never cached across requests, so a membership change
 * applies from the next request on every instance, search included. The API for other services:
 *
 * - `readableScopes(ctx)`: the owner ids whose projects the caller reads (their own id first, then
 *   their teams'); every cross-project query filters on them (`sessions.userId IN …`).
 * - `requireReadableProject` / `requireReadableSession`: 404 / 403, else the row;
 *   `requireProjectReader`: the same check on the project's owner alone.
 * - `requireProjectAdmin`: settings, move, delete. `requireWritableSession`: patch, delete.
 * - `checkUpload`: an upload into a project (the upload path applies it to the row it locked).
 * - `requireWriteAccess`: a read-only key writes nothing (every write check above applies it).
 * - `teamRole(ctx, teamId)`: the caller's role in a team, or null.
 */
import { AppError, projectForbidden, projectNotFound, sessionNotFound } from '../errors';
import { isUserCtx, type AnyCtx, type AuthUser, type Ctx } from './context';
import { READ_ONLY_MESSAGE } from '../domain/scopes';
import { projectById, projectOwnerId, type ProjectRow } from '../data/projects';
import { inlinePartOf, sessionWithProject, type InlinePart } from '../data/sessions';
import { ROW_KEYS, type SessionRow } from '../domain/session-row';
import { membershipsOfUser } from '../data/teams';
import type { OwnedSession } from './sessions';
import { PROJECT_ID_RE } from '../domain/project';
import { SESSION_ID_RE } from '../domain/session';
import { TEAM_ROLES, type TeamRole } from '../domain/teams';

/** The caller's standing towards a project: its owner, a role in the owning team, or nothing. */
export type ProjectRole = 'owner' | TeamRole;

interface Membership {
  teamId: string;
  role: TeamRole;
}

// One read per request: keyed by the request's user object (a new one for every request).
const perRequest = new WeakMap<AuthUser, Promise<Membership[]>>();

/** `teamId:role` pairs (as authentication reads them with the credential) → memberships. */
function parseMemberships(pairs: string): Array<{ teamId: string; role: string }> {
  if (!pairs) return [];
  return pairs.split(',').map((pair) => {
    const at = pair.lastIndexOf(':');
    return { teamId: pair.slice(0, at), role: pair.slice(at + 1) };
  });
}

/** The caller's team memberships: those read with their credential, else read once per request. */
export function memberships(ctx: Ctx): Promise<Membership[]> {
  let p = perRequest.get(ctx.user);
  if (!p) {
    const rows =
      ctx.user.memberships !== undefined
        ? Promise.resolve(parseMemberships(ctx.user.memberships))
        : // On the primary, like the credential itself: a read replica may not have applied a
          // removal or role change yet, and those take effect from the next request.
          membershipsOfUser(ctx.deps.db.writes, ctx.user.id);
    p = rows.then((list) =>
      list.filter((r) => (TEAM_ROLES as readonly string[]).includes(r.role)).map((r) => ({ teamId: r.teamId, role: r.role as TeamRole })),
    );
    perRequest.set(ctx.user, p);
    p.catch(() => perRequest.delete(ctx.user));
  }
  return p;
}

/** The owner ids whose projects and sessions the caller reads: their own id, then their teams'. */
export async function readableScopes(ctx: Ctx): Promise<string[]> {
  return [ctx.user.id, ...(await memberships(ctx)).map((m) => m.teamId)];
}

/**
 * The scopes a query reads when it names teams (`teamIds`): those of them the caller is in
 * (a team they are not in simply matches nothing), plus their own when `personal` is asked for.
 */
export async function scopesFor(ctx: Ctx, teamIds?: readonly string[] | null): Promise<string[]> {
  return scopesAmong(await readableScopes(ctx), ctx.user.id, teamIds);
}

/** scopesFor, given every scope the caller reads (readableScopes). */
function scopesAmong(all: string[], userId: string, teamIds?: readonly string[] | null): string[] {
  if (!teamIds || teamIds.length === 0) return all;
  return all.filter((s) => s !== userId && teamIds.includes(s));
}

/** The caller's role in the team, or null when they are not a member. */
export async function teamRole(ctx: Ctx, teamId: string): Promise<TeamRole | null> {
  return (await memberships(ctx)).find((m) => m.teamId === teamId)?.role ?? null;
}

export const teamNotFound = (teamId: string) => new AppError('NOT_FOUND', 'Team not found', { teamId });

/** The caller's role in the team; a team they are not in (or none) → 404 `Team not found`. */
export async function requireTeamMember(ctx: Ctx, teamId: string): Promise<TeamRole> {
  const role = await teamRole(ctx, teamId);
  if (!role) throw teamNotFound(teamId);
  return role;
}

/*
 * Refusals say why in words: what the caller's role allows and who may do it instead. Only a
 * caller with no access at all gets the bare `Insufficient permissions` of the interface
 * document (it says nothing about a project they cannot see).
 */

/** A viewer's refusal: what the role allows and how to get more. */
const VIEWER_READS_ONLY = "Viewers of a team can only read its projects: ask one of the team's admins for the member role";

/** An admin-only action refused to a member or viewer: `Only the team's admins can <action>`. */
export const onlyTeamAdmins = (action: string, details: Record<string, unknown>) => new AppError('FORBIDDEN', `Only the team's admins can ${action}`, details);

/** Admin or member of the team (binding a credential, creating or moving a project into it); a viewer → 403. */
export async function requireTeamWriter(ctx: Ctx, teamId: string): Promise<TeamRole> {
  requireWriteAccess(ctx);
  const role = await requireTeamMember(ctx, teamId);
  if (role === 'viewer') throw new AppError('FORBIDDEN', VIEWER_READS_ONLY, { teamId });
  return role;
}

/**
 * An admin of the team (members, roles, invitations, the team itself); others → 403
 * `Only the team's admins can <action>`.
 */
export async function requireTeamAdmin(ctx: Ctx, teamId: string, action: string): Promise<void> {
  const role = await requireTeamMember(ctx, teamId);
  if (role !== 'admin') throw onlyTeamAdmins(action, { teamId });
}

/**
 * A write by a read-only key (scopes ["read"]) → 403 `This key is read-only`. The doors refuse
 * such requests before reading their bodies; every write of a service checks again.
 */
export function requireWriteAccess(ctx: AnyCtx): void {
  if (isUserCtx(ctx) && ctx.user.readOnly) throw new AppError('FORBIDDEN', READ_ONLY_MESSAGE);
}

/** The caller's standing towards a project owned by `ownerId`, or null (no access). */
export async function projectRole(ctx: Ctx, ownerId: string): Promise<ProjectRole | null> {
  if (ownerId === ctx.user.id) return 'owner';
  return teamRole(ctx, ownerId);
}

export const canManage = (role: ProjectRole | null) => role === 'owner' || role === 'admin';
export const canUpload = (role: ProjectRole | null) => role === 'owner' || role === 'admin' || role === 'member';

/** May the caller change or delete this session (a member: only the ones they uploaded)? */
export function canWriteSession(ctx: Ctx, role: ProjectRole | null, session: Pick<SessionRow, 'uploadedBy'>): boolean {
  return canManage(role) || (role === 'member' && session.uploadedBy === ctx.user.id);
}

/**
 * The refusal of a session write (`action`: "change", "delete", "share", "replace") to a caller
 * who reads the project: a viewer reads only; a member changes only the sessions they uploaded.
 */
export function sessionWriteRefused(role: ProjectRole, action: string, projectId: string): AppError {
  if (role === 'viewer') return new AppError('FORBIDDEN', VIEWER_READS_ONLY, { projectId });
  return new AppError('FORBIDDEN', `Only the person who uploaded this session and the team's admins can ${action} it`, { projectId });
}

/** The refusal of a project-settings action (`action`: "change", "move", "delete") to a team member or viewer. */
const projectAdminRefused = (action: string, projectId: string) => onlyTeamAdmins(`${action} this project`, { projectId });

/** 404 for no project, 403 for no access; else the caller's role. */
async function roleOrThrow(ctx: Ctx, projectId: string, ownerId: string | null | undefined): Promise<ProjectRole> {
  if (ownerId == null) throw projectNotFound(projectId);
  const role = await projectRole(ctx, ownerId);
  if (!role) throw projectForbidden(projectId);
  return role;
}

/**
 * The message of an upload into a project the caller cannot upload to, with what to do about it
 * (the upload CLI prints it as it comes).
 */
const belongsToAnotherAccount = (projectId: string) =>
  new AppError(
    'FORBIDDEN',
    `Project ${projectId} belongs to another account. To sync into it, ask its owner to move it into a team you share ` +
      '(POST /api/v1/projects/{id}/move), or log the client in for that team (choose the team under "Upload new projects to" on /cli-login).',
    { projectId },
  );

/**
 * The upload rule for a project's owner as read under the upload's lock: no access at all → 403
 * `Project <id> belongs to another account` (with how to fix it); a viewer → 403.
 */
export async function checkUpload(ctx: Ctx, projectId: string, ownerId: string | null | undefined): Promise<ProjectRole> {
  requireWriteAccess(ctx);
  if (ownerId == null) throw projectNotFound(projectId);
  const role = await projectRole(ctx, ownerId);
  if (!role) throw belongsToAnotherAccount(projectId);
  if (!canUpload(role)) throw new AppError('FORBIDDEN', VIEWER_READS_ONLY, { projectId });
  return role;
}

/** For writes that lock the project row: the caller must own it or be an admin of its team (`action` names the write). */
export async function checkProjectAdmin(ctx: Ctx, projectId: string, ownerId: string | null | undefined, action: string): Promise<ProjectRole> {
  requireWriteAccess(ctx);
  const role = await roleOrThrow(ctx, projectId, ownerId);
  if (!canManage(role)) throw projectAdminRefused(action, projectId);
  return role;
}

/** Ids that can never name a project or a session are simply unknown (404), never a 400, on reads. */
function checkReadIds(projectId: string, sessionId?: string): void {
  if (!PROJECT_ID_RE.test(projectId)) throw projectNotFound(projectId);
  if (sessionId !== undefined && !SESSION_ID_RE.test(sessionId)) throw sessionNotFound(sessionId, projectId);
}

/** A project the caller can read, with their role, or 404 / 403. */
export async function requireReadableProject(ctx: Ctx, projectId: string): Promise<ProjectRow & { role: ProjectRole }> {
  checkReadIds(projectId);
  const project = await projectById(ctx.deps.db.reads, projectId);
  const role = await roleOrThrow(ctx, projectId, project?.ownerId);
  return { ...project!, role };
}

/** The caller's role in a project they can read, or 404 / 403, reading only its owner (a list of its sessions needs no more). */
export async function requireProjectReader(ctx: Ctx, projectId: string): Promise<ProjectRole> {
  checkReadIds(projectId);
  return roleOrThrow(ctx, projectId, await projectOwnerId(ctx.deps.db.reads, projectId));
}

/** A project whose settings the caller may change (owner or team admin), or 404 / 403 (`action` names the write). */
export async function requireProjectAdmin(ctx: Ctx, projectId: string, action: string): Promise<ProjectRow & { role: ProjectRole }> {
  requireWriteAccess(ctx);
  const p = await requireReadableProject(ctx, projectId);
  if (!canManage(p.role)) throw projectAdminRefused(action, projectId);
  return p;
}

/**
 * A session the caller can read, with the project it belongs to (one statement), or 404 / 403:
 * a project the caller cannot read → 403 naming it; a readable project without that session →
 * 404 naming both. Session ids are UUIDs in any case; the row's is lower-case.
 */
export async function requireReadableSession(
  ctx: Ctx,
  projectId: string,
  rawSessionId: string,
  /** Also read this content part in the same statement when it is small (`inline` then holds it whole). */
  inline?: InlinePart,
): Promise<OwnedSession & { role: ProjectRole; inline?: Buffer }> {
  checkReadIds(projectId, rawSessionId);
  const sessionId = rawSessionId.toLowerCase();
  const r = await sessionWithProject(ctx.deps.db.reads, projectId, sessionId, inline);
  const role = await roleOrThrow(ctx, projectId, r?.ownerId);
  if (!r!.id) throw sessionNotFound(sessionId, projectId);
  const { ownerId, ownerType, ownerName, projectName, projectIcon, projectColor } = r!;
  const session = sessionRowOf(r as SessionRow) as OwnedSession & { role: ProjectRole; inline?: Buffer };
  session.project = { id: projectId, name: projectName, icon: projectIcon, color: projectColor, ownerId, ownerType, ownerName };
  session.role = role;
  const whole = inline ? inlinePartOf(r!, inline) : undefined;
  if (whole) session.inline = whole;
  return session;
}

/** A session row's columns and its uploader's name, out of a row with more (a join's); a column missing here fails the typecheck. */
function sessionRowOf(r: SessionRow): SessionRow {
  const row: Required<Pick<SessionRow, (typeof ROW_KEYS)[number]>> & Pick<SessionRow, 'uploaderName'> = {
    projectId: r.projectId,
    id: r.id,
    userId: r.userId,
    name: r.name,
    userTitle: r.userTitle,
    markdownSize: r.markdownSize,
    rawDataSize: r.rawDataSize,
    etag: r.etag,
    contentDigest: r.contentDigest,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
    startedAt: r.startedAt,
    endedAt: r.endedAt,
    clientName: r.clientName,
    clientVersion: r.clientVersion,
    agentName: r.agentName,
    deviceId: r.deviceId,
    metadataJson: r.metadataJson,
    sessionDataSize: r.sessionDataSize,
    sessionDataDigest: r.sessionDataDigest,
    redactionsJson: r.redactionsJson,
    uploadedBy: r.uploadedBy,
    costUsd: r.costUsd,
    uploaderName: r.uploaderName,
  };
  return row;
}

/** A session the caller may change or delete (`action` names the write), or 404 / 403. */
export async function requireWritableSession(ctx: Ctx, projectId: string, rawSessionId: string, action: string): Promise<OwnedSession & { role: ProjectRole }> {
  requireWriteAccess(ctx);
  const s = await requireReadableSession(ctx, projectId, rawSessionId);
  if (!canWriteSession(ctx, s.role, s)) throw sessionWriteRefused(s.role, action, projectId);
  return s;
}

/** Where a session sits, for the write rule applied to someone other than the caller. */
interface SessionPlace {
  ownerType: string;
  ownerId: string;
  uploadedBy: string | null;
}

/**
 * The write rule for `userId` (not the caller: a share link's creator, checked at every read of
 * the link), given their role in the owning team (null: none), the same table as above.
 */
export function mayChangeSession(place: SessionPlace, userId: string, teamRole: string | null): boolean {
  const role: ProjectRole | null =
    place.ownerType === 'team'
      ? (TEAM_ROLES as readonly string[]).includes(teamRole ?? '')
        ? (teamRole as TeamRole)
        : null
      : place.ownerId === userId
        ? 'owner'
        : null;
  return canManage(role) || (role === 'member' && place.uploadedBy === userId);
}

/** What the caller may do with a session, by the table above (a console offers only these). */
export async function sessionPermissions(
  ctx: Ctx,
  session: Pick<SessionRow, 'userId' | 'uploadedBy'>,
): Promise<{ rename: boolean; tag: boolean; delete: boolean; share: boolean }> {
  const write = !ctx.user.readOnly && canWriteSession(ctx, await projectRole(ctx, session.userId), session);
  return { rename: write, tag: write, delete: write, share: write && ctx.deps.config.shares !== 'off' };
}

/** What the caller may do with a project owned by `ownerId`, by the table above. */
export async function projectPermissions(ctx: Ctx, ownerId: string): Promise<{ edit: boolean; move: boolean; delete: boolean; upload: boolean }> {
  const role = ctx.user.readOnly ? null : await projectRole(ctx, ownerId);
  const manage = canManage(role);
  return { edit: manage, move: manage, delete: manage, upload: canUpload(role) };
}
