/**
 * The device-login rules, pinned at the service layer (no HTTP): a code is spent once; it is
 * bound to a team only by someone who may create projects there; the device token it gives
 * derives from the credential that asked for it (no later than it, revoked with it); a refresh
 * gives an hour, never past the device token; a logout revokes the device session.
 */
import type { Ctx } from '../../src/services/context';
import { deviceLogin, deviceLogout, deviceRefresh, issueDeviceCode } from '../../src/services/device';
import { createApiKey, listApiKeys, revokeApiKey } from '../../src/services/keys';
import { addMember, createTeam } from '../../src/services/teams';
import { setUserDisabled } from '../../src/services/users';
import { again, failure, startServices, VIEWER_READS_ONLY, type ServiceHarness, type ServiceUser } from '../support/services';

let h: ServiceHarness;
let owner: ServiceUser;
const META = { hostname: 'laptop', client: 'specstory' };
const HOUR = 3_600_000;

beforeAll(async () => {
  h = await startServices();
  owner = await h.user('owner');
});
afterAll(() => h?.close());

const login = (code: string) => deviceLogin(h.anonymous, { device_code: code, ...META });
const bearer = (token: string) => `Bearer ${token}`;

test('a code is spent once: the second exchange is refused in the words the upload CLI shows', async () => {
  const { code } = await issueDeviceCode(again(owner), {});
  const first = await login(code);
  expect(first.user.email).toBe(owner.email);
  expect(await failure(login(code))).toEqual({ code: 'UNAUTHENTICATED', message: 'Device code has already been used' });
  expect(await failure(login('ZZZ-999'))).toEqual({ code: 'UNAUTHENTICATED', message: 'Invalid or expired device code' });
  // The device token is listed with the user's keys under the client's name.
  expect((await listApiKeys(owner)).map((k) => k.name)).toContain('specstory on laptop');
});

test('the dash and case of a code do not matter', async () => {
  const { code } = await issueDeviceCode(again(owner), {});
  const typed = `${code.slice(0, 3).toLowerCase()}-${code.slice(3).toLowerCase()}`;
  expect((await login(typed)).user.email).toBe(owner.email);
});

test('a code bound to a team: its admin or member may ask for one; a viewer may not, and to an outsider the team does not exist', async () => {
  const member = await h.user('member');
  const viewer = await h.user('viewer');
  const outsider = await h.user('outsider');
  const team = await createTeam(again(owner), { name: 'Device team' });
  await addMember(again(owner), team.id, { email: member.email, role: 'member' });
  await addMember(again(owner), team.id, { email: viewer.email, role: 'viewer' });
  await login((await issueDeviceCode(again(member), { teamId: team.id })).code);
  expect((await listApiKeys(member)).map((k) => k.teamId)).toEqual([team.id]);
  expect(await failure(issueDeviceCode(again(viewer), { teamId: team.id }))).toEqual(VIEWER_READS_ONLY);
  expect(await failure(issueDeviceCode(again(outsider), { teamId: team.id }))).toEqual({ code: 'NOT_FOUND', message: 'Team not found' });
});

test('a code asked for with a key gives a device token that ends with the key and is revoked with it', async () => {
  const key = (await createApiKey(again(owner), { name: 'source', expiresInDays: 2 })).key;
  const withKey: Ctx = { ...owner, user: { ...owner.user, keyId: key.id } };
  const device = await login((await issueDeviceCode(withKey, {})).code);
  expect(device.expiresAt).toBe(key.expiresAt);
  expect(await deviceRefresh(h.anonymous, bearer(device.refreshToken))).not.toBeNull();
  await revokeApiKey(again(owner), key.id);
  expect(await deviceRefresh(h.anonymous, bearer(device.refreshToken))).toBeNull();
});

test("a code asked for with a device access token: the device token ends no later than that token's hour", async () => {
  const session = await login((await issueDeviceCode(again(owner), {})).code);
  const device = (await listApiKeys(owner)).find((k) => k.expiresAt === session.expiresAt && !k.revokedAt)!;
  expect(Date.parse(device.expiresAt!) - Date.now()).toBeGreaterThan(365 * 24 * HOUR);
  const hour = new Date(Date.now() + HOUR);
  const withAccess: Ctx = { ...owner, user: { ...owner.user, keyId: device.id, credentialExpiresAt: hour } };
  const child = await login((await issueDeviceCode(withAccess, {})).code);
  expect(child.expiresAt).toBe(hour.toISOString());
});

test('a refresh gives an hour; a logout revokes the device session; a disabled user gets nothing', async () => {
  const device = await login((await issueDeviceCode(again(owner), {})).code);
  const access = await deviceRefresh(h.anonymous, bearer(device.refreshToken));
  expect(Date.parse(access!.expiresAt) - Date.parse(access!.createdAt)).toBe(HOUR);
  expect(await deviceRefresh(h.anonymous, bearer(access!.accessToken))).toBeNull(); // an access token is no refresh token
  expect(await deviceRefresh(h.anonymous, 'Bearer not-a-token')).toBeNull();
  await deviceLogout(h.anonymous, bearer(device.refreshToken));
  expect(await deviceRefresh(h.anonymous, bearer(device.refreshToken))).toBeNull();

  const gone = await h.user('gone');
  const code = (await issueDeviceCode(again(gone), {})).code;
  await setUserDisabled(h.operator, gone.user.id, true);
  expect(await failure(login(code))).toEqual({ code: 'UNAUTHENTICATED', message: 'Invalid or expired device code' });
});

test.each([
  ['no code', {}, 'Missing required field: device_code'],
  ['a code that is no string', { device_code: 5 }, 'Invalid value for device_code. Must be a string'],
  [
    'a hostname over 255 characters',
    { device_code: 'ABC123', hostname: 'x'.repeat(256) },
    'Invalid value for hostname. Must be a string of at most 255 characters',
  ],
])('device login with %s → 400', async (_what, body, message) => {
  expect(await failure(deviceLogin(h.anonymous, body))).toEqual({ code: 'VALIDATION_ERROR', message });
});
