/**
 * Teams: creating, renaming and deleting them, their members and roles, invitations. Who may do
 * what is src/services/access.ts's rule (a team the caller is not in is a 404 `Team not found`).
 */
import crypto from 'node:crypto';

import { projectCountOf } from '../data/projects';
import * as store from '../data/teams';
import { inTransaction } from '../data/transaction';
import { userByEmail, userById } from '../data/users';
import { INVITATION_TTL_MS, TEAM_ROLES, type TeamRole } from '../domain/teams';
import { sha256 } from '../domain/tokens';
import type { Sql } from '../data/sql';
import { AppError, invalid, MESSAGES } from '../errors';
import { requireTeamAdmin, requireTeamMember, requireWriteAccess, teamNotFound, teamRole } from './access';
import { recordAudit } from './audit';
import { isUserCtx, type AnyCtx, type Ctx, type OperatorCtx } from './context';
import { body, choice, parseInput, text } from '../domain/inputs';
import { z } from 'zod';
import { retentionFields } from './retention-inputs';
import { changeTeamPolicy, refuseIfTeamHeld } from './retention';
import {
  presentInvitation,
  presentMember,
  presentTeam,
  presentTeamOverview,
  presentTeamSeenBy,
  type InvitationDto,
  type MemberDto,
  type TeamDto,
  type UpdatedTeamDto,
} from './presenters/team';
import { memberChanged } from './webhook-events';

export const TeamRoleInput = choice('role', TEAM_ROLES).meta({
  id: 'TeamRole',
  description: 'admin: everything of the team; member: reads, uploads, changes the sessions they uploaded; viewer: reads only.',
});
export const TeamNameInput = body({ name: text('name', 1, 100) }).meta({ id: 'TeamName' });
export const AddMemberInput = body({ email: text('email', 1, 320), role: TeamRoleInput }).meta({ id: 'AddTeamMember' });
export const MemberRoleInput = body({ role: TeamRoleInput }).meta({ id: 'TeamMemberRole' });
export const InvitationInput = body({
  role: TeamRoleInput,
  email: z
    .string({ error: 'Invalid value for email: expected a string' })
    .max(320)
    .nullish()
    .meta({ description: 'Only this email may accept it; absent: anyone holding the link.' }),
}).meta({ id: 'CreateTeamInvitation' });
export const InvitationTokenInput = body({ token: text('token', 1, 200) }).meta({ id: 'TeamInvitationToken' });

export const LAST_ADMIN = 'A team needs at least one admin';

/** The caller's teams, by name. */
export async function listTeams(ctx: Ctx): Promise<TeamDto[]> {
  return (await store.teamsOfUser(ctx.deps.db.reads, ctx.user.id)).map(presentTeam);
}

/** One of the caller's teams (404 `Team not found` for anyone else). */
export async function getTeamSummary(ctx: Ctx, teamId: string): Promise<TeamDto> {
  return summaryFor(ctx.deps.db.reads, ctx.user.id, teamId);
}

/** The team as one of its members sees it. */
async function summaryFor(db: Sql, userId: string, teamId: string): Promise<TeamDto> {
  const t = (await store.teamsOfUser(db, userId)).find((x) => x.id === teamId);
  if (!t) throw teamNotFound(teamId);
  return presentTeam(t);
}

export async function getTeam(ctx: Ctx, teamId: string): Promise<{ team: TeamDto; members: MemberDto[] }> {
  await requireTeamMember(ctx, teamId);
  const [team, members] = await Promise.all([getTeamSummary(ctx, teamId), store.membersOf(ctx.deps.db.reads, teamId)]);
  return { team, members: members.map(presentMember) };
}

/**
 * Creates a team. A user creates it with themselves as its first admin (`TEAMS=admins`: instance
 * admins only); the operator (the admin CLI) names its first admin (`adminUserId`). The team as
 * its first admin sees it.
 */
export async function createTeam(ctx: Ctx | OperatorCtx, input: unknown, adminUserId?: string): Promise<TeamDto> {
  requireWriteAccess(ctx);
  const { name } = parseInput(TeamNameInput, input);
  if (isUserCtx(ctx) && ctx.deps.config.teams === 'admins' && ctx.user.role !== 'admin')
    throw new AppError('FORBIDDEN', 'Only administrators can create teams');
  const admin = isUserCtx(ctx) ? ctx.user.id : adminUserId;
  if (!admin) throw invalid('Missing required field: adminUserId');
  const id = crypto.randomUUID();
  const now = new Date();
  await inTransaction(ctx.deps.db, undefined, async (tx) => {
    await store.insertTeam(tx, { id, name, createdAt: now });
    await store.insertMember(tx, id, admin, 'admin', now);
    await recordAudit(ctx, { action: 'team.create', target: { type: 'team', id }, teamId: id, detail: { admin } }, tx);
  });
  return summaryFor(ctx.deps.db.writes, admin, id);
}

