/**
 * The OAuth 2.1 authorization server of /mcp (MCP_OAUTH=on), for connectors that sign the person in
 * rather than take a pasted key: discovery (RFC 9728, RFC 8414), dynamic client registration
 * (RFC 7591) and client metadata documents, /oauth/authorize with the consent page, /oauth/token
 * and /oauth/revoke. The MCP SDK's authorize, token and revocation handlers run the protocol
 * (parameter checks, exact redirect URIs with any port on loopback, PKCE S256) over our provider;
 * docs/mcp.md says where its other helpers did not fit.
 */
import { authorizationHandler } from '@modelcontextprotocol/sdk/server/auth/handlers/authorize.js';
import { revocationHandler } from '@modelcontextprotocol/sdk/server/auth/handlers/revoke.js';
import { tokenHandler } from '@modelcontextprotocol/sdk/server/auth/handlers/token.js';
import { InvalidTokenError, OAuthError, ServerError, TooManyRequestsError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import type { OAuthServerProvider } from '@modelcontextprotocol/sdk/server/auth/provider.js';
import cors from 'cors';
import express, { Router, type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { AppError } from '../errors';
import { ownOrigin } from '../http/auth';
import type { RateLimitHooks } from '../http/rate-limit';
import { SITE_ROUTES } from '../http/site-routes';
import { publicCtx, type Deps } from '../services/context';
import { findClient, registerClient } from '../services/oauth-clients';
import { challengeOfCode, exchangeAuthorizationCode, exchangeRefreshToken, OAUTH_SCOPES, revokeConnectorToken } from '../services/oauth-grants';
import { authorizeRefusalPage, decideConsent, isOAuthErrorBody, mcpResourceOf, showConsent } from './oauth-consent';

const base = (req: Request, deps: Deps) => ownOrigin(req, deps.config).replace(/\/+$/, '');

/** Where a client learns of the authorization server from a 401 of /mcp (RFC 9728: the resource_metadata parameter of WWW-Authenticate). */
export const resourceMetadataUrl = (req: Request, deps: Deps) => `${base(req, deps)}/.well-known/oauth-protected-resource${SITE_ROUTES.mcp.path}`;

function protectedResource(req: Request, deps: Deps) {
  return {
    resource: mcpResourceOf(req, deps),
    authorization_servers: [base(req, deps)],
    scopes_supported: [...OAUTH_SCOPES],
    bearer_methods_supported: ['header'],
    resource_name: 'Session Archive',
  };
}

function authorizationServer(req: Request, deps: Deps) {
  const b = base(req, deps);
  return {
    issuer: b,
    authorization_endpoint: `${b}/oauth/authorize`,
    token_endpoint: `${b}/oauth/token`,
    registration_endpoint: `${b}/oauth/register`,
    revocation_endpoint: `${b}/oauth/revoke`,
    response_types_supported: ['code'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: ['none'],
    revocation_endpoint_auth_methods_supported: ['none'],
    scopes_supported: [...OAUTH_SCOPES],
    client_id_metadata_document_supported: true,
  };
}

function provider(deps: Deps): OAuthServerProvider {
  const ctx = publicCtx(deps);
  return {
    clientsStore: { getClient: async (id) => (await findClient(ctx, id)) ?? undefined },
    authorize: (client, params, res) => showConsent(deps, client, params, res),
    challengeForAuthorizationCode: (client, code) => challengeOfCode(ctx, client.client_id, code),
    exchangeAuthorizationCode: (client, code, _verifier, redirectUri, resource) =>
      exchangeAuthorizationCode(ctx, client.client_id, code, redirectUri, resource?.href),
    exchangeRefreshToken: (client, token, scopes, resource) => exchangeRefreshToken(ctx, client.client_id, token, scopes, resource?.href),
    revokeToken: (client, request) => revokeConnectorToken(ctx, client.client_id, request.token),
    // /mcp authenticates its bearer tokens itself (keys, device tokens and these alike: src/http/auth.ts).
    verifyAccessToken: () => Promise.reject(new InvalidTokenError('not used')),
  };
}

/** An address's budget, spent before anything else; over it → 429 in OAuth's error shape. */
function addressLimit(hooks: Pick<RateLimitHooks, 'spendAddress'>, budget: 'oauthRegister' | 'oauthToken'): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    if (!hooks.spendAddress) return next();
    hooks.spendAddress(req, budget).then(
      () => next(),
      (err: unknown) => {
        if (!(err instanceof AppError) || err.code !== 'RATE_LIMITED') return next(err);
        res.setHeader('Cache-Control', 'no-store');
        res.status(429).json(new TooManyRequestsError(err.message).toResponseObject());
      },
    );
  };
}

/**
 * POST /oauth/register (RFC 7591). The SDK's registration handler is not used: it issues client
 * secrets (every client here is public, see services/oauth-clients.ts) and answers every refusal
 * 400, where a full registry is a 429.
 */
function registration(deps: Deps): RequestHandler {
  const ctx = publicCtx(deps);
  return async (req: Request, res: Response) => {
    res.setHeader('Cache-Control', 'no-store');
    if (req.method !== 'POST') {
      res.setHeader('Allow', 'POST');
      res.status(405).json({ error: 'method_not_allowed', error_description: 'POST a client registration' });
      return;
    }
    try {
      res.status(201).json(await registerClient(ctx, req.body));
    } catch (err) {
      if (!(err instanceof OAuthError) || err instanceof ServerError) throw err;
      res.status(err instanceof TooManyRequestsError ? 429 : 400).json(err.toResponseObject());
    }
  };
}

/**
 * The SDK's authorize handler answers JSON to what it cannot send back to the client (an unknown
 * client, a redirect it did not register, a parameter missing): fine for a program, a dead end for
 * the person whose browser the connector opened. A request that prefers HTML gets the same status
 * as a page saying what happened and what to do; others keep the JSON.
 */
const refusalsAsPages: RequestHandler = (req, res, next) => {
  if (req.accepts(['json', 'html']) === 'html') {
    const json = res.json.bind(res);
    res.json = (body: unknown) => {
      if (res.statusCode < 400 || !isOAuthErrorBody(body)) return json(body);
      authorizeRefusalPage(res, res.statusCode, body);
      return res;
    };
  }
  next();
};

const json =
  (doc: (req: Request) => object): RequestHandler =>
  (req, res) =>
    void res.setHeader('Cache-Control', 'max-age=300').json(doc(req));

/** The discovery documents and the /oauth endpoints, mounted before /mcp's JSON 404 of the discovery paths. */
export function oauthRouter(deps: Deps, hooks: Pick<RateLimitHooks, 'spendAddress'>): Router {
  const r = Router();
  const open = cors();
  const p = provider(deps);
  const smallJson = express.json({ limit: '64kb' });
  const form = express.urlencoded({ extended: false, limit: '64kb' });
  const R = SITE_ROUTES;
  r.get(
    R.oauthProtectedResource.path,
    open,
    json((req) => protectedResource(req, deps)),
  );
  r.get(
    R.oauthProtectedResourceMcp.path,
    open,
    json((req) => protectedResource(req, deps)),
  );
  r.get(
    R.oauthAuthorizationServer.path,
    open,
    json((req) => authorizationServer(req, deps)),
  );
  r.use(R.oauthRegister.path, open, addressLimit(hooks, 'oauthRegister'), smallJson, registration(deps));
  r.use(R.oauthToken.path, addressLimit(hooks, 'oauthToken'), tokenHandler({ provider: p, rateLimit: false }));
  r.use(R.oauthRevoke.path, addressLimit(hooks, 'oauthToken'), revocationHandler({ provider: p, rateLimit: false }));
  r.use(R.oauthAuthorize.path, refusalsAsPages, authorizationHandler({ provider: p, rateLimit: false }));
  r.post(R.oauthConsent.path, form, (req: Request, res: Response, next: NextFunction) => void decideConsent(deps, req, res).catch(next));
  return r;
}
