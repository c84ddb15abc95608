/**
 * The authentication rules, pinned at the service layer (no HTTP): an API key, a device access
 * token, a connector's access token and a browser session each make a caller while live; revoked,
 * expired, a disabled user, the wrong kind of token or a malformed one make none (null, which the
 * callers answer 401); a key without the write scope makes a read-only caller.
 */
import { authenticate } from '../../src/services/authenticate';
import { resolveBrowserSession, startBrowserSession } from '../../src/services/browser-sessions';
import { deviceLogin, deviceLogout, deviceRefresh, issueDeviceCode } from '../../src/services/device';
import { createApiKey, revokeApiKey } from '../../src/services/keys';
import { exchangeAuthorizationCode, issueAuthorizationCode, revokeConnectorToken } from '../../src/services/oauth-grants';
import { setUserDisabled } from '../../src/services/users';
import { signDeviceToken, signKeyToken } from '../../src/domain/tokens';
import { eventually } from '../support/eventually';
import { again, startServices, type ServiceHarness, type ServiceUser } from '../support/services';

let h: ServiceHarness;
let owner: ServiceUser;
const SECRET = 'test-secret-that-is-long-enough';
const RESOURCE = 'http://127.0.0.1/mcp';

beforeAll(async () => {
  h = await startServices();
  owner = await h.user('owner');
});
afterAll(() => h?.close());

const bearer = (token: string) => `Bearer ${token}`;
const auth = (header: string | undefined) => authenticate(h.deps.db.writes, SECRET, header);

/** A device session of `u`: its refresh token and an access token. */
async function deviceOf(u: ServiceUser): Promise<{ refresh: string; access: string }> {
  const { code } = await issueDeviceCode(again(u), {});
  const { refreshToken } = await deviceLogin(h.anonymous, { device_code: code, hostname: 'laptop', client: 'cli' });
  const refreshed = await deviceRefresh(h.anonymous, bearer(refreshToken));
  return { refresh: refreshToken, access: refreshed!.accessToken };
}

/** A connector grant of `u` (write allowed or not): its access and refresh tokens. */
async function connectorOf(u: ServiceUser, write: boolean) {
  const code = await issueAuthorizationCode(again(u), {
    clientId: 'client-1',
    clientName: 'Test client',
    redirectUri: 'http://127.0.0.1/callback',
    codeChallenge: 'x'.repeat(43),
    resource: RESOURCE,
    write,
    teamId: null,
  });
  return exchangeAuthorizationCode(h.anonymous, 'client-1', code, undefined, undefined);
}

describe('API keys', () => {
  test('a live key makes its user, with the key as credential; read scope alone makes a read-only caller', async () => {
    const rw = await createApiKey(again(owner), { name: 'rw' });
    const ro = await createApiKey(again(owner), { name: 'ro', scopes: ['read'] });
    const user = await auth(bearer(rw.token));
    expect(user).toMatchObject({ id: owner.user.id, keyId: rw.key.id, role: 'member' });
    expect(user!.readOnly).toBeUndefined();
    expect(user!.credentialExpiresAt).toBeUndefined();
    expect(await auth(bearer(ro.token))).toMatchObject({ id: owner.user.id, keyId: ro.key.id, readOnly: true });
    // The scheme's case and trailing blanks do not matter.
    expect(await auth(`bearer ${rw.token}  `)).toMatchObject({ keyId: rw.key.id });
  });

  test('a revoked key, an expired token and a key of a disabled user make no caller', async () => {
    const revoked = await createApiKey(again(owner), { name: 'revoked' });
    await revokeApiKey(again(owner), revoked.key.id);
    expect(await auth(bearer(revoked.token))).toBeNull();

    const live = await createApiKey(again(owner), { name: 'live' });
    const expired = signKeyToken(SECRET, owner.user.id, live.key.id, new Date(Date.now() - 60_000));
    expect(await auth(bearer(expired))).toBeNull();

    const gone = await h.user('gone');
    const key = await createApiKey(again(gone), { name: 'k' });
    expect(await auth(bearer(key.token))).not.toBeNull();
    await setUserDisabled(h.operator, gone.user.id, true);
    expect(await auth(bearer(key.token))).toBeNull();
    await setUserDisabled(h.operator, gone.user.id, false);
    expect(await auth(bearer(key.token))).toMatchObject({ id: gone.user.id });
  });

  test("a token naming another user's key, or signed with another secret, makes no caller", async () => {
    const other = await h.user('other');
    const theirs = await createApiKey(again(other), { name: 'theirs' });
    expect(await auth(bearer(signKeyToken(SECRET, owner.user.id, theirs.key.id, null)))).toBeNull();
    const mine = await createApiKey(again(owner), { name: 'mine' });
    expect(await auth(bearer(signKeyToken('another-secret-that-is-long-enough', owner.user.id, mine.key.id, null)))).toBeNull();
  });

  test.each([
    ['no header', undefined],
    ['an empty header', ''],
    ['another scheme', 'Basic dXNlcjpwYXNz'],
    ['no token', 'Bearer '],
    ['two tokens', 'Bearer a.b.c d.e.f'],
    ['not a JWT', 'Bearer not-a-token'],
    ['a JWT of garbage', 'Bearer aaaa.bbbb.cccc'],
    ['an oversized token', `Bearer ${'a'.repeat(100_000)}.${'b'.repeat(100_000)}.c`],
    ['an unsigned token', `Bearer ${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from('{"sub":"u","jti":"k"}').toString('base64url')}.`],
  ])('%s makes no caller', async (_what, header) => {
    expect(await auth(header)).toBeNull();
  });
});

