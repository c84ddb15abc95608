/**
 * The OAuth rules of MCP connectors, pinned at the service layer (no HTTP): registration takes one
 * to ten redirect URIs and the code flow's grant types only, up to OAUTH_CLIENTS_MAX clients; a
 * client id that is a URL must be https with a path and never names a private address; a code is
 * its client's, single use (a second use revokes its grant), expires, and is bound to its redirect
 * URI and resource; a refresh token rotates, and a spent one presented again revokes the grant;
 * revocation by a refresh or an access token revokes the grant, only for its own client.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { OAuthError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import { sha256 } from '../../src/domain/tokens';
import { authenticate } from '../../src/services/authenticate';
import { findClient, registerClient } from '../../src/services/oauth-clients';
import {
  challengeOfCode,
  exchangeAuthorizationCode,
  exchangeRefreshToken,
  issueAuthorizationCode,
  revokeConnectorToken,
} from '../../src/services/oauth-grants';
import { createTeam, addMember } from '../../src/services/teams';
import { again, failure, startServices, VIEWER_READS_ONLY, type ServiceHarness, type ServiceUser } from '../support/services';

let h: ServiceHarness;
let owner: ServiceUser;
const CLIENTS_MAX = 3;
const SECRET = 'test-secret-that-is-long-enough';
const RESOURCE = 'http://127.0.0.1/mcp';
const REDIRECT = 'http://127.0.0.1:5555/callback';
const CHALLENGE = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';

beforeAll(async () => {
  h = await startServices({ OAUTH_CLIENTS_MAX: String(CLIENTS_MAX) });
  owner = await h.user('owner');
});
afterAll(() => h?.close());

/** The OAuth error a call fails with, as `{code, message}` (a call that succeeds fails the test). */
async function oauthFailure(p: Promise<unknown>): Promise<{ code: string; message: string }> {
  try {
    await p;
  } catch (err) {
    if (err instanceof OAuthError) return { code: err.errorCode, message: err.message };
    throw err;
  }
  throw new Error('expected the call to fail');
}

const grantOf = async (accessToken: string) => authenticate(h.deps.db.writes, SECRET, `Bearer ${accessToken}`);

const codeFor = (u: ServiceUser, opts: { clientId?: string; write?: boolean; teamId?: string | null } = {}) =>
  issueAuthorizationCode(again(u), {
    clientId: opts.clientId ?? 'client-a',
    clientName: 'Client A',
    redirectUri: REDIRECT,
    codeChallenge: CHALLENGE,
    resource: RESOURCE,
    write: opts.write ?? true,
    teamId: opts.teamId ?? null,
  });

const redeem = (code: string, clientId = 'client-a', redirectUri?: string, resource?: string) =>
  exchangeAuthorizationCode(h.anonymous, clientId, code, redirectUri, resource);

describe('registration', () => {
  test('a client is public whatever it asks: no secret, the code flow only, named by itself or its redirect host', async () => {
    const client = await registerClient(h.anonymous, { redirect_uris: ['https://app.example/cb'], token_endpoint_auth_method: 'client_secret_basic' });
    expect(client).toMatchObject({ client_name: 'app.example', token_endpoint_auth_method: 'none', grant_types: ['authorization_code', 'refresh_token'] });
    expect(client.client_secret).toBeUndefined();
    expect(await findClient(h.anonymous, client.client_id)).toMatchObject({ client_id: client.client_id, redirect_uris: ['https://app.example/cb'] });
    expect(await findClient(h.anonymous, '00000000-0000-4000-8000-000000000000')).toBeNull();
    expect(await findClient(h.anonymous, 'not-an-id')).toBeNull();
  });

  test.each([
    ['no redirect_uris', {}, expect.stringContaining('redirect_uris')],
    ['no redirect URI', { redirect_uris: [] }, 'redirect_uris: one to ten URLs'],
    ['eleven redirect URIs', { redirect_uris: Array.from({ length: 11 }, (_, i) => `https://app.example/cb${i}`) }, 'redirect_uris: one to ten URLs'],
    ['a redirect URI over 2000 characters', { redirect_uris: [`https://app.example/${'a'.repeat(2000)}`] }, 'redirect_uris: at most 2000 characters each'],
    ['a redirect URI that is no URL', { redirect_uris: ['not a url'] }, expect.stringContaining('redirect_uris')],
    [
      'another grant type',
      { redirect_uris: ['https://app.example/cb'], grant_types: ['client_credentials'] },
      'grant_types: only authorization_code and refresh_token are supported',
    ],
  ])('%s is refused', async (_what, input, message) => {
    expect(await oauthFailure(registerClient(h.anonymous, input))).toEqual({ code: 'invalid_client_metadata', message });
  });

  test(`past OAUTH_CLIENTS_MAX (${CLIENTS_MAX}) a registration is refused`, async () => {
    // One client was registered above.
    for (let i = 1; i < CLIENTS_MAX; i++) await registerClient(h.anonymous, { redirect_uris: ['https://app.example/cb'], client_name: `c${i}` });
    expect(await oauthFailure(registerClient(h.anonymous, { redirect_uris: ['https://app.example/cb'] }))).toEqual({
      code: 'too_many_requests',
      message: 'This server holds as many client registrations as it accepts; try again later',
    });
  });
});

