/**
 * The official MCP TypeScript SDK's client-side OAuth against the service, end to end: discovery
 * from the 401, dynamic registration, PKCE, the consent page answered in a real Chromium signed
 * in to the console, the code's exchange, tools called with the token, a refresh, and revocation.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { auth, UnauthorizedError, type OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { Browser } from 'playwright-core';
import { createUser } from '../../src/services/users';
import { operatorCtx } from '../../src/services/context';
import { startTestApp, type TestApp } from '../support/app';
import { launchBrowser, seriousAxeViolations } from '../support/chromium';
import { revoke, token } from '../support/oauth';

const PASSWORD = 'correct horse battery staple';
const REDIRECT = 'http://127.0.0.1:9/callback';

/** What a connector keeps: in memory. */
class MemoryProvider implements OAuthClientProvider {
  client?: OAuthClientInformationMixed;
  saved?: OAuthTokens;
  verifier = '';
  authUrl?: URL;
  get redirectUrl() {
    return REDIRECT;
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'SDK <b>connector</b>',
      redirect_uris: [REDIRECT],
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'],
    };
  }
  clientInformation() {
    return this.client;
  }
  saveClientInformation(c: OAuthClientInformationMixed) {
    this.client = c;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(t: OAuthTokens) {
    this.saved = t;
  }
  redirectToAuthorization(url: URL) {
    this.authUrl = url;
  }
  saveCodeVerifier(v: string) {
    this.verifier = v;
  }
  codeVerifier() {
    return this.verifier;
  }
}

let app: TestApp;
let browser: Browser;
let email: string;

beforeAll(async () => {
  app = await startTestApp({ rateLimit: false });
  email = `oauth-${process.pid}-${Date.now()}@example.test`;
  await createUser(operatorCtx(app.deps.db), email, 'Connector user', { password: PASSWORD });
  browser = await launchBrowser();
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await app?.close();
});

test('registration, PKCE, consent in Chromium, token, tools, refresh and revocation with the SDK client', async () => {
  const mcpUrl = new URL('/mcp', app.url);
  const provider = new MemoryProvider();

  // 1. The SDK meets the 401, discovers the server, registers and sends the person to /oauth/authorize.
  const first = new Client({ name: 'oauth-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider });
  await expect(first.connect(transport)).rejects.toBeInstanceOf(UnauthorizedError);
  expect(provider.client?.client_id).toMatch(/^[0-9a-f-]{36}$/);
  const authUrl = provider.authUrl!;
  expect(authUrl.pathname).toBe('/oauth/authorize');
  expect(authUrl.searchParams.get('code_challenge_method')).toBe('S256');
  expect(authUrl.searchParams.get('resource')).toBe(`${app.url}/mcp`);

  // 2. The person: not signed in → the console's sign-in, then the consent page, in a real browser.
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    let callback: URL | null = null;
    await page.route(`${REDIRECT}**`, async (route) => {
      callback = new URL(route.request().url());
      await route.fulfill({ status: 200, contentType: 'text/plain', body: 'done' });
    });
    const signedOut = await page.goto(authUrl.href);
    expect(new URL(page.url()).pathname).toBe('/sign-in');
    expect(new URL(page.url()).searchParams.get('next')).toBe(`${authUrl.pathname}${authUrl.search}`);
    expect(signedOut).not.toBeNull();
    // The sign-in says why the person is there.
    await expect(page.locator('#sign-in-purpose').textContent()).resolves.toMatch(/^Sign in to connect an assistant to your archive\./);
    const signIn = await context.request.post(`${app.url}/api/v1/auth/sign-in`, { data: { email, password: PASSWORD } });
    expect(signIn.status()).toBe(200);
    await page.goto(authUrl.href);
    // The client's name is its own words: shown as text, never as markup.
    await expect(page.locator('#client-name').textContent()).resolves.toBe('SDK <b>connector</b>');
    expect(await page.locator('#client-name b').count()).toBe(0);
    await expect(page.locator('#redirect-host').textContent()).resolves.toBe('127.0.0.1:9');
    // Whose archive the grant is for, and a page that passes axe as the console's do.
    await expect(page.locator('#signed-in-as').textContent()).resolves.toBe(email);
    expect(await seriousAxeViolations(page)).toEqual([]);
    // The SDK asks for every scope the resource lists; archive:write is offered unticked, and left so.
    await expect(page.getByLabel(/archive:write/).isChecked()).resolves.toBe(false);
    await expect(page.getByLabel(/archive:read/).isChecked()).resolves.toBe(true);
    await expect(page.getByLabel('Upload new projects to').inputValue()).resolves.toBe('');
    await page.getByRole('button', { name: 'Allow' }).click();
    await page.waitForURL(`${REDIRECT}**`);
    expect(callback).not.toBeNull();
    const code = callback!.searchParams.get('code')!;
    expect(callback!.searchParams.get('state')).toBe(authUrl.searchParams.get('state'));

    // 3. The code for tokens, then the tools with them.
    await transport.finishAuth(code);
    const tokens = provider.saved!;
    expect(tokens).toMatchObject({ token_type: 'Bearer', expires_in: 3600, scope: 'archive:read' });
    const client = new Client({ name: 'oauth-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider }));
    const tools = (await client.listTools()).tools.map((t) => t.name);
    expect(tools).toEqual(expect.arrayContaining(['search_sessions', 'list_projects', 'search', 'fetch']));
    const listed = await client.callTool({ name: 'list_projects', arguments: {} });
    expect(listed.isError).toBeFalsy();
    await client.close();

    // 4. The grant is on the API keys page as `<client name> (connector)`, read-only.
    const signedInKeys = await context.request.get(`${app.url}/api/v1/keys`);
    const grant = (await signedInKeys.json()).data.keys.find((k: any) => k.name === 'SDK <b>connector</b> (connector)');
    expect(grant).toMatchObject({ scopes: ['read'], revokedAt: null });

    // 5. A refresh through the SDK rotates both tokens; the old refresh token is spent.
    const before = provider.saved!;
    await expect(auth(provider, { serverUrl: mcpUrl })).resolves.toBe('AUTHORIZED');
    const after = provider.saved!;
    expect(after.refresh_token).toBeDefined();
    expect(after.refresh_token).not.toBe(before.refresh_token);
    const init = { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} };
    const headers = { Accept: 'application/json, text/event-stream', 'MCP-Protocol-Version': '2025-06-18' };
    expect((await app.request('POST', '/mcp', { token: after.access_token, body: init, headers })).status).toBe(200);

    // 6. Revocation (RFC 7009): the grant's next call is a 401 naming the resource metadata.
    const clientId = (provider.client as { client_id: string }).client_id;
    expect((await revoke(app, { token: after.refresh_token, client_id: clientId })).status).toBe(200);
    const refused = await app.request('POST', '/mcp', { token: after.access_token, body: init, headers });
    expect(refused.status).toBe(401);
    expect(refused.headers['www-authenticate']).toContain(`resource_metadata="${app.url}/.well-known/oauth-protected-resource/mcp"`);
    const spent = await token(app, { grant_type: 'refresh_token', refresh_token: after.refresh_token!, client_id: clientId });
    expect([spent.status, spent.body.error]).toEqual([400, 'invalid_grant']);
  } finally {
    await context.close();
  }
}, 120_000);