export const UpdateTeamInput = body({ name: text('name', 1, 100, { null: 'type' }).optional(), ...retentionFields })
  .check((ctx) => {
    const v = ctx.value;
    if (v.name === undefined && v.retentionDays === undefined && v.legalHold == null)
      ctx.issues.push({ code: 'custom', input: v, message: 'Nothing to update: send name, retentionDays or legalHold' });
  })
  .meta({ id: 'UpdateTeam', description: 'Any of `name` (admins), `retentionDays` (admins; null: not set), `legalHold` (instance administrators).' });

/**
 * Renames a team and changes its retention and legal hold (src/services/retention.ts says who
 * may: an instance administrator sets a hold on any team); the team as the caller sees it now.
 */
export async function updateTeam(ctx: Ctx, teamId: string, input: unknown): Promise<UpdatedTeamDto> {
  const { name, ...policy } = parseInput(UpdateTeamInput, input);
  await changeTeamPolicy(ctx, teamId, policy, {
    changed: name !== undefined,
    write: async () => {
      if (name !== undefined) await store.renameTeam(ctx.deps.db.writes, teamId, name);
    },
  });
  const t = await store.teamSeenBy(ctx.deps.db.writes, ctx.user.id, teamId);
  if (!t) throw teamNotFound(teamId);
  return presentTeamSeenBy(t);
}

/**
 * GraphQL's renameTeam and updateTeam: as updateTeam, for a member of the team (the result is
 * the team with the caller's role in it; anyone else → 404 `Team not found`).
 */
export async function renameTeam(ctx: Ctx, teamId: string, input: unknown): Promise<TeamDto> {
  await requireTeamMember(ctx, teamId);
  await updateTeam(ctx, teamId, input);
  return summaryFor(ctx.deps.db.writes, ctx.user.id, teamId);
}

/** Deletes a team that owns no project (409 with their count otherwise). */
export async function deleteTeam(ctx: Ctx, teamId: string): Promise<void> {
  requireWriteAccess(ctx);
  await requireTeamAdmin(ctx, teamId, 'delete the team');
  await inTransaction(ctx.deps.db, ctx.guard, async (tx) => {
    if (!(await store.lockTeam(tx, teamId))) throw teamNotFound(teamId);
    await refuseIfTeamHeld(tx, teamId);
    const n = await projectCountOf(tx, teamId);
    if (n > 0) throw new AppError('CONFLICT', `Move or delete the team's ${n} project${n === 1 ? '' : 's'} first`, { teamId });
    await store.deleteTeamRow(tx, teamId);
    await recordAudit(ctx, { action: 'team.delete', target: { type: 'team', id: teamId }, teamId }, tx);
  });
}

/**
 * Adds an existing user (by email) with a role: an admin of the team, or the operator (a team
 * that does not exist → 404 `Team not found`); an existing member → 409.
 */
export async function addMember(ctx: Ctx | OperatorCtx, teamId: string, input: unknown): Promise<MemberDto> {
  const { email, role } = parseInput(AddMemberInput, input);
  const { db } = ctx.deps;
  if (isUserCtx(ctx)) {
    requireWriteAccess(ctx);
    await requireTeamAdmin(ctx, teamId, 'add members');
  } else if (!(await store.teamById(db.writes, teamId))) throw teamNotFound(teamId);
  const user = await userByEmail(db.writes, email);
  if (!user) throw new AppError('NOT_FOUND', 'No user with that email');
  await inTransaction(db, undefined, async (tx) => {
    if (!(await store.insertMember(tx, teamId, user.id, role, new Date()))) {
      throw new AppError('CONFLICT', 'Already a member of this team', { teamId, userId: user.id });
    }
    await memberChanged(tx, ctx.deps.config, 'member.added', { teamId, userId: user.id, role });
  });
  await recordAudit(ctx, { action: 'member.add', target: { type: 'user', id: user.id }, teamId, detail: { role } });
  return presentMember((await store.memberOf(db.writes, teamId, user.id))!);
}

/**
 * A role change or a removal, one at a time per team (the team row is locked), so that two
 * concurrent demotions can never leave it without an admin. A member who is no longer an admin
 * afterwards loses the open invitations they made.
 */
