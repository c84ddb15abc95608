/**
 * POST /mcp: the Model Context Protocol's Streamable HTTP transport, stateless (no protocol
 * session: any instance answers any request; JSON responses, no event streams). In front of the
 * SDK: a foreign Origin → 403, our authentication (an API key or a device access token; 401 with
 * WWW-Authenticate), the per-user REST rate limit (each call of a JSON-RPC batch counted; batches
 * refused for the revisions that removed them: ./batches.ts), a 1 MiB body and the request id. GET
 * and DELETE → 405. With MCP_OAUTH on (./oauth.ts), a 401 names the protected-resource document
 * and a connector's token must name this endpoint as its resource; off, the OAuth discovery paths
 * clients probe answer a JSON 404 and the 401 names only the realm. Keys work either way.
 */
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { Router, type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import type { Config } from '../config';
import { AppError, unauthenticated } from '../errors';
import { ctxOf } from '../http/request-context';
import { SITE_ROUTES } from '../http/site-routes';
import '../http/types';
import type { Deps } from '../services/context';
import { batchRefusal, countBatchCalls } from './batches';
import { createMcpServer } from './server';
import { oauthRouter, resourceMetadataUrl } from './oauth';
import { mcpResourceOf } from './oauth-consent';
import type { RateLimitHooks } from '../http/rate-limit';

/** Body limit of /mcp (a JSON-RPC message; transcripts are never sent in). */
export const MCP_BODY_BYTES = 1024 * 1024;
const WWW_AUTHENTICATE = 'Bearer realm="session-archive"';

interface McpMiddleware {
  auth: RequestHandler;
  rateLimit: RequestHandler;
  /** JSON body parsing with the MCP_BODY_BYTES cap (and the slow-body rules of every route). */
  body: RequestHandler;
  /** The per-address budgets of the OAuth endpoints. */
  hooks: Pick<RateLimitHooks, 'spendAddress'>;
}

/** The service's own origin: PUBLIC_URL's, else the one this request was addressed to. */
const originOf = (req: Request, config: Config) => config.publicUrl?.replace(/\/+$/, '') ?? `${req.protocol}://${req.get('host') ?? ''}`;

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * A browser's request (it carries `Origin`) is let through only from the service's own origin:
 * PUBLIC_URL's when set; without it, a loopback origin that is also the Host the request was sent
 * to. A Host-derived origin alone would let a DNS-rebinding page (evil.example resolving to this
 * machine: Host and Origin both evil.example) through.
 */
function originAllowed(req: Request, config: Config, origin: string): boolean {
  try {
    const o = new URL(origin);
    if (config.publicUrl) return o.origin === new URL(config.publicUrl).origin;
    return LOOPBACK.has(o.hostname) && o.host === req.get('host');
  } catch {
    return false;
  }
}

const jsonRpcError = (res: Response, status: number, message: string, code = -32000) =>
  res.status(status).json({ jsonrpc: '2.0', error: { code, message }, id: null });

export function mcpRouter(deps: Deps, mw: McpMiddleware): Router {
  const r = Router();
  const body = mw.body;
  const oauth = deps.config.oauth.enabled;
  const challenge = (req: Request, error?: string) =>
    oauth ? `Bearer resource_metadata="${resourceMetadataUrl(req, deps)}"${error ? `, error="${error}"` : ''}` : WWW_AUTHENTICATE;

  if (oauth) r.use(oauthRouter(deps, mw.hooks));
  // OAuth discovery (RFC 9728, RFC 8414, OpenID) without an OAuth server, and OpenID's always: a JSON 404, never the console's page.
  r.use(SITE_ROUTES.oauthDiscovery.path, (_req: Request, res: Response) => {
    res.status(404).json({ success: false, error: 'Not found: this server has no OAuth authorization server; send an API key as a Bearer token' });
  });

  r.all(
    SITE_ROUTES.mcp.path,
    (req: Request, res: Response, next: NextFunction) => {
      if (req.method !== 'POST') {
        res.setHeader('Allow', 'POST');
        return jsonRpcError(res, 405, 'Method not allowed: this endpoint is stateless and answers POST only');
      }
      // DNS rebinding and cross-site pages: a browser's request from another origin is refused.
      const origin = req.get('origin');
      if (origin !== undefined && !originAllowed(req, deps.config, origin)) return next(new AppError('FORBIDDEN', 'Forbidden origin'));
      // Cookies never authenticate here: only an Authorization header (a page cannot set one cross-site).
      if (req.get('authorization') === undefined) {
        res.setHeader('WWW-Authenticate', challenge(req));
        return next(unauthenticated());
      }
      mw.auth(req, res, (err?: unknown) => {
        if (err instanceof AppError && err.code === 'UNAUTHENTICATED') res.setHeader('WWW-Authenticate', challenge(req, 'invalid_token'));
        // A connector's token is for the resource its grant names (RFC 8707): this endpoint, or nothing here.
        else if (!err && req.user?.resource !== undefined && req.user.resource !== mcpResourceOf(req, deps)) {
          res.setHeader('WWW-Authenticate', challenge(req, 'invalid_token'));
          return next(unauthenticated());
        }
        next(err);
      });
    },
    mw.rateLimit,
    body,
    async (req: Request, res: Response, next: NextFunction) => {
      try {
        if (req.body === undefined) throw new AppError('VALIDATION_ERROR', 'Missing JSON-RPC message in request body');
        const batch = Array.isArray(req.body) ? (req.body as unknown[]) : null;
        const refusal = batch && batchRefusal(req, batch);
        if (refusal) return jsonRpcError(res, 400, refusal, -32600);
        const server = createMcpServer({ ctx: ctxOf(req, deps), origin: originOf(req, deps.config) });
        const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
        res.once('close', () => {
          void transport.close();
          void server.close();
        });
        await server.connect(transport);
        // Each call of a batch is a request of its own for the rate limit (this POST paid for one).
        if (batch) countBatchCalls(transport, () => new Promise((resolve) => void mw.rateLimit(req, res, resolve)));
        await transport.handleRequest(req, res, req.body);
      } catch (err) {
        next(err);
      }
    },
  );
  return r;
}
