/**
 * The OAuth server of /mcp over plain HTTP: discovery, MCP_OAUTH=off, keys beside grants,
 * consent, codes, PKCE, resources, refresh rotation and reuse, read-only grants on every door,
 * revocation from the keys page seen by another instance, client metadata documents, and the
 * refusals an abuser meets.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createUser, setUserDisabled } from '../../src/services/users';
import { operatorCtx } from '../../src/services/context';
import { startTestApp, type TestApp } from '../support/app';
import { browser, type Browser } from '../support/cookie-client';
import { authorizeUrl, connect, consent, pkce, register, revoke, token } from '../support/oauth';

const PASSWORD = 'correct horse battery staple';
const REDIRECT = 'http://127.0.0.1:9/callback';
const MCP_HEADERS = { Accept: 'application/json, text/event-stream', 'MCP-Protocol-Version': '2025-06-18' };
const LIST = { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} };

let app: TestApp;
let b: Browser;
let userKey: string;
let seq = 0;

async function signedInUser(a: TestApp): Promise<{ b: Browser; key: string; id: string }> {
  const email = `oauth-srv-${process.pid}-${++seq}-${Date.now()}@example.test`;
  const u = await createUser(operatorCtx(a.deps.db), email, 'OAuth user', { password: PASSWORD });
  const br = browser(a);
  expect((await br.signIn(email, PASSWORD)).status).toBe(200);
  return { b: br, key: (await a.newKey(u)).token, id: u.id };
}

const mcp = (a: TestApp, tokenValue: string | undefined, body: unknown = LIST) => a.request('POST', '/mcp', { token: tokenValue, body, headers: MCP_HEADERS });

beforeAll(async () => {
  app = await startTestApp({ rateLimit: false, env: { OAUTH_CLIENTS_MAX: '50' } });
  ({ b, key: userKey } = await signedInUser(app));
}, 60_000);
afterAll(async () => {
  await app?.close();
});

test('discovery documents, the 401 challenge, and keys on /mcp', async () => {
  const prm = await app.request('GET', '/.well-known/oauth-protected-resource/mcp');
  expect(prm.status).toBe(200);
  expect(prm.body).toMatchObject({ resource: `${app.url}/mcp`, authorization_servers: [app.url], scopes_supported: ['archive:read', 'archive:write'] });
  expect((await app.request('GET', '/.well-known/oauth-protected-resource')).body).toEqual(prm.body);
  const as = await app.request('GET', '/.well-known/oauth-authorization-server');
  expect(as.body).toMatchObject({
    issuer: app.url,
    authorization_endpoint: `${app.url}/oauth/authorize`,
    token_endpoint: `${app.url}/oauth/token`,
    registration_endpoint: `${app.url}/oauth/register`,
    revocation_endpoint: `${app.url}/oauth/revoke`,
    code_challenge_methods_supported: ['S256'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    token_endpoint_auth_methods_supported: expect.arrayContaining(['none']),
    client_id_metadata_document_supported: true,
  });
  const openid = await app.request('GET', '/.well-known/openid-configuration');
  expect([openid.status, openid.body.success]).toEqual([404, false]);
  const r = await mcp(app, undefined);
  expect(r.status).toBe(401);
  expect(r.headers['www-authenticate']).toBe(`Bearer resource_metadata="${app.url}/.well-known/oauth-protected-resource/mcp"`);
  // A key is never answered 401 with the OAuth server on.
  expect((await mcp(app, userKey)).status).toBe(200);
});

test('browser-based clients of any origin: discovery, registration, token and revocation answer CORS, preflights too; the API keeps to CORS_ORIGINS', async () => {
  const origin = { Origin: 'http://localhost:6274' };
  const preflight = (path: string) =>
    app.request('OPTIONS', path, { headers: { ...origin, 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'content-type' } });
  for (const path of ['/oauth/token', '/oauth/register', '/oauth/revoke']) {
    const r = await preflight(path);
    expect([path, r.status, r.headers['access-control-allow-origin']]).toEqual([path, 204, '*']);
    expect(String(r.headers['access-control-allow-methods'])).toContain('POST');
  }
  const doc = await app.request('GET', '/.well-known/oauth-authorization-server', { headers: origin });
  expect([doc.status, doc.headers['access-control-allow-origin']]).toEqual([200, '*']);
  // A refused token request still tells the browser what went wrong.
  const refused = await app.request('POST', '/oauth/token', {
    headers: { ...origin, 'Content-Type': 'application/x-www-form-urlencoded' },
    body: 'grant_type=authorization_code',
  });
  expect([refused.status, refused.headers['access-control-allow-origin']]).toEqual([400, '*']);
  // The API is not opened by it: an origin not in CORS_ORIGINS gets no CORS answer there.
  const api = await preflight('/api/v1/projects');
  expect(api.headers['access-control-allow-origin']).toBeUndefined();
});

test('MCP_OAUTH=off: JSON 404 discovery, the realm challenge, keys still work', async () => {
  const off = await startTestApp({ rateLimit: false, env: { MCP_OAUTH: 'off' } });
  try {
    for (const path of ['/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/mcp', '/.well-known/oauth-authorization-server']) {
      const r = await off.request('GET', path);
      expect([path, r.status, String(r.headers['content-type'])]).toEqual([path, 404, expect.stringContaining('application/json')]);
      expect(r.body.success).toBe(false);
    }
    expect((await off.request('POST', '/oauth/register', { body: { redirect_uris: [REDIRECT] } })).status).toBe(404);
    const r = await mcp(off, undefined);
    expect(r.headers['www-authenticate']).toBe('Bearer realm="session-archive"');
    const u = await off.createUser();
    expect((await mcp(off, u.token)).status).toBe(200);
  } finally {
    await off.close();
  }
});

test('consent: sign-in detour, deny, CSRF, team choice, write only when asked and ticked', async () => {
  const client = (await register(app, [REDIRECT])).body.client_id as string;
  const { challenge } = pkce();
  const p = { clientId: client, redirectUri: REDIRECT, challenge, resource: `${app.url}/mcp` };
  const anonymous = await app.request('GET', authorizeUrl(p));
  expect(anonymous.status).toBe(302);
  expect(String(anonymous.headers.location)).toBe(`/sign-in?next=${encodeURIComponent(authorizeUrl(p))}`);
  const denied = await consent(b, p, { decision: 'deny' });
  expect([denied.location.searchParams.get('error'), denied.location.searchParams.get('state')]).toEqual(['access_denied', 'st']);
  expect(denied.page.headers['content-security-policy']).toMatch(/default-src 'none'/);
  expect(denied.page.text).not.toContain('archive:write —');
  // Without the session's CSRF token the decision is refused.
  const page = await b.request('GET', authorizeUrl(p));
  const request = /name="request" value="([^"]*)"/.exec(page.text)![1];
  const forged = await b.request('POST', '/oauth/consent', {
    body: `request=${encodeURIComponent(request)}&decision=allow`,
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
  });
  expect(forged.status).toBe(403);
  // archive:write asked and ticked: a read-write grant; asked but not ticked: read-only.
  const rw = await connect(app, b, { scope: 'archive:read archive:write', write: true, name: 'Writer' });
  expect(rw.tokens.scope).toBe('archive:read archive:write');
  expect((await app.put(rw.tokens.access_token, 'oauth-rw', '11111111-2222-4333-8444-555555555555')).status).toBe(201);
  const ro = await connect(app, b, { scope: 'archive:read archive:write', write: false, name: 'Reader' });
  expect(ro.tokens.scope).toBe('archive:read');
  // A team the person is not a writer of cannot be chosen.
  const t = (await app.request('POST', '/api/v1/teams', { token: userKey, body: { name: 'Crew' } })).body.data.team.id as string;
  const teamGrant = await consent(b, { ...p, challenge: pkce().challenge }, { teamId: t });
  expect(teamGrant.location.searchParams.get('code')).toBeTruthy();
});

test("a refusal that cannot go back to the client: a page for a person's browser, JSON for programs", async () => {
  const client = (await register(app, [REDIRECT])).body.client_id as string;
  const p = { clientId: client, redirectUri: REDIRECT, challenge: pkce().challenge, resource: `${app.url}/mcp` };
  const BROWSER = { Accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' };
  const asPage = async (url: string) => {
    const r = await app.request('GET', url, { headers: BROWSER });
    expect([r.status, String(r.headers['content-type'])]).toEqual([400, 'text/html; charset=utf-8']);
    expect(r.headers['content-security-policy']).toMatch(/default-src 'none'/);
    expect(r.headers['cache-control']).toBe('no-store');
    return /<h1>([^<]*)<\/h1>/.exec(r.text)?.[1];
  };
  // A client id the server does not hold (a registration removed after 30 days unused, or another server's).
  const gone = authorizeUrl({ ...p, clientId: 'no-such-client' });
  await expect(asPage(gone)).resolves.toBe('This assistant is not known here');
  // A redirect the client did not register: nothing is sent there.
  const elsewhere = authorizeUrl({ ...p, redirectUri: 'https://elsewhere.example/cb' });
  await expect(asPage(elsewhere)).resolves.toBe('This request cannot go back to the assistant');
  // No client id at all: the refusal's words, as text.
  await expect(asPage('/oauth/authorize?response_type=code')).resolves.toBe('This request to connect an assistant was refused');
  // Programs (no Accept, JSON, anything) keep OAuth's JSON answer.
  for (const accept of [undefined, 'application/json', '*/*']) {
    const r = await app.request('GET', gone, { headers: accept ? { Accept: accept } : {} });
    expect([accept, r.status, r.body]).toEqual([accept, 400, { error: 'invalid_client', error_description: 'Invalid client_id' }]);
  }
  // An error that can go back still goes back to the client, page or not.
  const back = await app.request('GET', authorizeUrl({ ...p, challenge: '' }).replace('code_challenge_method=S256', 'code_challenge_method=plain'), {
    headers: BROWSER,
  });
  expect(back.status).toBe(302);
  expect(new URL(String(back.headers.location)).searchParams.get('error')).toBe('invalid_request');
});

