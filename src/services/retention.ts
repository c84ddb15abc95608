/**
 * Retention and legal hold: who may set them on a project or a team, and the refusal every
 * deletion makes while a hold is on (the sweep is src/services/retention-sweep.ts).
 */
import { projectOwnerId, projectWithStats } from '../data/projects';
import { heldProjectsAmong, projectOnHold, setProjectPolicy, setTeamPolicy, teamOnHold, type PolicyChange } from '../data/retention';
import { teamById } from '../data/teams';
import { inTransaction } from '../data/transaction';
import { recordAudit } from './audit';
import type { Sql } from '../data/sql';
import { AppError, projectNotFound } from '../errors';
import { requireProjectAdmin, requireTeamAdmin, requireWriteAccess, teamNotFound } from './access';
import type { Ctx } from './context';
import { presentProject, type ProjectDto } from './presenters/project';

const ON_HOLD = 'Project is on legal hold';

/** 409 `Project is on legal hold`. */
const onHold = (details: Record<string, unknown>) => new AppError('CONFLICT', ON_HOLD, details);

/** Refuses (409) while the project or its team is on legal hold; in the deletion's transaction (the rows stay share-locked). */
export async function refuseIfProjectHeld(tx: Sql, projectId: string): Promise<void> {
  if (await projectOnHold(tx, projectId)) throw onHold({ projectId });
}

/** Refuses (409) when any of the projects is on legal hold (an import that may replace sessions, before it writes). */
export async function refuseIfAnyHeld(db: Sql, projectIds: readonly string[]): Promise<void> {
  const held = await heldProjectsAmong(db, projectIds);
  if (held.length) throw onHold({ projectId: held[0] });
}

/** The audit entries of a change: one per setting changed. */
async function auditChange(ctx: Ctx, tx: Sql, change: PolicyChange, target: { type: 'project' | 'team'; id: string }): Promise<void> {
  const where = target.type === 'project' ? { projectId: target.id } : { teamId: target.id };
  if (change.retentionDays !== undefined)
    await recordAudit(ctx, { action: 'retention.set', target, ...where, detail: { retentionDays: change.retentionDays } }, tx);
  if (change.legalHold !== undefined) await recordAudit(ctx, { action: 'legal_hold.set', target, ...where, detail: { legalHold: change.legalHold } }, tx);
}

/** Refuses (409) while the team is on legal hold. */
export async function refuseIfTeamHeld(tx: Sql, teamId: string): Promise<void> {
  if (await teamOnHold(tx, teamId)) throw onHold({ teamId });
}

/** The change a PATCH asks for: retentionDays as sent (null included), legalHold unless absent or null. */
function changeOf(input: { retentionDays?: number | null; legalHold?: boolean | null }): PolicyChange {
  const change: PolicyChange = {};
  if (input.retentionDays !== undefined) change.retentionDays = input.retentionDays;
  if (input.legalHold != null) change.legalHold = input.legalHold;
  return change;
}

/** A legal hold is set or lifted by instance administrators only. */
function requireHoldSetter(ctx: Ctx): void {
  requireWriteAccess(ctx);
  if (ctx.user.role !== 'admin') throw new AppError('FORBIDDEN', 'Only instance administrators can set or lift a legal hold');
}

/**
 * A project's PATCH beyond its appearance: retention (the owner or a team admin, as for every
 * setting: `settings` says whether the rest of the PATCH asks for that check too) and legal hold
 * (instance administrators, whether or not they can read the project). Checks first, then writes;
 * returns the project as it is now.
 */
export async function changeProjectPolicy(
  ctx: Ctx,
  projectId: string,
  input: { retentionDays?: number | null; legalHold?: boolean | null },
  settings: { changed: boolean; write: () => Promise<void> },
): Promise<ProjectDto> {
  const change = changeOf(input);
  if (settings.changed || change.retentionDays !== undefined) await requireProjectAdmin(ctx, projectId, 'change');
  if (change.legalHold !== undefined) {
    requireHoldSetter(ctx);
    if (!(await projectOwnerId(ctx.deps.db.writes, projectId))) throw projectNotFound(projectId);
  }
  await settings.write();
  if (change.retentionDays !== undefined || change.legalHold !== undefined) {
    await inTransaction(ctx.deps.db, ctx.guard, async (tx) => {
      await setProjectPolicy(tx, projectId, change, new Date());
      await auditChange(ctx, tx, change, { type: 'project', id: projectId });
    });
  }
  const p = await projectWithStats(ctx.deps.db.writes, projectId);
  if (!p) throw projectNotFound(projectId);
  return presentProject(p, p);
}

/**
 * A team's PATCH beyond its name: retention (the team's admins) and legal hold (instance
 * administrators, whether or not they are members of it: a hold must reach any team). A
 * read-only key changes nothing of it (403), the name included.
 */
export async function changeTeamPolicy(
  ctx: Ctx,
  teamId: string,
  input: { retentionDays?: number | null; legalHold?: boolean | null },
  settings: { changed: boolean; write: () => Promise<void> },
): Promise<void> {
  requireWriteAccess(ctx);
  const change = changeOf(input);
  if (settings.changed) await requireTeamAdmin(ctx, teamId, 'rename the team');
  if (change.retentionDays !== undefined) await requireTeamAdmin(ctx, teamId, "change the team's retention");
  if (change.legalHold !== undefined) {
    requireHoldSetter(ctx);
    if (!(await teamById(ctx.deps.db.writes, teamId))) throw teamNotFound(teamId);
  }
  await settings.write();
  if (change.retentionDays !== undefined || change.legalHold !== undefined) {
    await inTransaction(ctx.deps.db, ctx.guard, async (tx) => {
      await setTeamPolicy(tx, teamId, change);
      await auditChange(ctx, tx, change, { type: 'team', id: teamId });
    });
  }
}
