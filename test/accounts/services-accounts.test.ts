/**
 * The account rules, pinned at the service layer (no HTTP): who manages users, that an admin cannot
 * disable themselves, what an unknown user is, the sign-up switch, and the operator and the public
 * as kinds of caller.
 */
import { addUser, createResetLink, currentAccount, signUp } from '../../src/services/accounts';
import type { Ctx } from '../../src/services/context';
import { createApiKey, listApiKeys, revokeApiKey } from '../../src/services/keys';
import { addMember, createInvitation, createTeam } from '../../src/services/teams';
import { createUser, getAdminUser, listUsers, setUserDisabled } from '../../src/services/users';
import { ACCOUNT_ADMINS_ONLY, again, failure, refused, startServices, type ServiceHarness, type ServiceUser } from '../support/services';

let h: ServiceHarness;
let admin: ServiceUser;
let member: ServiceUser;
const PASSWORD = 'correct horse battery';
const UNKNOWN = '00000000-0000-4000-8000-000000000000';

/** The AppError a call fails with: its code and message. */
const READ_ONLY = { code: 'FORBIDDEN', message: 'This key is read-only' };

beforeAll(async () => {
  h = await startServices();
  admin = await h.user('admin', { role: 'admin' });
  member = await h.user('member');
});
afterAll(() => h?.close());

describe('user management is for admins and the operator', () => {
  test('an admin and the operator list users; a member and the public are refused', async () => {
    expect((await listUsers(admin)).map((u) => u.id)).toEqual(expect.arrayContaining([admin.user.id, member.user.id]));
    expect((await listUsers(h.operator)).length).toBeGreaterThanOrEqual(2);
    expect(await failure(listUsers(member))).toEqual(ACCOUNT_ADMINS_ONLY);
    expect(await failure(listUsers(h.anonymous))).toEqual(ACCOUNT_ADMINS_ONLY);
  });

  test('a member adding a user is refused before the body is looked at', async () => {
    expect(await failure(addUser(member, { email: 'not an email' }, 'http://x.test'))).toEqual(ACCOUNT_ADMINS_ONLY);
    expect(await failure(createUser(member, `m-${Date.now()}@example.test`))).toEqual(ACCOUNT_ADMINS_ONLY);
  });

  test('an admin adds a user without a password and gets a reset link for them', async () => {
    const email = `added-${Date.now()}@example.test`;
    const r = await addUser(admin, { email, name: 'Added' }, 'http://x.test/');
    expect(r.user).toMatchObject({ email, name: 'Added', role: 'member', disabledAt: null });
    expect(r.link).toMatch(/^http:\/\/x\.test\/reset-password\?token=/);
    expect((await getAdminUser(admin, r.user.id)).email).toBe(email);
  });

  test('a reset link for an unknown user is 404 `User not found`; members may not make one', async () => {
    expect(await failure(createResetLink(admin, UNKNOWN, 'http://x.test'))).toEqual({ code: 'NOT_FOUND', message: 'User not found' });
    expect(await failure(createResetLink(member, admin.user.id, 'http://x.test'))).toEqual(ACCOUNT_ADMINS_ONLY);
    expect((await createResetLink(h.operator, member.user.id, 'http://x.test')).link).toContain('/reset-password?token=');
  });

  test('an admin cannot disable their own account; others yes, and enable them again; unknown → 404', async () => {
    expect(await failure(setUserDisabled(admin, admin.user.id, true))).toEqual({ code: 'VALIDATION_ERROR', message: 'You cannot disable your own account' });
    const other = await h.user('other');
    expect((await setUserDisabled(admin, other.user.id, true)).disabledAt).not.toBeNull();
    expect((await setUserDisabled(admin, other.user.id, false)).disabledAt).toBeNull();
    expect(await failure(setUserDisabled(admin, UNKNOWN, true))).toEqual({ code: 'NOT_FOUND', message: 'User not found' });
    expect(await failure(setUserDisabled(member, other.user.id, true))).toEqual(ACCOUNT_ADMINS_ONLY);
    // The operator has no account of its own: it may disable any.
    expect((await setUserDisabled(h.operator, other.user.id, true)).disabledAt).not.toBeNull();
  });

  test('an admin signed in with a read-only key changes nothing', async () => {
    const readOnly: Ctx = { ...admin, user: { ...admin.user, readOnly: true } };
    expect(await listUsers(readOnly)).not.toHaveLength(0);
    expect(await failure(addUser(readOnly, { email: `ro-${Date.now()}@example.test` }, 'http://x.test'))).toEqual(READ_ONLY);
    expect(await failure(setUserDisabled(readOnly, member.user.id, true))).toEqual(READ_ONLY);
  });
});

