/**
 * Deleting a user (the console's Users page; the rules are the instance administrators'). One
 * transaction, checks first: nothing is deleted when anything refuses.
 *
 * - 403 for anyone but an instance administrator (or the operator); 404 for an unknown user.
 * - 409 for deleting yourself, the last enabled administrator, or the last admin of a team (the
 *   team would be left with nobody to manage it: make another member an admin, or delete the
 *   team, first).
 * - 409 `Project is on legal hold` when any of their own projects is held (a team's hold holds
 *   the team's projects, which stay with the team anyway).
 *
 * Their own projects go exactly as a project's delete does (deleteLockedProject); their keys,
 * device tokens, connector grants (with their codes and refresh tokens), browser sessions, device
 * codes, reset links, webhooks, the share links they made, and their memberships go with the row.
 * Team projects, and the sessions they uploaded there, stay with the team.
 */
import { deleteOAuthOfUser } from '../data/oauth';
import { lockPersonalProjectIds } from '../data/projects';
import { lockMembershipsOf, withdrawInvitationsBy } from '../data/teams';
import { inTransaction } from '../data/transaction';
import { deleteUserRow, lockUserAndAdmins } from '../data/users';
import { AppError } from '../errors';
import { requireWriteAccess } from './access';
import { recordAudit } from './audit';
import { isUserCtx, type AnyCtx } from './context';
import { deleteLockedProject } from './projects';
import { refuseIfProjectHeld } from './retention';
import { requireAccountAdmin, userNotFound } from './users';
import { memberChanged } from './webhook-events';

interface DeletedUser {
  userId: string;
  /** How many of their own projects, and sessions in them, were deleted. */
  projects: number;
  sessions: number;
  /** The teams they were removed from. */
  teams: number;
}

export async function deleteUser(ctx: AnyCtx, userId: string): Promise<DeletedUser> {
  requireAccountAdmin(ctx);
  requireWriteAccess(ctx);
  if (isUserCtx(ctx) && userId === ctx.user.id) throw new AppError('CONFLICT', 'You cannot delete your own account', { userId });
  const guard = isUserCtx(ctx) ? ctx.guard : undefined;
  return inTransaction(ctx.deps.db, guard, async (tx) => {
    const rows = await lockUserAndAdmins(tx, userId);
    const user = rows.find((r) => r.id === userId);
    if (!user) throw userNotFound();
    if (user.role === 'admin' && !rows.some((r) => r.id !== userId && r.role === 'admin' && !r.disabledAt))
      throw new AppError('CONFLICT', 'This is the last administrator: make another user an administrator first', { userId });
    const memberships = await lockMembershipsOf(tx, userId);
    const alone = memberships.find((m) => m.role === 'admin' && m.admins <= 1);
    if (alone)
      throw new AppError('CONFLICT', `This user is the last admin of the team "${alone.name}": make another member an admin, or delete the team, first`, {
        userId,
        teamId: alone.teamId,
      });
    const projectIds = await lockPersonalProjectIds(tx, userId);
    // Every hold before the first deletion.
    for (const projectId of projectIds) await refuseIfProjectHeld(tx, projectId);

    let sessions = 0;
    for (const projectId of projectIds) sessions += (await deleteLockedProject(ctx, tx, projectId, userId)).sessionCount;
    for (const m of memberships) {
      if (m.role === 'admin') await withdrawInvitationsBy(tx, m.teamId, userId, new Date());
      await memberChanged(tx, ctx.deps.config, 'member.removed', { teamId: m.teamId, userId, role: m.role });
    }
    await deleteOAuthOfUser(tx, userId);
    const detail = { email: user.email, role: user.role, projects: projectIds.length, sessions, teams: memberships.length };
    await recordAudit(ctx, { action: 'user.delete', target: { type: 'user', id: userId }, detail }, tx);
    await deleteUserRow(tx, userId);
    return { userId, projects: projectIds.length, sessions, teams: memberships.length };
  });
}