async function changeMember(ctx: Ctx, teamId: string, userId: string, role: TeamRole | null): Promise<MemberDto | null> {
  return inTransaction(ctx.deps.db, ctx.guard, async (tx) => {
    if (!(await store.lockTeam(tx, teamId))) throw teamNotFound(teamId);
    const member = await store.memberOf(tx, teamId, userId);
    if (!member) throw new AppError('NOT_FOUND', 'Member not found', { teamId, userId });
    if (member.role === 'admin' && role !== 'admin' && (await store.adminCount(tx, teamId)) <= 1) {
      throw new AppError('CONFLICT', LAST_ADMIN, { teamId });
    }
    // Their invitations die with their admin role (a removed admin must not come back through one).
    if (role !== 'admin') await store.withdrawInvitationsBy(tx, teamId, userId, new Date());
    if (role === null) {
      await store.deleteMember(tx, teamId, userId);
      await recordAudit(ctx, { action: 'member.remove', target: { type: 'user', id: userId }, teamId, detail: { role: member.role } }, tx);
      await memberChanged(tx, ctx.deps.config, 'member.removed', { teamId, userId, role: member.role });
      return null;
    }
    await store.setMemberRole(tx, teamId, userId, role);
    await recordAudit(ctx, { action: 'member.role', target: { type: 'user', id: userId }, teamId, detail: { from: member.role, to: role } }, tx);
    return { ...presentMember(member), role };
  });
}

export async function setMemberRole(ctx: Ctx, teamId: string, userId: string, input: unknown): Promise<MemberDto> {
  requireWriteAccess(ctx);
  const { role } = parseInput(MemberRoleInput, input);
  await requireTeamAdmin(ctx, teamId, "change members' roles");
  return (await changeMember(ctx, teamId, userId, role))!;
}

/** Removes a member: an admin, or the member leaving. */
export async function removeMember(ctx: Ctx, teamId: string, userId: string): Promise<void> {
  requireWriteAccess(ctx);
  if (userId === ctx.user.id) await requireTeamMember(ctx, teamId);
  else await requireTeamAdmin(ctx, teamId, 'remove other members');
  await changeMember(ctx, teamId, userId, null);
}

// ---------------------------------------------------------------------------------------------
// Invitations: a one-time link `<base>/join?token=…`, valid 7 days, only its sha256 kept.

export async function createInvitation(ctx: Ctx, teamId: string, input: unknown, base: string): Promise<{ invitation: InvitationDto; url: string }> {
  requireWriteAccess(ctx);
  const { role, email } = parseInput(InvitationInput, input);
  await requireTeamAdmin(ctx, teamId, 'invite people');
  const token = crypto.randomBytes(32).toString('base64url');
  const now = new Date();
  const row: store.InvitationRow = {
    id: crypto.randomUUID(),
    teamId,
    tokenHash: sha256(token),
    role,
    email: email ? email.trim() : null,
    createdBy: ctx.user.id,
    createdAt: now,
    expiresAt: new Date(now.getTime() + INVITATION_TTL_MS),
    usedAt: null,
    usedBy: null,
    withdrawnAt: null,
  };
  await store.insertInvitation(ctx.deps.db.writes, row);
  return { invitation: presentInvitation(row), url: `${base}/join?token=${token}` };
}

export async function listInvitations(ctx: Ctx, teamId: string): Promise<InvitationDto[]> {
  await requireTeamAdmin(ctx, teamId, 'see its invitations');
  return (await store.openInvitations(ctx.deps.db.reads, teamId, new Date())).map(presentInvitation);
}

/** The team's open invitations as the caller sees them: all of them for an admin of the team, none for anyone else. */
export async function invitationsSeenBy(ctx: Ctx, teamId: string): Promise<InvitationDto[]> {
  return (await teamRole(ctx, teamId)) === 'admin' ? listInvitations(ctx, teamId) : [];
}

export async function revokeInvitation(ctx: Ctx, teamId: string, invitationId: string): Promise<void> {
  requireWriteAccess(ctx);
  await requireTeamAdmin(ctx, teamId, 'revoke invitations');
  if (!(await store.deleteInvitation(ctx.deps.db.writes, teamId, invitationId))) {
    throw new AppError('NOT_FOUND', 'Invitation not found', { teamId, invitationId });
  }
}

export const INVALID_INVITATION = 'Invalid or expired invitation';
export const WITHDRAWN_INVITATION = 'This invitation was withdrawn: whoever made it is no longer an admin of the team';