test('an archive:read grant cannot write through REST, GraphQL or MCP', async () => {
  const { tokens } = await connect(app, b, { name: 'Read only' });
  const at = tokens.access_token;
  const put = await app.put(at, 'oauth-ro', '11111111-2222-4333-8444-666666666666');
  expect([put.status, put.body.error]).toEqual([403, 'This key is read-only']);
  const key = await app.request('POST', '/api/v1/keys', { token: at, body: { name: 'escalate' } });
  expect(key.status).toBe(403);
  const g = await app.gql(at, 'mutation { createApiKey(name: "escalate") { token } }');
  expect(JSON.stringify(g.body)).toMatch(/read-only/);
  // Reads work; MCP offers only read-only tools.
  expect((await app.request('GET', '/api/v1/projects', { token: at })).status).toBe(200);
  const tools = (await mcp(app, at)).body.result.tools as Array<{ name: string; annotations?: { readOnlyHint?: boolean } }>;
  expect(tools.length).toBe(10);
  expect(tools.every((x) => x.annotations?.readOnlyHint === true)).toBe(true);
});

test('refresh tokens rotate; a spent one presented again revokes the grant', async () => {
  const { clientId, tokens } = await connect(app, b, { name: 'Rotating' });
  const next = await token(app, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: clientId });
  expect(next.status).toBe(200);
  expect(next.body.refresh_token).not.toBe(tokens.refresh_token);
  expect((await mcp(app, next.body.access_token)).status).toBe(200);
  const reused = await token(app, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: clientId });
  expect([reused.status, reused.body.error]).toEqual([400, 'invalid_grant']);
  // The whole grant is gone: its live access token and its newest refresh token too.
  expect((await mcp(app, next.body.access_token)).status).toBe(401);
  const after = await token(app, { grant_type: 'refresh_token', refresh_token: next.body.refresh_token, client_id: clientId });
  expect([after.status, after.body.error]).toEqual([400, 'invalid_grant']);
  // Another client cannot use this client's refresh token.
  const other = await connect(app, b, { name: 'Other' });
  const stolen = await token(app, { grant_type: 'refresh_token', refresh_token: other.tokens.refresh_token, client_id: clientId });
  expect(stolen.body.error).toBe('invalid_grant');
  // The audit log has the grant and its revocation, with why (and never a token).
  const keys = (await app.request('GET', '/api/v1/keys', { token: userKey })).body.data.keys as Array<{ id: string; name: string; revokedAt: string | null }>;
  const grant = keys.find((k) => k.name === 'Rotating (connector)')!;
  expect(grant.revokedAt).not.toBeNull();
  const entries = await app.deps.db.writes.query<{ action: string; detail: string }>(
    'SELECT action, detail FROM audit_entries WHERE targetId = ? ORDER BY id',
    grant.id,
  );
  expect(entries.map((e) => e.action)).toEqual(['connector.grant', 'connector.revoke']);
  expect(JSON.parse(entries[1].detail)).toEqual({ reason: 'refresh token reused' });
  expect(JSON.stringify(entries)).not.toContain(tokens.refresh_token);
});