describe('client ids that are URLs', () => {
  test.each([
    'http://app.example/client.json',
    'https://app.example/',
    'https://user:pw@app.example/client.json',
    'https://app.example/c.json#x',
    `https://app.example/${'a'.repeat(493)}`,
  ])('%# %s is no metadata URL', async (id) => {
    expect(await oauthFailure(findClient(h.anonymous, id))).toEqual({
      code: 'invalid_client',
      message: 'A client id that is a URL must be an https URL with a path',
    });
  });

  test.each([
    'https://127.0.0.1/client.json',
    'https://10.1.2.3/client.json',
    'https://192.168.0.1/client.json',
    'https://169.254.169.254/latest',
    'https://[::1]/client.json',
    'https://[::ffff:127.0.0.1]/client.json',
    'https://[fd00::1]/client.json',
  ])('a private address is refused before any fetch: %s', async (id) => {
    expect(await oauthFailure(findClient(h.anonymous, id))).toEqual({ code: 'invalid_client', message: 'The client metadata address is not public' });
  });

  test('a name that resolves to a private address is refused', async () => {
    expect(await oauthFailure(findClient(h.anonymous, 'https://localhost/client.json'))).toEqual({
      code: 'invalid_client',
      message: expect.stringContaining('not public'),
    });
  });
});

describe('metadata documents (a local server, allow-listed)', () => {
  let server: http.Server;
  let base: string;
  let allowed: typeof h.anonymous;

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      const id = `${base}${req.url}`;
      const json = (doc: unknown) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(doc));
      if (req.url === '/ok.json') return json({ client_id: id, client_name: 'Local client', redirect_uris: ['http://127.0.0.1:5555/cb'] });
      if (req.url === '/other.json') return json({ client_id: `${base}/ok.json`, redirect_uris: ['http://127.0.0.1:5555/cb'] });
      if (req.url === '/no-redirects.json') return json({ client_id: id, redirect_uris: [] });
      if (req.url === '/big.json') return json({ client_id: id, redirect_uris: ['http://127.0.0.1:5555/cb'], padding: 'x'.repeat(70_000) });
      if (req.url === '/text') return res.writeHead(200).end('not json');
      if (req.url === '/moved') return res.writeHead(302, { location: '/ok.json' }).end();
      res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const host = `127.0.0.1:${(server.address() as AddressInfo).port}`;
    base = `http://${host}`;
    const { config } = h.anonymous.deps;
    allowed = { ...h.anonymous, deps: { ...h.anonymous.deps, config: { ...config, oauth: { ...config.oauth, clientHosts: [host] } } } };
  });
  afterAll(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

  test('a document naming its own URL is the client; without the allow-list its address is refused', async () => {
    expect(await findClient(allowed, `${base}/ok.json`)).toMatchObject({
      client_id: `${base}/ok.json`,
      client_name: 'Local client',
      token_endpoint_auth_method: 'none',
    });
    expect(await oauthFailure(findClient(h.anonymous, `${base}/ok.json`))).toEqual({
      code: 'invalid_client',
      message: 'A client id that is a URL must be an https URL with a path',
    });
  });

  test.each([
    ['/other.json', { code: 'invalid_client', message: 'The client metadata document names another client_id' }],
    ['/no-redirects.json', { code: 'invalid_client_metadata', message: 'redirect_uris: one to ten URLs' }],
    ['/big.json', { code: 'invalid_client', message: 'The client metadata document is larger than 64 KiB' }],
    ['/text', { code: 'invalid_client', message: 'The client metadata document is not JSON' }],
    ['/moved', { code: 'invalid_client', message: 'The client metadata document answered 302' }],
    ['/missing', { code: 'invalid_client', message: 'The client metadata document answered 404' }],
  ])('%s is refused', async (path, error) => {
    expect(await oauthFailure(findClient(allowed, `${base}${path}`))).toEqual(error);
  });
});

