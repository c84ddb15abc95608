/** The teams store: every statement on `teams`, `team_members` and `team_invitations`. */
import type { TeamInvitationModel, TeamMemberModel, TeamModel, UserModel } from '../generated/prisma/models';
import { marks, type Sql } from './sql';
import type { DriverRow } from '../domain/driver-row';

/** A team's row (prisma/schema.prisma's `Team`, as the driver returns it). */
export type TeamRow = Pick<DriverRow<TeamModel>, 'id' | 'name' | 'createdAt'>;

/** A user's membership: role "admin", "member" or "viewer". */
type MembershipRow = Pick<DriverRow<TeamMemberModel>, 'teamId' | 'role'>;

/** How many members and projects a team has (COUNT(*): numbers, src/data/sql.ts). */
export interface TeamCounts {
  memberCount: number;
  projectCount: number;
}

/** A team with the reader's role in it and its counts. */
export type TeamListRow = TeamRow & Pick<MembershipRow, 'role'> & TeamCounts & Pick<DriverRow<TeamModel>, 'retentionDays' | 'legalHold'>;

/** A member with their email and name. */
export type MemberRow = Pick<DriverRow<TeamMemberModel>, 'userId' | 'role' | 'joinedAt'> & Pick<DriverRow<UserModel>, 'email' | 'name'>;

/** An invitation's row (prisma/schema.prisma's `TeamInvitation`): every column. */
export type InvitationRow = DriverRow<TeamInvitationModel>;

/**
 * The memberships a credential's statement read with it (one row per membership, LEFT JOIN on
 * team_members in teamId order: one row with a null teamId when there is none) as `teamId:role`
 * pairs joined by commas ('' for none): what AuthUser.memberships carries.
 */
export function membershipPairs(rows: ReadonlyArray<{ teamId: string | null; teamRole: string | null }>): string {
  return rows[0]?.teamId == null ? '' : rows.map((r) => `${r.teamId}:${r.teamRole}`).join(',');
}

/** The user's memberships (read on every request that needs them: never cached across requests). */
export function membershipsOfUser(db: Sql, userId: string): Promise<MembershipRow[]> {
  return db.query<MembershipRow>('SELECT teamId, role FROM team_members WHERE userId = ? ORDER BY teamId', userId);
}

/** The user's teams with their role and counts, by name. */
export function teamsOfUser(db: Sql, userId: string): Promise<TeamListRow[]> {
  return db.query<TeamListRow>(
    `SELECT t.id, t.name, t.createdAt, t.retentionDays, t.legalHold, m.role,
            (SELECT COUNT(*) FROM team_members x WHERE x.teamId = t.id) AS memberCount,
            (SELECT COUNT(*) FROM projects p WHERE p.ownerId = t.id) AS projectCount
       FROM team_members m JOIN teams t ON t.id = m.teamId
      WHERE m.userId = ? ORDER BY t.name, t.id`,
    userId,
  );
}

/** One team with its counts and the user's role in it (null: not a member). */
export async function teamSeenBy(db: Sql, userId: string, teamId: string): Promise<(Omit<TeamListRow, 'role'> & { role: string | null }) | undefined> {
  const rows = await db.query<Omit<TeamListRow, 'role'> & { role: string | null }>(
    `SELECT t.id, t.name, t.createdAt, t.retentionDays, t.legalHold, m.role,
            (SELECT COUNT(*) FROM team_members x WHERE x.teamId = t.id) AS memberCount,
            (SELECT COUNT(*) FROM projects p WHERE p.ownerId = t.id) AS projectCount
       FROM teams t LEFT JOIN team_members m ON m.teamId = t.id AND m.userId = ?
      WHERE t.id = ?`,
    userId,
    teamId,
  );
  return rows[0];
}

/** Every team with its member and project counts (the admin CLI). */
export function allTeams(db: Sql): Promise<Array<TeamRow & TeamCounts>> {
  return db.query(
    `SELECT t.id, t.name, t.createdAt,
            (SELECT COUNT(*) FROM team_members x WHERE x.teamId = t.id) AS memberCount,
            (SELECT COUNT(*) FROM projects p WHERE p.ownerId = t.id) AS projectCount
       FROM teams t ORDER BY t.name, t.id`,
  );
}

export async function teamById(db: Sql, teamId: string): Promise<TeamRow | undefined> {
  return (await db.query<TeamRow>('SELECT id, name, createdAt FROM teams WHERE id = ?', teamId))[0];
}

/** Teams among `ids`, by id (GraphQL's loader). */
export function teamsByIds(db: Sql, ids: readonly string[]): Promise<TeamRow[]> {
  if (ids.length === 0) return Promise.resolve([]);
  return db.query<TeamRow>(`SELECT id, name, createdAt FROM teams WHERE id IN (${ids.map(() => '?').join(', ')})`, ...ids);
}

export async function insertTeam(db: Sql, t: TeamRow): Promise<void> {
  await db.execute('INSERT INTO teams (id, name, createdAt) VALUES (?, ?, ?)', t.id, t.name, t.createdAt);
}

export async function renameTeam(db: Sql, teamId: string, name: string): Promise<void> {
  await db.execute('UPDATE teams SET name = ? WHERE id = ?', name, teamId);
}

/** Deletes the team (members and invitations cascade; keys and device codes bound to it become personal). */
export async function deleteTeamRow(tx: Sql, teamId: string): Promise<void> {
  await tx.execute('DELETE FROM teams WHERE id = ?', teamId);
}