test('abuse: redirect URI off by a character, another server as resource, a code used twice, a wrong verifier', async () => {
  const client = (await register(app, [REDIRECT, 'https://app.example/cb'])).body.client_id as string;
  const { verifier, challenge } = pkce();
  const base = { clientId: client, challenge, resource: `${app.url}/mcp` };
  const offByOne = await b.request('GET', authorizeUrl({ ...base, redirectUri: 'https://app.example/cc' }));
  expect([offByOne.status, offByOne.body?.error]).toEqual([400, 'invalid_request']);
  expect(offByOne.headers.location).toBeUndefined();
  // Loopback: any port.
  expect((await b.request('GET', authorizeUrl({ ...base, redirectUri: 'http://127.0.0.1:54321/callback' }))).status).toBe(200);
  const foreign = await b.request('GET', authorizeUrl({ ...base, redirectUri: REDIRECT, resource: 'https://other.example/mcp' }));
  expect(foreign.status).toBe(302);
  expect(new URL(String(foreign.headers.location)).searchParams.get('error')).toBe('invalid_target');

  const { location } = await consent(b, { ...base, redirectUri: REDIRECT });
  const code = location.searchParams.get('code')!;
  const exchange = (fields: Record<string, string>) =>
    token(app, { grant_type: 'authorization_code', code, client_id: client, redirect_uri: REDIRECT, code_verifier: verifier, ...fields });
  const wrong = await exchange({ code_verifier: pkce().verifier });
  expect([wrong.status, wrong.body.error]).toEqual([400, 'invalid_grant']);
  const elsewhere = await exchange({ resource: 'https://other.example/mcp' });
  expect([elsewhere.status, elsewhere.body.error]).toEqual([400, 'invalid_target']);
  // (The refused attempt above spent the code: a fresh one for the double use.)
  const again = await consent(b, { ...base, redirectUri: REDIRECT });
  const code2 = again.location.searchParams.get('code')!;
  const first = await token(app, { grant_type: 'authorization_code', code: code2, client_id: client, redirect_uri: REDIRECT, code_verifier: verifier });
  expect(first.status).toBe(200);
  const second = await token(app, { grant_type: 'authorization_code', code: code2, client_id: client, redirect_uri: REDIRECT, code_verifier: verifier });
  expect([second.status, second.body.error]).toEqual([400, 'invalid_grant']);
  // The code's second use revokes what the first gave.
  expect((await mcp(app, first.body.access_token)).status).toBe(401);
});