describe('sign-up', () => {
  test('with sign-up off (the default) it is refused, and nothing is created', async () => {
    const email = `off-${Date.now()}@example.test`;
    expect(await failure(signUp(h.anonymous, { email, password: PASSWORD }))).toEqual({ code: 'FORBIDDEN', message: 'Sign-up is disabled' });
    expect((await listUsers(h.operator)).some((u) => u.email === email)).toBe(false);
  });

  test('an invitation lets its holder sign up with sign-up off, joins the team, and signs them in', async () => {
    const team = await createTeam(admin, { name: 'Invited' });
    const { url } = await createInvitation(admin, team.id, { role: 'viewer' }, 'http://x.test');
    const invitationToken = new URL(url).searchParams.get('token')!;
    const email = `invited-${Date.now()}@example.test`;
    let counted = 0;
    const { user, session } = await signUp(h.anonymous, { email, password: PASSWORD, invitationToken }, () => {
      counted++;
      return Promise.resolve();
    });
    expect(user).toMatchObject({ email, role: 'member' });
    expect(counted).toBe(1);
    expect(await currentAccount(h.anonymous, session.token)).toEqual({ user, csrfToken: session.csrfToken });
    const members = await h.deps.db.reads.query<{ role: string }>('SELECT role FROM team_members WHERE teamId = ? AND userId = ?', team.id, user.id);
    expect(members.map((m) => m.role)).toEqual(['viewer']);
  });

  test('with sign-up on, anyone makes a member account and is signed in', async () => {
    const on = await startServices({ SIGNUP_ENABLED: 'true' });
    try {
      const email = `on-${Date.now()}@example.test`;
      const { user, session } = await signUp(on.anonymous, { email, name: 'On', password: PASSWORD });
      expect(user).toEqual({ id: expect.any(String), email, name: 'On', role: 'member' });
      expect((await currentAccount(on.anonymous, session.token))?.user.id).toBe(user.id);
    } finally {
      await on.close();
    }
  });
});

describe('keys and teams: one function whoever calls', () => {
  test('a user makes, lists and revokes their own keys; another user cannot revoke them', async () => {
    const { key } = await createApiKey(member, { name: 'mine' }, admin.user.id);
    expect(key.userId).toBe(member.user.id);
    expect((await listApiKeys(member)).map((k) => k.id)).toContain(key.id);
    expect(await failure(revokeApiKey(admin, key.id))).toEqual({ code: 'NOT_FOUND', message: 'API key not found' });
    expect((await revokeApiKey(member, key.id)).revokedAt).not.toBeNull();
  });

  test('the operator makes a key for a user it names, and may revoke any', async () => {
    const { key, token } = await createApiKey(h.operator, { name: 'cli', scopes: ['read'] }, member.user.id);
    expect(key).toMatchObject({ userId: member.user.id, scopes: ['read'] });
    expect(token).toEqual(expect.any(String));
    expect((await revokeApiKey(h.operator, key.id)).revokedAt).not.toBeNull();
    expect(await failure(createApiKey(h.operator, { name: 'nobody' }))).toEqual({ code: 'VALIDATION_ERROR', message: 'Missing required field: userId' });
  });

  test('a read-only key makes no key and no team', async () => {
    const readOnly: Ctx = { ...member, user: { ...member.user, readOnly: true } };
    expect(await failure(createApiKey(readOnly, { name: 'more' }))).toEqual(READ_ONLY);
    expect(await failure(createTeam(readOnly, { name: 'RO' }))).toEqual(READ_ONLY);
  });

  test('the operator creates a team for a named admin and adds members; a team member who is no admin cannot', async () => {
    const team = await createTeam(h.operator, { name: 'Ops' }, admin.user.id);
    expect(team).toMatchObject({ name: 'Ops', role: 'admin', memberCount: 1 });
    expect((await addMember(h.operator, team.id, { email: member.email, role: 'member' })).role).toBe('member');
    const third = await h.user('third');
    expect(await failure(addMember(again(member), team.id, { email: third.email, role: 'viewer' }))).toEqual(refused("Only the team's admins can add members"));
    expect(await failure(addMember(h.operator, UNKNOWN, { email: third.email, role: 'viewer' }))).toEqual({ code: 'NOT_FOUND', message: 'Team not found' });
  });
});