/** Why an invitation cannot be used (404), or null when it can. */
async function unusable(db: Sql, row: store.InvitationRow | undefined): Promise<AppError | null> {
  if (!row || row.usedAt || row.expiresAt.getTime() <= Date.now()) return new AppError('NOT_FOUND', INVALID_INVITATION);
  const creator = row.withdrawnAt ? null : await store.memberOf(db, row.teamId, row.createdBy);
  return creator?.role === 'admin' ? null : new AppError('NOT_FOUND', WITHDRAWN_INVITATION);
}

/** An open invitation by its token, with its team's name; else 404 `Invalid or expired invitation` (or withdrawn). */
export async function openInvitation(ctx: AnyCtx, token: string): Promise<store.InvitationRow & { teamName: string }> {
  const { db } = ctx.deps;
  const row = await store.invitationByTokenHash(db.writes, sha256(token));
  const team = row && (await store.teamById(db.writes, row.teamId));
  if (!team) throw new AppError('NOT_FOUND', INVALID_INVITATION);
  const refused = await unusable(db.writes, row);
  if (refused) throw refused;
  return { ...row, teamName: team.name };
}

/** What the /join page shows before anyone signs in: the team, the role, the email it is for. */
export async function describeInvitation(ctx: AnyCtx, input: unknown) {
  const { token } = parseInput(InvitationTokenInput, input);
  const i = await openInvitation(ctx, token);
  return { team: { id: i.teamId, name: i.teamName }, role: i.role as TeamRole, email: i.email, expiresAt: i.expiresAt.toISOString() };
}

/** The email an invitation is for, when it names one, must be the joining user's (case-insensitive). */
export function checkInvitationEmail(invitation: { email: string | null }, email: string): void {
  if (invitation.email && invitation.email.toLowerCase() !== email.toLowerCase()) {
    throw new AppError('FORBIDDEN', 'This invitation is for another email address');
  }
}

/**
 * Spends the invitation and adds the user with its role, in one transaction that spends it first:
 * of any number of concurrent joins one wins, and the others create nothing. `create` (sign-up)
 * inserts the new account in that transaction, after the spend, so one invitation makes at most
 * one account however many requests race.
 */
export async function joinWithInvitation(
  ctx: AnyCtx,
  token: string,
  user: { id: string; email: string },
  create?: (tx: Sql) => Promise<void>,
): Promise<{ teamId: string; role: TeamRole }> {
  const { db } = ctx.deps;
  const invitation = await openInvitation(ctx, token);
  checkInvitationEmail(invitation, user.email);
  const role = invitation.role as TeamRole;
  await inTransaction(db, undefined, async (tx) => {
    if (!(await store.spendInvitation(tx, invitation.id, user.id, new Date()))) {
      throw (await unusable(tx, await store.invitationByTokenHash(tx, invitation.tokenHash))) ?? new AppError('NOT_FOUND', INVALID_INVITATION);
    }
    await create?.(tx);
    if (!(await store.insertMember(tx, invitation.teamId, user.id, role, new Date()))) {
      throw new AppError('CONFLICT', 'You are already a member of this team', { teamId: invitation.teamId });
    }
    const event = { action: 'member.add', target: { type: 'user', id: user.id }, teamId: invitation.teamId, detail: { role, via: 'invitation' } } as const;
    await recordAudit(ctx, { ...event, actorUserId: user.id }, tx);
    await memberChanged(tx, ctx.deps.config, 'member.added', { teamId: invitation.teamId, userId: user.id, role });
  });
  return { teamId: invitation.teamId, role };
}

/** POST /teams/join {token}: the signed-in caller accepts an invitation. */
export async function acceptInvitation(ctx: Ctx, input: unknown): Promise<TeamDto> {
  requireWriteAccess(ctx);
  const { token } = parseInput(InvitationTokenInput, input);
  const me = await userById(ctx.deps.db.writes, ctx.user.id);
  if (!me) throw new AppError('UNAUTHENTICATED', MESSAGES.unauthenticated);
  const { teamId } = await joinWithInvitation(ctx, token, { id: me.id, email: me.email });
  return getTeamSummary(ctx, teamId);
}

/** The team's name, or null when there is no such team (the operator's view). */
export async function teamNameOf(ctx: OperatorCtx, teamId: string): Promise<string | null> {
  return (await store.teamById(ctx.deps.db.writes, teamId))?.name ?? null;
}

/** Every team (the operator's view). */
export async function allTeams(ctx: OperatorCtx) {
  return (await store.allTeams(ctx.deps.db.reads)).map(presentTeamOverview);
}