describe('device tokens', () => {
  test('an access token makes the user until its hour ends; the refresh token is no API key', async () => {
    const { refresh, access } = await deviceOf(owner);
    const user = await auth(bearer(access));
    expect(user).toMatchObject({ id: owner.user.id });
    expect(user!.credentialExpiresAt!.getTime()).toBeGreaterThan(Date.now());
    expect(user!.credentialExpiresAt!.getTime()).toBeLessThanOrEqual(Date.now() + 3_600_000);
    expect(user!.readOnly).toBeUndefined();
    expect(await auth(bearer(refresh))).toBeNull();
    // An access token past its hour.
    const expired = signDeviceToken(SECRET, owner.user.id, user!.keyId!, 'access', new Date(Date.now() - 1000));
    expect(await auth(bearer(expired))).toBeNull();
  });

  test('an access token is refused as soon as its device session is logged out', async () => {
    const { refresh, access } = await deviceOf(owner);
    await deviceLogout(h.anonymous, bearer(refresh));
    expect(await auth(bearer(access))).toBeNull();
  });

  test('a device-kind token naming an API key is refused, and a key-kind token naming a device session too', async () => {
    const key = await createApiKey(again(owner), { name: 'plain' });
    expect(await auth(bearer(signDeviceToken(SECRET, owner.user.id, key.key.id, 'access', new Date(Date.now() + 60_000))))).toBeNull();
    const { access } = await deviceOf(owner);
    const deviceKeyId = (await auth(bearer(access)))!.keyId!;
    expect(await auth(bearer(signKeyToken(SECRET, owner.user.id, deviceKeyId, null)))).toBeNull();
  });
});

describe('connector grants', () => {
  test('an access token makes the user for its resource; a grant without write makes a read-only caller', async () => {
    const rw = await connectorOf(owner, true);
    const user = await auth(bearer(rw.access_token));
    expect(user).toMatchObject({ id: owner.user.id, resource: RESOURCE });
    expect(user!.readOnly).toBeUndefined();
    expect(user!.credentialExpiresAt).toBeInstanceOf(Date);
    const ro = await connectorOf(owner, false);
    expect(await auth(bearer(ro.access_token))).toMatchObject({ id: owner.user.id, readOnly: true });
    // The refresh token is random, no bearer token.
    expect(await auth(bearer(rw.refresh_token!))).toBeNull();
  });

  test('a revoked grant, a disabled user, and a device-kind token naming a grant make no caller', async () => {
    const revoked = await connectorOf(owner, true);
    await revokeConnectorToken(h.anonymous, 'client-1', revoked.refresh_token!);
    expect(await auth(bearer(revoked.access_token))).toBeNull();

    const live = await connectorOf(owner, true);
    const grantId = (await auth(bearer(live.access_token)))!.keyId!;
    expect(await auth(bearer(signDeviceToken(SECRET, owner.user.id, grantId, 'access', new Date(Date.now() + 60_000))))).toBeNull();
    expect(await auth(bearer(signKeyToken(SECRET, owner.user.id, grantId, null)))).toBeNull();

    const gone = await h.user('gone-connector');
    const theirs = await connectorOf(gone, true);
    await setUserDisabled(h.operator, gone.user.id, true);
    expect(await auth(bearer(theirs.access_token))).toBeNull();
  });
});

describe('browser sessions', () => {
  const resolve = (token: string) => resolveBrowserSession(h.deps.db.writes, token);

  test('a live session resolves to its user and CSRF token; unknown, empty and oversized tokens do not', async () => {
    const { token, csrfToken } = await startBrowserSession(h.operator, owner.user.id);
    expect(await resolve(token)).toMatchObject({ userId: owner.user.id, role: 'member', csrfToken, touched: false });
    expect(await resolve('')).toBeNull();
    expect(await resolve(`${token}x`)).toBeNull();
    expect(await resolve('a'.repeat(201))).toBeNull();
    // The cookie token is no bearer token.
    expect(await auth(bearer(token))).toBeNull();
  });

  test("a disabled user's session resolves to nothing", async () => {
    const gone = await h.user('gone-browser');
    const { token } = await startBrowserSession(h.operator, gone.user.id);
    expect(await resolve(token)).not.toBeNull();
    await setUserDisabled(h.operator, gone.user.id, true);
    expect(await resolve(token)).toBeNull();
  });

  test('a session idle 30 days ends; one idle less is kept and its use recorded', async () => {
    const u = await h.user('idle');
    const { token } = await startBrowserSession(h.operator, u.user.id);
    await h.deps.db.pool.query('UPDATE user_sessions SET lastUsedAt = ? WHERE userId = ?', [new Date(Date.now() - 29 * 86_400_000), u.user.id]);
    expect(await resolve(token)).toMatchObject({ userId: u.user.id, touched: true });
    // The use is recorded after the answer, off its path: wait for it before ageing the row again,
    // or the late write would undo the ageing.
    const lastUsed = async () => {
      const [row] = await h.deps.db.pool.query('SELECT lastUsedAt FROM user_sessions WHERE userId = ?', [u.user.id]);
      return (row.lastUsedAt as Date).getTime();
    };
    await eventually('the use recorded', async () => Date.now() - (await lastUsed()) < 86_400_000);
    await h.deps.db.pool.query('UPDATE user_sessions SET lastUsedAt = ? WHERE userId = ?', [new Date(Date.now() - 30 * 86_400_000 - 1000), u.user.id]);
    expect(await resolve(token)).toBeNull();
  });
});