test("revoked from the API keys page, a grant's next call is refused by another instance; grants die with their user's disable and a password change that revokes credentials", async () => {
  // Two instances of one service (one database, one public URL): the grant is for the service, not the instance.
  const env = { PUBLIC_URL: 'http://archive.test' };
  const one = await startTestApp({ rateLimit: false, env });
  const two = await startTestApp({ rateLimit: false, env, db: one.db });
  try {
    const person = await signedInUser(one);
    const { tokens } = await connect(one, person.b, { name: 'Listed' });
    expect(tokens.scope).toBe('archive:read');
    expect((await mcp(two, tokens.access_token)).status).toBe(200);
    const keys = (await one.request('GET', '/api/v1/keys', { token: person.key })).body.data.keys as Array<{
      id: string;
      name: string;
      scopes: string[];
      lastUsedAt: string | null;
    }>;
    const grant = keys.find((k) => k.name === 'Listed (connector)')!;
    expect(grant.scopes).toEqual(['read']);
    expect(grant.lastUsedAt).not.toBeNull();
    expect((await one.request('DELETE', `/api/v1/keys/${grant.id}`, { token: person.key })).status).toBe(200);
    const refused = await mcp(two, tokens.access_token);
    expect(refused.status).toBe(401);
    expect(refused.headers['www-authenticate']).toContain('resource_metadata="http://archive.test/.well-known/oauth-protected-resource/mcp"');
    // A token for this service does not pass for another's (its resource is checked on each call).
    expect((await mcp(app, (await connect(one, person.b, { name: 'Elsewhere' })).tokens.access_token)).status).toBe(401);
  } finally {
    await two.close();
    await one.close();
  }
  const victim = await signedInUser(app);
  const { clientId, tokens } = await connect(app, victim.b, { name: 'Doomed' });
  await setUserDisabled(operatorCtx(app.deps.db), victim.id, true);
  expect((await mcp(app, tokens.access_token)).status).toBe(401);
  expect((await token(app, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: clientId })).body.error).toBe('invalid_grant');
  expect((await revoke(app, { token: 'nonsense', client_id: clientId })).status).toBe(200);
  // A password change that revokes credentials ends grants too.
  const changer = await signedInUser(app);
  const kept = await connect(app, changer.b, { name: 'Before the change' });
  expect((await mcp(app, kept.tokens.access_token)).status).toBe(200);
  const changed = await changer.b.request('POST', '/api/v1/auth/password', {
    body: { currentPassword: PASSWORD, newPassword: 'another long passphrase', revokeCredentials: true },
  });
  expect(changed.status).toBe(200);
  expect((await mcp(app, kept.tokens.access_token)).status).toBe(401);
});

