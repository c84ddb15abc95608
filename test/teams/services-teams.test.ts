/**
 * The team rules, pinned at the service layer (no HTTP): who may manage a team, that a team never
 * loses its last admin, that a team owning projects is not deleted, and the invitation rules (one
 * use, the email it names, withdrawn with its maker's admin role).
 */
import { createProject } from '../../src/services/projects';
import {
  acceptInvitation,
  addMember,
  createInvitation,
  createTeam,
  deleteTeam,
  getTeam,
  INVALID_INVITATION,
  invitationsSeenBy,
  LAST_ADMIN,
  removeMember,
  renameTeam,
  revokeInvitation,
  setMemberRole,
  WITHDRAWN_INVITATION,
} from '../../src/services/teams';
import { again, failure, startServices, type ServiceHarness, type ServiceUser } from '../support/services';

const BASE = 'http://archive.test';
let h: ServiceHarness;
let admin: ServiceUser;
let member: ServiceUser;
let outsider: ServiceUser;

const tokenOf = (url: string) => new URL(url).searchParams.get('token')!;
const roles = async (ctx: ServiceUser, teamId: string) =>
  Object.fromEntries((await getTeam(again(ctx), teamId)).members.map((m) => [m.user.id, m.role])) as Record<string, string>;

beforeAll(async () => {
  h = await startServices();
  [admin, member, outsider] = await Promise.all(['admin', 'member', 'outsider'].map((n) => h.user(n)));
});
afterAll(() => h?.close());

async function team(name = 'Team'): Promise<string> {
  const t = await createTeam(again(admin), { name });
  await addMember(again(admin), t.id, { email: member.email, role: 'member' });
  return t.id;
}

describe('managing a team', () => {
  test('its admins rename it and manage members; a member or an outsider may not', async () => {
    const id = await team();
    expect((await renameTeam(again(admin), id, { name: 'Renamed' })).name).toBe('Renamed');
    const f = await failure(renameTeam(again(member), id, { name: 'Mine' }));
    expect(f.code).toBe('FORBIDDEN');
    expect(f.message).toMatch(/rename the team/);
    expect((await failure(addMember(again(member), id, { email: outsider.email, role: 'member' }))).code).toBe('FORBIDDEN');
    expect((await failure(getTeam(again(outsider), id))).code).toMatch(/^(FORBIDDEN|NOT_FOUND)$/);
  });

  test('adding someone twice is a conflict; an unknown email is not found', async () => {
    const id = await team();
    expect(await failure(addMember(again(admin), id, { email: member.email, role: 'viewer' }))).toEqual({
      code: 'CONFLICT',
      message: 'Already a member of this team',
    });
    expect(await failure(addMember(again(admin), id, { email: 'nobody@example.test', role: 'member' }))).toEqual({
      code: 'NOT_FOUND',
      message: 'No user with that email',
    });
  });

  test('a member may leave; removing someone else takes an admin', async () => {
    const id = await team();
    expect((await failure(removeMember(again(member), id, admin.user.id))).code).toBe('FORBIDDEN');
    await removeMember(again(member), id, member.user.id);
    expect(Object.keys(await roles(admin, id))).toEqual([admin.user.id]);
  });
});

describe('a read-only key', () => {
  test('changes nothing of a team: members, roles, invitations, the team itself', async () => {
    const id = await team();
    const ro = (ctx: ServiceUser): ServiceUser => ({ ...ctx, user: { ...ctx.user, readOnly: true } });
    const READ_ONLY = { code: 'FORBIDDEN', message: 'This key is read-only' };
    const { invitation, url } = await createInvitation(again(admin), id, { role: 'member' }, BASE);
    const joiner = await h.user('read-only-joiner');
    expect(await failure(setMemberRole(ro(admin), id, member.user.id, { role: 'admin' }))).toEqual(READ_ONLY);
    expect(await failure(removeMember(ro(admin), id, member.user.id))).toEqual(READ_ONLY);
    expect(await failure(removeMember(ro(member), id, member.user.id))).toEqual(READ_ONLY);
    expect(await failure(createInvitation(ro(admin), id, { role: 'member' }, BASE))).toEqual(READ_ONLY);
    expect(await failure(revokeInvitation(ro(admin), id, invitation.id))).toEqual(READ_ONLY);
    expect(await failure(acceptInvitation(ro(joiner), { token: tokenOf(url) }))).toEqual(READ_ONLY);
    expect(await failure(deleteTeam(ro(admin), id))).toEqual(READ_ONLY);
    expect(await roles(admin, id)).toEqual({ [admin.user.id]: 'admin', [member.user.id]: 'member' });
    expect((await invitationsSeenBy(again(admin), id)).map((i) => i.id)).toEqual([invitation.id]);
  });
});

