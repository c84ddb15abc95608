/**
 * An MCP connector's side of OAuth for tests over plain HTTP: PKCE pairs, registration, the consent
 * page posted as a signed-in browser would (its hidden fields read from the page), token requests.
 */
import crypto from 'node:crypto';
import type { TestApp, TestResponse } from './app';
import type { Browser } from './cookie-client';

export function pkce(): { verifier: string; challenge: string } {
  const verifier = crypto.randomBytes(32).toString('base64url');
  return { verifier, challenge: crypto.createHash('sha256').update(verifier).digest('base64url') };
}

export const form = (fields: Record<string, string | undefined>) =>
  new URLSearchParams(Object.entries(fields).filter((e): e is [string, string] => e[1] !== undefined)).toString();

const FORM = { 'Content-Type': 'application/x-www-form-urlencoded' };

export async function register(app: TestApp, redirectUris: string[], name = 'Test connector'): Promise<TestResponse> {
  return app.request('POST', '/oauth/register', { body: { client_name: name, redirect_uris: redirectUris, token_endpoint_auth_method: 'none' } });
}

export const token = (app: TestApp, fields: Record<string, string | undefined>) => app.request('POST', '/oauth/token', { body: form(fields), headers: FORM });

export const revoke = (app: TestApp, fields: Record<string, string | undefined>) => app.request('POST', '/oauth/revoke', { body: form(fields), headers: FORM });

export interface AuthorizeParams {
  clientId: string;
  redirectUri: string;
  challenge: string;
  scope?: string;
  resource?: string;
  state?: string;
}

export const authorizeUrl = (p: AuthorizeParams) =>
  `/oauth/authorize?${form({
    response_type: 'code',
    client_id: p.clientId,
    redirect_uri: p.redirectUri,
    code_challenge: p.challenge,
    code_challenge_method: 'S256',
    scope: p.scope,
    resource: p.resource,
    state: p.state ?? 'st',
  })}`;

const hidden = (html: string, name: string) => new RegExp(`name="${name}" value="([^"]*)"`).exec(html)?.[1]?.replace(/&amp;/g, '&') ?? '';

/** Shows the consent page to the signed-in browser and answers it; the redirect's URL (code or error). */
export async function consent(
  b: Browser,
  p: AuthorizeParams,
  answer: { decision?: 'allow' | 'deny'; write?: boolean; teamId?: string } = {},
): Promise<{ page: TestResponse; location: URL }> {
  const page = await b.request('GET', authorizeUrl(p));
  if (page.status !== 200) throw new Error(`consent page: ${page.status} ${page.text.slice(0, 300)} ${String(page.headers.location)}`);
  const r = await b.request('POST', '/oauth/consent', {
    body: form({
      request: hidden(page.text, 'request'),
      csrf: hidden(page.text, 'csrf'),
      decision: answer.decision ?? 'allow',
      write: answer.write ? '1' : undefined,
      teamId: answer.teamId ?? '',
    }),
    headers: FORM,
  });
  if (r.status !== 302) throw new Error(`consent: ${r.status} ${r.text.slice(0, 300)}`);
  return { page, location: new URL(String(r.headers.location)) };
}

/** Registration, consent and the code's exchange: a grant's first tokens. */
export async function connect(app: TestApp, b: Browser, opts: { scope?: string; write?: boolean; name?: string } = {}) {
  const redirectUri = 'http://127.0.0.1:9/callback';
  const resource = `${app.deps.config.publicUrl ?? app.url}/mcp`;
  const client = await register(app, [redirectUri], opts.name);
  const clientId = client.body.client_id as string;
  const { verifier, challenge } = pkce();
  const { location } = await consent(b, { clientId, redirectUri, challenge, scope: opts.scope, resource }, { write: opts.write });
  const code = location.searchParams.get('code')!;
  const t = await token(app, {
    grant_type: 'authorization_code',
    code,
    code_verifier: verifier,
    client_id: clientId,
    redirect_uri: redirectUri,
    resource,
  });
  if (t.status !== 200) throw new Error(`token: ${t.status} ${t.text}`);
  return { clientId, redirectUri, tokens: t.body as { access_token: string; refresh_token: string; scope: string; expires_in: number } };
}