describe('authorization codes', () => {
  test("a code is its client's, keeps its PKCE challenge, and gives a grant of what was allowed", async () => {
    const code = await codeFor(owner, { write: false });
    expect(await challengeOfCode(h.anonymous, 'client-a', code)).toBe(CHALLENGE);
    expect(await oauthFailure(challengeOfCode(h.anonymous, 'client-b', code))).toEqual({ code: 'invalid_grant', message: 'Invalid authorization code' });
    expect(await oauthFailure(challengeOfCode(h.anonymous, 'client-a', 'unknown'))).toEqual({ code: 'invalid_grant', message: 'Invalid authorization code' });
    expect(await oauthFailure(redeem(code, 'client-b'))).toEqual({ code: 'invalid_grant', message: 'Invalid authorization code' });
    const tokens = await redeem(code, 'client-a', REDIRECT, RESOURCE);
    expect(tokens).toMatchObject({ token_type: 'Bearer', expires_in: 3600, scope: 'archive:read' });
    expect(await grantOf(tokens.access_token)).toMatchObject({ id: owner.user.id, readOnly: true, resource: RESOURCE });
  });

  test('a code used twice is refused and revokes the grant it gave', async () => {
    const code = await codeFor(owner);
    const tokens = await redeem(code);
    expect(tokens.scope).toBe('archive:read archive:write');
    expect(await grantOf(tokens.access_token)).not.toBeNull();
    expect(await oauthFailure(redeem(code))).toEqual({ code: 'invalid_grant', message: 'Authorization code already used' });
    expect(await grantOf(tokens.access_token)).toBeNull();
    expect(await oauthFailure(exchangeRefreshToken(h.anonymous, 'client-a', tokens.refresh_token!, undefined, undefined))).toEqual({
      code: 'invalid_grant',
      message: 'The grant has been revoked',
    });
  });

  test('an expired code is refused', async () => {
    const code = await codeFor(owner);
    await h.deps.db.pool.query('UPDATE oauth_codes SET expiresAt = ? WHERE codeHash = ?', [new Date(Date.now() - 1000), sha256(code)]);
    expect(await oauthFailure(redeem(code))).toEqual({ code: 'invalid_grant', message: 'Authorization code expired' });
  });

  test('a code is bound to its redirect URI and resource', async () => {
    expect(await oauthFailure(redeem(await codeFor(owner), 'client-a', 'http://127.0.0.1:5555/other'))).toEqual({
      code: 'invalid_grant',
      message: 'redirect_uri differs from the authorization request',
    });
    expect(await oauthFailure(redeem(await codeFor(owner), 'client-a', REDIRECT, 'http://127.0.0.1/other'))).toEqual({
      code: 'invalid_target',
      message: 'resource differs from the authorization request',
    });
  });

  test('a code bound to a team needs its admin or member', async () => {
    const viewer = await h.user('viewer');
    const team = await createTeam(again(owner), { name: 'Connector team' });
    await addMember(again(owner), team.id, { email: viewer.email, role: 'viewer' });
    expect(await failure(codeFor(viewer, { teamId: team.id }))).toEqual(VIEWER_READS_ONLY);
    const tokens = await redeem(await codeFor(owner, { teamId: team.id }));
    expect(await grantOf(tokens.access_token)).toMatchObject({ id: owner.user.id });
  });
});