describe('a team keeps an admin', () => {
  test('the last admin can neither step down nor leave; with a second admin, either can', async () => {
    const id = await team();
    expect(await failure(setMemberRole(again(admin), id, admin.user.id, { role: 'member' }))).toEqual({ code: 'CONFLICT', message: LAST_ADMIN });
    expect(await failure(removeMember(again(admin), id, admin.user.id))).toEqual({ code: 'CONFLICT', message: LAST_ADMIN });
    await setMemberRole(again(admin), id, member.user.id, { role: 'admin' });
    await setMemberRole(again(admin), id, admin.user.id, { role: 'member' });
    expect(await roles(member, id)).toEqual({ [admin.user.id]: 'member', [member.user.id]: 'admin' });
  });

  test('two demotions at once leave one admin, never none', async () => {
    const id = await team();
    await setMemberRole(again(admin), id, member.user.id, { role: 'admin' });
    const results = await Promise.allSettled([
      setMemberRole(again(admin), id, member.user.id, { role: 'member' }),
      setMemberRole(again(member), id, admin.user.id, { role: 'member' }),
    ]);
    expect(results.filter((r) => r.status === 'fulfilled').length).toBe(1);
    expect(Object.values(await roles(admin, id)).filter((r) => r === 'admin').length).toBe(1);
  });

  test('a team that owns a project is not deleted; an empty one is', async () => {
    const id = await team();
    await createProject(again(admin), { name: 'Kept', teamId: id });
    expect(await failure(deleteTeam(again(admin), id))).toEqual({ code: 'CONFLICT', message: "Move or delete the team's 1 project first" });
    const empty = await team('Empty');
    expect((await failure(deleteTeam(again(member), empty))).code).toBe('FORBIDDEN');
    await deleteTeam(again(admin), empty);
    expect((await failure(getTeam(again(admin), empty))).code).toBe('NOT_FOUND');
  });
});

describe('invitations', () => {
  test('only admins invite, and only admins see the open invitations', async () => {
    const id = await team();
    expect((await failure(createInvitation(again(member), id, { role: 'member' }, BASE))).code).toBe('FORBIDDEN');
    const { invitation } = await createInvitation(again(admin), id, { role: 'viewer' }, BASE);
    expect((await invitationsSeenBy(again(admin), id)).map((i) => i.id)).toEqual([invitation.id]);
    expect(await invitationsSeenBy(again(member), id)).toEqual([]);
  });

  test('an invitation is used once, with its role', async () => {
    const id = await team();
    const joiner = await h.user('joiner');
    const late = await h.user('late');
    const { url } = await createInvitation(again(admin), id, { role: 'viewer' }, BASE);
    expect((await acceptInvitation(again(joiner), { token: tokenOf(url) })).id).toBe(id);
    expect((await roles(admin, id))[joiner.user.id]).toBe('viewer');
    expect(await failure(acceptInvitation(again(late), { token: tokenOf(url) }))).toEqual({ code: 'NOT_FOUND', message: INVALID_INVITATION });
  });

  test('an invitation for an email is refused to anyone else', async () => {
    const id = await team();
    const named = await h.user('named');
    const other = await h.user('other');
    const { url } = await createInvitation(again(admin), id, { role: 'member', email: named.email.toUpperCase() }, BASE);
    expect(await failure(acceptInvitation(again(other), { token: tokenOf(url) }))).toEqual({
      code: 'FORBIDDEN',
      message: 'This invitation is for another email address',
    });
    await acceptInvitation(again(named), { token: tokenOf(url) });
    expect((await roles(admin, id))[named.user.id]).toBe('member');
  });

  test("an admin's invitations die when they stop being an admin", async () => {
    const id = await team();
    await setMemberRole(again(admin), id, member.user.id, { role: 'admin' });
    const { url } = await createInvitation(again(member), id, { role: 'admin' }, BASE);
    await setMemberRole(again(admin), id, member.user.id, { role: 'member' });
    const joiner = await h.user('too-late');
    expect(await failure(acceptInvitation(again(joiner), { token: tokenOf(url) }))).toEqual({ code: 'NOT_FOUND', message: WITHDRAWN_INVITATION });
    expect((await roles(admin, id))[joiner.user.id]).toBeUndefined();
  });
});