/** The team row locked for the rest of the transaction (membership changes of one team run one at a time). */
export async function lockTeam(tx: Sql, teamId: string): Promise<boolean> {
  return (await tx.query('SELECT id FROM teams WHERE id = ? FOR UPDATE', teamId)).length > 0;
}

export function membersOf(db: Sql, teamId: string): Promise<MemberRow[]> {
  return db.query<MemberRow>(
    `SELECT m.userId, u.email, u.name, m.role, m.joinedAt FROM team_members m JOIN users u ON u.id = m.userId
      WHERE m.teamId = ? ORDER BY m.joinedAt, u.email`,
    teamId,
  );
}

export async function memberOf(db: Sql, teamId: string, userId: string): Promise<MemberRow | undefined> {
  const rows = await db.query<MemberRow>(
    `SELECT m.userId, u.email, u.name, m.role, m.joinedAt FROM team_members m JOIN users u ON u.id = m.userId
      WHERE m.teamId = ? AND m.userId = ?`,
    teamId,
    userId,
  );
  return rows[0];
}

export async function adminCount(db: Sql, teamId: string): Promise<number> {
  const [r] = await db.query<{ n: number }>("SELECT COUNT(*) AS n FROM team_members WHERE teamId = ? AND role = 'admin'", teamId);
  return r.n;
}

/**
 * The user's memberships with each team's name and number of admins, the teams' rows locked for
 * the rest of the transaction (as lockTeam: membership changes of a team run one at a time).
 */
export function lockMembershipsOf(tx: Sql, userId: string): Promise<Array<{ teamId: string; name: string; role: string; admins: number }>> {
  return tx.query(
    `SELECT t.id AS teamId, t.name, m.role,
            (SELECT COUNT(*) FROM team_members a WHERE a.teamId = t.id AND a.role = 'admin') AS admins
       FROM team_members m JOIN teams t ON t.id = m.teamId
      WHERE m.userId = ? ORDER BY t.id FOR UPDATE`,
    userId,
  );
}

/** Adds the member; returns false when they already are one. */
export async function insertMember(db: Sql, teamId: string, userId: string, role: string, joinedAt: Date): Promise<boolean> {
  const n = await db.execute('INSERT IGNORE INTO team_members (teamId, userId, role, joinedAt) VALUES (?, ?, ?, ?)', teamId, userId, role, joinedAt);
  return n > 0;
}

export async function setMemberRole(db: Sql, teamId: string, userId: string, role: string): Promise<void> {
  await db.execute('UPDATE team_members SET role = ? WHERE teamId = ? AND userId = ?', role, teamId, userId);
}

export async function deleteMember(db: Sql, teamId: string, userId: string): Promise<void> {
  await db.execute('DELETE FROM team_members WHERE teamId = ? AND userId = ?', teamId, userId);
}

// ---------------------------------------------------------------------------------------------
// Invitations

const INVITATION_COLUMNS = 'id, teamId, tokenHash, role, email, createdBy, createdAt, expiresAt, usedAt, usedBy, withdrawnAt';

/**
 * An invitation that can still be used: not used, not withdrawn, not expired, and its creator is an
 * admin of its team right now (an invitation dies with its creator's membership or admin role).
 */
const USABLE = `usedAt IS NULL AND withdrawnAt IS NULL AND expiresAt > ?
  AND EXISTS (SELECT 1 FROM team_members m WHERE m.teamId = team_invitations.teamId AND m.userId = team_invitations.createdBy AND m.role = 'admin')`;

export async function insertInvitation(db: Sql, i: InvitationRow): Promise<void> {
  await db.execute(
    `INSERT INTO team_invitations (${INVITATION_COLUMNS}) VALUES (${marks(11)})`,
    i.id, i.teamId, i.tokenHash, i.role, i.email, i.createdBy, i.createdAt, i.expiresAt, i.usedAt, i.usedBy, i.withdrawnAt,
  );
}

/** The team's invitations that can still be used, newest first. */
export function openInvitations(db: Sql, teamId: string, now: Date): Promise<InvitationRow[]> {
  return db.query<InvitationRow>(`SELECT ${INVITATION_COLUMNS} FROM team_invitations WHERE teamId = ? AND ${USABLE} ORDER BY createdAt DESC, id`, teamId, now);
}

export async function invitationByTokenHash(db: Sql, tokenHash: string): Promise<InvitationRow | undefined> {
  return (await db.query<InvitationRow>(`SELECT ${INVITATION_COLUMNS} FROM team_invitations WHERE tokenHash = ?`, tokenHash))[0];
}

/**
 * Spends the invitation if it can still be used; true for the one caller that did. A conditional
 * update: of any number of concurrent spends one wins, and a spend racing a withdrawal (which
 * updates the same row) sees it.
 */
export async function spendInvitation(tx: Sql, id: string, userId: string, now: Date): Promise<boolean> {
  const n = await tx.execute(`UPDATE team_invitations SET usedAt = ?, usedBy = ? WHERE id = ? AND ${USABLE}`, now, userId, id, now);
  return n > 0;
}

/** Withdraws the open invitations `userId` made for the team (they left it or are no longer its admin). */
export async function withdrawInvitationsBy(tx: Sql, teamId: string, userId: string, now: Date): Promise<void> {
  await tx.execute('UPDATE team_invitations SET withdrawnAt = ? WHERE teamId = ? AND createdBy = ? AND usedAt IS NULL AND withdrawnAt IS NULL', now, teamId, userId);
}

/** Deletes one of the team's invitations; returns whether there was one. */
export async function deleteInvitation(db: Sql, teamId: string, id: string): Promise<boolean> {
  return (await db.execute('DELETE FROM team_invitations WHERE teamId = ? AND id = ?', teamId, id)) > 0;
}