describe('refresh tokens', () => {
  test('a refresh token rotates; the spent one presented again revokes the grant', async () => {
    const first = await redeem(await codeFor(owner));
    const second = await exchangeRefreshToken(h.anonymous, 'client-a', first.refresh_token!, undefined, RESOURCE);
    expect(second.refresh_token).not.toBe(first.refresh_token);
    expect(await grantOf(second.access_token)).not.toBeNull();
    expect(await oauthFailure(exchangeRefreshToken(h.anonymous, 'client-a', first.refresh_token!, undefined, undefined))).toEqual({
      code: 'invalid_grant',
      message: 'Refresh token already used: the grant is revoked',
    });
    expect(await grantOf(second.access_token)).toBeNull();
    expect(await oauthFailure(exchangeRefreshToken(h.anonymous, 'client-a', second.refresh_token!, undefined, undefined))).toEqual({
      code: 'invalid_grant',
      message: 'The grant has been revoked',
    });
  });

  test("another client's, an unknown, another resource's and a wider scope are refused", async () => {
    const ro = await redeem(await codeFor(owner, { write: false }));
    expect(await oauthFailure(exchangeRefreshToken(h.anonymous, 'client-b', ro.refresh_token!, undefined, undefined))).toEqual({
      code: 'invalid_grant',
      message: 'Invalid refresh token',
    });
    expect(await oauthFailure(exchangeRefreshToken(h.anonymous, 'client-a', 'unknown', undefined, undefined))).toEqual({
      code: 'invalid_grant',
      message: 'Invalid refresh token',
    });
    expect(await oauthFailure(exchangeRefreshToken(h.anonymous, 'client-a', ro.refresh_token!, ['archive:read', 'archive:write'], undefined))).toEqual({
      code: 'invalid_scope',
      message: 'Scope beyond the grant',
    });
    const rw = await redeem(await codeFor(owner));
    expect(await oauthFailure(exchangeRefreshToken(h.anonymous, 'client-a', rw.refresh_token!, ['archive:admin'], undefined))).toEqual({
      code: 'invalid_scope',
      message: 'Scope beyond the grant',
    });
    const other = await redeem(await codeFor(owner));
    expect(await oauthFailure(exchangeRefreshToken(h.anonymous, 'client-a', other.refresh_token!, undefined, 'http://127.0.0.1/other'))).toEqual({
      code: 'invalid_target',
      message: 'resource differs from the grant',
    });
    // Refused before they were spent: the same tokens still refresh as they should.
    for (const t of [ro, rw, other])
      expect((await exchangeRefreshToken(h.anonymous, 'client-a', t.refresh_token!, undefined, RESOURCE)).access_token).toEqual(expect.any(String));
    // A narrower scope is fine.
    const narrow = await redeem(await codeFor(owner));
    expect((await exchangeRefreshToken(h.anonymous, 'client-a', narrow.refresh_token!, ['archive:read'], undefined)).access_token).toEqual(expect.any(String));
  });
});

describe('revocation', () => {
  test('by refresh or access token, for its own client only', async () => {
    const byRefresh = await redeem(await codeFor(owner));
    await revokeConnectorToken(h.anonymous, 'client-b', byRefresh.refresh_token!);
    expect(await grantOf(byRefresh.access_token)).not.toBeNull();
    await revokeConnectorToken(h.anonymous, 'client-a', byRefresh.refresh_token!);
    expect(await grantOf(byRefresh.access_token)).toBeNull();

    const byAccess = await redeem(await codeFor(owner));
    await revokeConnectorToken(h.anonymous, 'client-b', byAccess.access_token);
    expect(await grantOf(byAccess.access_token)).not.toBeNull();
    await revokeConnectorToken(h.anonymous, 'client-a', byAccess.access_token);
    expect(await grantOf(byAccess.access_token)).toBeNull();
    // Anything else is accepted and changes nothing.
    await expect(revokeConnectorToken(h.anonymous, 'client-a', 'garbage')).resolves.toBeUndefined();
  });
});
