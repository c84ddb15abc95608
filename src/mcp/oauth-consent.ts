/**
 * The consent step of /oauth/authorize: the person signs in with the console (a browser session;
 * without one they are sent to /sign-in and back), then a page of our own says which client asks
 * (its name is the client's own words: escaped like any hostile text), where it will be sent back
 * (the redirect's host), whose account is signed in, what it may do (`archive:read` always;
 * `archive:write` only when the client asked and the box is ticked) and which team new projects go
 * to. Allowing posts to /oauth/consent with the session's CSRF token and the request, signed by
 * the service, so nothing of it can be changed on the way. Requests refused before anything can go
 * back to the client get a page of their own here too (authorizeRefusalPage).
 */
import crypto from 'node:crypto';
import type { AuthorizationParams } from '@modelcontextprotocol/sdk/server/auth/provider.js';
import type { OAuthClientInformationFull } from '@modelcontextprotocol/sdk/shared/auth.js';
import { InvalidTargetError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import type { Request, Response } from 'express';
import { ownOrigin, sessionCookie } from '../http/auth';
import { resolveBrowserSession, type BrowserSession } from '../services/browser-sessions';
import type { Deps } from '../services/context';
import { issueAuthorizationCode, keyScopesOf, OAUTH_SCOPES } from '../services/oauth-grants';
import { listTeams } from '../services/teams';
import { accountOf } from '../services/users';
import { roleOf } from '../domain/roles';
import { ctxOf } from '../http/request-context';
import { SITE_ROUTES } from '../http/site-routes';

const REQUEST_VALID_MS = 30 * 60_000;

/** What the consent form carries from the page to the decision, signed. */
interface ConsentRequest {
  clientId: string;
  clientName: string;
  redirectUri: string;
  codeChallenge: string;
  resource: string;
  state?: string;
  /** The client asked for archive:write. */
  askedWrite: boolean;
  userId: string;
  exp: number;
}

const keyOf = (secret: string) => crypto.createHmac('sha256', secret).update('session-archive oauth consent v1').digest();

function sign(secret: string, req: ConsentRequest): string {
  const body = Buffer.from(JSON.stringify(req)).toString('base64url');
  return `${body}.${crypto.createHmac('sha256', keyOf(secret)).update(body).digest('base64url')}`;
}

function verify(secret: string, signed: unknown): ConsentRequest | null {
  if (typeof signed !== 'string' || signed.length > 16_000) return null;
  const [body, mac] = signed.split('.');
  if (!body || !mac) return null;
  const want = crypto.createHmac('sha256', keyOf(secret)).update(body).digest();
  const got = Buffer.from(mac, 'base64url');
  if (got.length !== want.length || !crypto.timingSafeEqual(got, want)) return null;
  const req = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as ConsentRequest;
  return req.exp > Date.now() ? req : null;
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const esc = (s: string) => s.replace(/[&<>"']/g, (c) => ESCAPES[c]);

/** The console's look (its sign-in card, colours and focus ring), kept here because the page has no script and no bundle. */
const STYLE =
  "body{margin:0;font:16px/1.5 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;color:#1b1f24;background:#f6f7f9}" +
  'main{max-width:30rem;margin:48px auto;padding:24px;background:#fff;border-radius:8px;box-shadow:0 1px 3px #0002}' +
  'h1{font-size:1.4rem;line-height:1.3;margin-top:0;overflow-wrap:anywhere}a{color:#0b57d0}.muted{color:#4b5563}' +
  'fieldset{border:1px solid #d0d5dd;border-radius:6px;margin:1rem 0;padding:8px 12px}fieldset label{display:flex;gap:8px;align-items:baseline}' +
  'select{font:inherit;padding:4px}.actions{display:flex;flex-wrap:wrap;gap:12px}' +
  'button{font:inherit;padding:6px 14px;border-radius:4px;border:1px solid #374151;background:#fff;color:#1b1f24;cursor:pointer}' +
  'button.primary{background:#0b57d0;border-color:#0b57d0;color:#fff}' +
  'a:focus-visible,button:focus-visible,select:focus-visible,input:focus-visible{outline:3px solid #f0b400;outline-offset:2px}' +
  '@media (max-width:520px){main{margin:24px 12px;padding:16px}}';
const STYLE_HASH = `'sha256-${crypto.createHash('sha256').update(STYLE).digest('base64')}'`;
/** No script at all; the style above by its hash; never framed. The form posts to this origin, then redirects to the client. */
const CSP = `default-src 'none'; style-src ${STYLE_HASH}; frame-ancestors 'none'; base-uri 'none'`;

function page(res: Response, status: number, title: string, body: string): void {
  res.status(status);
  res.setHeader('Content-Security-Policy', CSP);
  res.setHeader('Cache-Control', 'no-store');
  // The form's POST carries this origin (under no-referrer a browser sends `Origin: null`), nothing goes elsewhere.
  res.setHeader('Referrer-Policy', 'same-origin');
  res.setHeader('Content-Type', 'text/html; charset=utf-8');
  res.send(
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">` +
      `<title>${esc(title)} · Session Archive</title><style>${STYLE}</style></head><body><main>${body}</main></body></html>`,
  );
}

async function browserSession(req: Request, deps: Deps): Promise<BrowserSession | null> {
  const token = sessionCookie(req);
  return token ? resolveBrowserSession(deps.db.writes, token) : null;
}

/** The request's user from a browser session, as the API's middleware would set it. */
function signIn(req: Request, session: BrowserSession): void {
  req.user = { id: session.userId, keyId: null, role: roleOf(session.role), sessionTokenHash: session.tokenHash, memberships: session.memberships };
}

/** The resource this service's MCP endpoint is (RFC 8707, RFC 9728). */
export const mcpResourceOf = (req: Request, deps: Deps) => `${ownOrigin(req, deps.config).replace(/\/+$/, '')}${SITE_ROUTES.mcp.path}`;

/**
 * The provider's `authorize` (the SDK's handler has checked the client, the redirect URI and PKCE's
 * presence): the sign-in detour, the scope and resource checks, then the consent page.
 */
export async function showConsent(deps: Deps, client: OAuthClientInformationFull, params: AuthorizationParams, res: Response): Promise<void> {
  const req = res.req;
  const resource = mcpResourceOf(req, deps);
  if (params.resource && params.resource.href !== resource && params.resource.href !== `${resource}/`) {
    throw new InvalidTargetError(`This server issues tokens for ${resource} only`);
  }
  // Words it does not know (openid, offline_access, …) are not granted; the token answer says what was.
  const scopes = keyScopesOf((params.scopes ?? []).filter((w) => (OAUTH_SCOPES as readonly string[]).includes(w)))!;
  const session = await browserSession(req, deps);
  if (!session) {
    res.redirect(302, `/sign-in?next=${encodeURIComponent(req.originalUrl)}`);
    return;
  }
  signIn(req, session);
  const ctx = ctxOf(req, deps);
  const [account, allTeams] = await Promise.all([accountOf(ctx, session.userId), listTeams(ctx)]);
  if (!account) {
    res.redirect(302, `/sign-in?next=${encodeURIComponent(req.originalUrl)}`);
    return;
  }
  const teams = allTeams.filter((t) => t.role === 'admin' || t.role === 'member');
  const askedWrite = scopes.includes('write');
  const clientName = client.client_name ?? client.client_id;
  const signed = sign(deps.config.jwtSecret, {
    clientId: client.client_id,
    clientName,
    redirectUri: params.redirectUri,
    codeChallenge: params.codeChallenge,
    resource,
    ...(params.state !== undefined ? { state: params.state } : {}),
    askedWrite,
    userId: session.userId,
    exp: Date.now() + REQUEST_VALID_MS,
  });
  const host = new URL(params.redirectUri).host || params.redirectUri;
  const options = [`<option value="">Personal</option>`, ...teams.map((t) => `<option value="${esc(t.id)}">${esc(t.name)}</option>`)].join('');
  page(
    res,
    200,
    'Connect an assistant',
    `<h1>Allow <strong id="client-name">${esc(clientName)}</strong> to use your archive?</h1>` +
      `<p class="muted">After you decide, you are sent back to <strong id="redirect-host">${esc(host)}</strong>.</p>` +
      // Whose archive this is: a person with two accounts sees which one the grant is for.
      `<p>Signed in as <strong id="signed-in-as">${esc(account.email)}</strong>. ` +
      `Not you? Sign out in the <a href="/">console</a>, then start again from your assistant.</p>` +
      `<form method="post" action="/oauth/consent">` +
      `<input type="hidden" name="request" value="${esc(signed)}"><input type="hidden" name="csrf" value="${esc(session.csrfToken)}">` +
      `<fieldset><legend>What it may do</legend>` +
      `<label><input type="checkbox" name="read" checked disabled> archive:read — search and read your sessions</label>` +
      (askedWrite ? `<label><input type="checkbox" name="write" value="1"> archive:write — also change and upload sessions</label>` : '') +
      `</fieldset>` +
      `<p><label>Upload new projects to <select name="teamId">${options}</select></label></p>` +
      `<p class="actions"><button class="primary" type="submit" name="decision" value="allow">Allow</button>` +
      `<button type="submit" name="decision" value="deny">Deny</button></p>` +
      `</form>`,
  );
}

/** An OAuth error answer (RFC 6749 §5.2's shape), as the SDK's handlers write it. */
interface OAuthErrorBody {
  error: string;
  error_description?: string;
}

export const isOAuthErrorBody = (body: unknown): body is OAuthErrorBody =>
  typeof body === 'object' && body !== null && typeof (body as OAuthErrorBody).error === 'string';

/**
 * What a person's browser shows for an /oauth/authorize request refused before anything could be
 * sent back to the client (an unknown client, a redirect it did not register, a parameter
 * missing): what happened and what to do, with the refusal's own status. The description is the
 * SDK's words about the client's request, shown as text.
 */
export function authorizeRefusalPage(res: Response, status: number, refusal: OAuthErrorBody): void {
  const start = '<p>Start again from your assistant.</p>';
  if (status >= 500) return page(res, status, 'Something went wrong', `<h1>Something went wrong</h1><p>Nothing was shared.</p>${start}`);
  if (refusal.error === 'invalid_client') {
    return page(
      res,
      status,
      'Assistant not known',
      '<h1>This assistant is not known here</h1>' +
        '<p>The connector that sent you here asked with a registration this server does not have: registrations unused for ' +
        '30 days are removed, and one made with another server does not carry over. Nothing was shared.</p>' +
        '<p>Remove the connector in your assistant and add it again; it registers anew.</p>',
    );
  }
  if (refusal.error_description === 'Unregistered redirect_uri') {
    return page(
      res,
      status,
      'Not sent back',
      '<h1>This request cannot go back to the assistant</h1>' +
        '<p>The connector asked to send you back to an address it did not register, so nothing is sent there. Nothing was shared.</p>' +
        '<p>Starting again from your assistant will meet the same answer until its maker mends it.</p>',
    );
  }
  return page(
    res,
    status,
    'Request refused',
    '<h1>This request to connect an assistant was refused</h1>' +
      `<p>The connector's request is not one this server can answer: <span id="refusal">${esc(refusal.error_description ?? refusal.error)}</span>. ` +
      'Nothing was shared.</p>' +
      start,
  );
}

function backTo(redirectUri: string, params: Record<string, string | undefined>): string {
  const url = new URL(redirectUri);
  for (const [k, v] of Object.entries(params)) if (v !== undefined) url.searchParams.set(k, v);
  return url.href;
}

const sameSecret = (a: unknown, b: string) => typeof a === 'string' && a.length === b.length && crypto.timingSafeEqual(Buffer.from(a), Buffer.from(b));

/** POST /oauth/consent: the person's decision, from the page above (same origin, CSRF token, signed request). */
export async function decideConsent(deps: Deps, req: Request, res: Response): Promise<void> {
  const session = await browserSession(req, deps);
  const body = (req.body ?? {}) as Record<string, unknown>;
  const origin = req.get('origin');
  const request = verify(deps.config.jwtSecret, body.request);
  if (!session || !sameSecret(body.csrf, session.csrfToken) || (origin !== undefined && origin !== ownOrigin(req, deps.config))) {
    return page(res, 403, 'Not allowed', '<h1>This request cannot be confirmed</h1><p>Sign in to the console and start again from your assistant.</p>');
  }
  if (!request || request.userId !== session.userId) {
    return page(res, 400, 'Expired', '<h1>This request has expired</h1><p>Start again from your assistant.</p>');
  }
  if (body.decision !== 'allow') {
    res.redirect(302, backTo(request.redirectUri, { error: 'access_denied', error_description: 'The person declined', state: request.state }));
    return;
  }
  signIn(req, session);
  const teamId = typeof body.teamId === 'string' && body.teamId !== '' ? body.teamId : null;
  const code = await issueAuthorizationCode(ctxOf(req, deps), {
    clientId: request.clientId,
    clientName: request.clientName,
    redirectUri: request.redirectUri,
    codeChallenge: request.codeChallenge,
    resource: request.resource,
    write: request.askedWrite && body.write === '1',
    teamId,
  });
  res.redirect(302, backTo(request.redirectUri, { code, state: request.state }));
}