test('client metadata documents: refused on a private address, fetched from an allow-listed local server', async () => {
  let doc: Record<string, unknown> = {};
  const server = http.createServer((_req, res) => res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(doc)));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const host = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  const listed = await startTestApp({ rateLimit: false, db: app.db, env: { OAUTH_CLIENT_HOSTS: host } });
  try {
    const clientId = `http://${host}/client.json`;
    doc = { client_id: clientId, client_name: 'Document <i>client</i>', redirect_uris: [REDIRECT] };
    const { verifier, challenge } = pkce();
    // Not allow-listed: http is refused, and https on a private address is too.
    const refused = await b.request('GET', authorizeUrl({ clientId, redirectUri: REDIRECT, challenge }));
    expect([refused.status, refused.body?.error]).toEqual([400, 'invalid_client']);
    const privateHttps = await b.request('GET', authorizeUrl({ clientId: 'https://127.0.0.1:1/client.json', redirectUri: REDIRECT, challenge }));
    expect([privateHttps.status, privateHttps.body?.error]).toEqual([400, 'invalid_client']);
    expect(privateHttps.text).toMatch(/not public/);

    const lb = browser(listed);
    lb.cookie = b.cookie;
    lb.csrf = b.csrf;
    const { page, location } = await consent(lb, { clientId, redirectUri: REDIRECT, challenge, resource: `${listed.url}/mcp` });
    expect(page.text).toContain('Document &lt;i&gt;client&lt;/i&gt;');
    const t = await token(listed, { grant_type: 'authorization_code', code: location.searchParams.get('code')!, client_id: clientId, code_verifier: verifier });
    expect(t.status).toBe(200);
    expect((await mcp(listed, t.body.access_token)).status).toBe(200);
    // A document naming another client id is refused.
    doc = { ...doc, client_id: 'http://elsewhere.example/x.json' };
    const other = await b.request('GET', authorizeUrl({ clientId: `http://${host}/other.json`, redirectUri: REDIRECT, challenge }));
    expect(other.status).toBe(400);
  } finally {
    await listed.close();
    await new Promise<void>((r) => server.close(() => r()));
  }
});

test('registration: limited per address, capped in number, unused clients removed after 30 days', async () => {
  const limited = await startTestApp({ env: { OAUTH_REGISTRATIONS_PER_HOUR: '3', OAUTH_CLIENTS_MAX: '4' } });
  try {
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await register(limited, [REDIRECT])).status);
    expect(statuses).toEqual([201, 201, 201, 429, 429]);
    const flood = await register(limited, [REDIRECT]);
    expect(flood.body.error).toBe('too_many_requests');
  } finally {
    await limited.close();
  }
  const capped = await startTestApp({ rateLimit: false, env: { OAUTH_CLIENTS_MAX: '2' } });
  try {
    expect((await register(capped, [REDIRECT])).status).toBe(201);
    expect((await register(capped, [REDIRECT])).status).toBe(201);
    const full = await register(capped, [REDIRECT]);
    expect([full.status, full.body.error]).toEqual([429, 'too_many_requests']);
    await capped.deps.db.writes.execute('UPDATE oauth_clients SET lastUsedAt = NOW(3) - INTERVAL 31 DAY');
    expect((await register(capped, [REDIRECT])).status).toBe(201);
    const bad = await capped.request('POST', '/oauth/register', { body: { redirect_uris: ['javascript:alert(1)'] } });
    expect([bad.status, bad.body.error]).toEqual([400, 'invalid_client_metadata']);
  } finally {
    await capped.close();
  }
});
