import express, { type Express, type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { AppError, MESSAGES } from './errors';
import { createGraphqlRouter } from './graphql';
import { refuseWritesOfReadOnlyKeys, requireAuth } from './http/auth';
import type { RateLimitHooks } from './http/rate-limit';
import { consoleRouter } from './http/console';
import { dbWatchdog } from './http/db-watchdog';
import { admission, closeUnreadBodies } from './http/admission';
import { longReads } from './http/long-reads';
import { jsonBody } from './http/body';
import { idempotency } from './http/idempotency';
import { errorHandler } from './http/errors';
import { requestContext } from './http/request-context';
import { malformedUrl, securityHeaders } from './http/security';
import type { Registry } from 'prom-client';
import { createMetrics } from './metrics';
import { MCP_BODY_BYTES, mcpRouter } from './mcp/router';
import { accountHandlers } from './rest/accounts';
import { archiveHandlers } from './rest/archive';
import type { Door } from './rest/context';
import type { Handlers } from './api/route';
import { deviceHandlers } from './rest/device';
import { docsRouter } from './rest/docs';
import { healthRouter } from './rest/health';
import { keyHandlers } from './rest/keys';
import { projectHandlers } from './rest/projects';
import { sessionHandlers } from './rest/sessions';
import { shareHandlers } from './rest/shares';
import { auditHandlers } from './rest/audit';
import { sharePageRouter } from './rest/share-page';
import { teamHandlers } from './rest/teams';
import { userHandlers } from './rest/users';
import { webhookHandlers } from './rest/webhooks';
import { GRAPHQL_ROUTE, REST_ROUTES, type RestRoutes } from './api/routes';
import { API_PREFIX, rateLimitOf, routeName, type HandlerWith, type NamedRoute } from './api/route';
import { routeDispatch } from './http/fast/route-dispatch';
import { SITE_ROUTES, type SiteRoute } from './http/site-routes';
import type { Deps } from './services/context';

/** Rate limiting plugs in here (per user, after authentication). */

export interface BuiltApp {
  app: Express;
  stop(): Promise<void>;
}

const pass = (_req: Request, _res: Response, next: NextFunction) => next();

const atOperation = (req: Request, _res: Response, next: NextFunction) => {
  req.atOperation = true;
  next();
};

/** An operation's handler as middleware: what it returns is the JSON body, sent with the declared status when there is one. */
function respond(route: NamedRoute, handle: (req: Request, res: Response) => unknown): RequestHandler {
  const statuses = Object.keys(route.responses).map(Number);
  const only = statuses.length === 1 ? statuses[0] : null;
  return async (req, res) => {
    req.atOperation = true;
    const body = await handle(req, res);
    if (route.streams || body === undefined || res.headersSent) return;
    if (only !== null) res.status(only);
    res.json(body);
  };
}

/** A declared operation and the middleware and handler it runs. */
interface Operation {
  route: NamedRoute;
  chain: RequestHandler[];
}

/** Literal segments before parameters, position by position; a declared HEAD before the GET of the same path. */
function routingOrder(a: NamedRoute, b: NamedRoute): number {
  const sa = a.path.split('/');
  const sb = b.path.split('/');
  if (sa.length !== sb.length) return sa.length - sb.length;
  for (let i = 0; i < sa.length; i++) {
    const pa = sa[i].startsWith('{');
    const pb = sb[i].startsWith('{');
    if (pa !== pb) return pa ? 1 : -1;
  }
  return Number(b.method === 'head') - Number(a.method === 'head');
}

/**
 * The operations as Express routes (the plain dispatch, FAST_PATHS=off; src/http/fast/route-dispatch.ts
 * is the fast one, with the same matching): Express answers a request with the first route that
 * matches its method and path, and a HEAD with the first GET when no HEAD route comes before it,
 * hence the order. No operation answers OPTIONS: such a request goes on, as the fast dispatch lets
 * it (Express's router would answer it with an `Allow` list of its own).
 */
function operationRouter(operations: Operation[]): RequestHandler {
  const router = express.Router();
  const sorted = operations.map((o, i) => ({ ...o, i })).sort((a, b) => routingOrder(a.route, b.route) || a.i - b.i);
  for (const { route, chain } of sorted) {
    const dispatched: RequestHandler = (req, _res, next) => {
      req.apiRoute = route;
      next();
    };
    router[route.method](API_PREFIX + route.path.replace(/\{(\w+)\}/g, ':$1'), dispatched, ...chain);
  }
  return (req, res, next) => (req.method === 'OPTIONS' ? next() : router(req, res, next));
}

/** What an app is given by the process it runs in (main.ts). */
interface ProcessParts {
  /** The process's own metrics (metrics.ts processMetrics), served on /metrics beside the app's. */
  metrics?: Registry;
}

/** The whole HTTP surface, without listening (tests and main.ts both use it). */
export async function buildApp(deps: Deps, hooks: RateLimitHooks = {}, ofProcess: ProcessParts = {}): Promise<BuiltApp> {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('trust proxy', deps.config.trustProxy);
  app.set('query parser', 'simple');

  // Admission control for request bodies (http/admission.ts); its figures go to /metrics.
  const admit = admission({
    bytesInFlight: deps.config.uploadBytesInFlight,
    perUser: deps.config.uploadsPerUser,
    maxBodyBytes: deps.config.maxBodyBytes,
    queueWaitMs: deps.config.uploadQueueWaitMs,
  });
  const metrics = deps.config.metricsEnabled
    ? createMetrics(deps, admit.stats, { beforeAuth: hooks.beforeAuth, onAuthFailure: hooks.onAuthFailure }, ofProcess.metrics)
    : null;
  // What every request runs first. Everything a request runs reads and writes content in this
  // service's store (several services may share a process: tests).
  const watchdog = dbWatchdog(deps.config, deps.logger);
  const front: RequestHandler[] = [
    ...(deps.withContent ? [(_req: Request, _res: Response, next: NextFunction) => deps.withContent!(next)] : []),
    requestContext(deps.logger, metrics?.onRequestFinished),
    ...securityHeaders(deps.config),
    closeUnreadBodies,
    watchdog.middleware(),
  ];

  const auth = requireAuth(deps, hooks.onAuthFailure, hooks.beforeAuth);
  // Slow bodies are cut off (http/body.ts), whatever the route.
  const slow = { minBytesPerSecond: deps.config.bodyMinBytesPerSecond, graceMs: deps.config.bodyMinRateGraceS * 1000 };
  const parse = jsonBody({ limit: deps.config.maxBodyBytes, slow, offload: deps.offload });
  // A session upload's body is parsed, validated, redacted and hashed in one trip to a worker
  // thread when large (src/offload); every other body is parsed before its handler.
  const parseUpload = jsonBody({ limit: deps.config.maxBodyBytes, slow, offload: deps.offload, defer: () => true });
  // Admission control runs after authentication (per user; an unauthenticated request never holds
  // upload capacity) and before a byte of the body is read. A body read as a stream (an import's
  // tar, under its own limit) still goes through admission (it reserves at most MAX_BODY_BYTES:
  // an import holds one session at a time).
  const bodyOf = (route: NamedRoute | null): RequestHandler => {
    const read = route?.rawBody ? null : route?.upload ? parseUpload : parse;
    return (req, res, next) => admit(req, res, () => (read ? read(req, res, next) : next()));
  };
  const idempotent = idempotency(deps);
  const rest = hooks.rest ?? pass;
  // GraphQL bodies have a limit of their own (1 MiB), not the upload limit.
  const graphqlBody = jsonBody({ limit: deps.config.maxGraphqlBodyBytes, slow });
  const graphql = await createGraphqlRouter(deps, { auth, rateLimit: hooks.graphql ?? pass, body: graphqlBody });

  // The REST operations of the route table (src/api/routes), dispatched by method and path.
  // Their public ones (sign-in, first run, reset links, device login, invitation lookup) read
  // small bodies; share links are read without an account, limited per address.
  const door: Door = {
    deps,
    hooks,
    publicBody: jsonBody({ limit: 64 * 1024, slow }),
    probeAuth: requireAuth(deps),
    // Downloads and exports that stream: a few per user, idle readers cut off (http/long-reads.ts).
    longReads: longReads({ perUser: deps.config.longReadsPerUser, idleMs: deps.config.longReadIdleS * 1000 }),
  };
  const handlers: Handlers<RestRoutes> = {
    ...projectHandlers(door),
    ...sessionHandlers(door),
    ...keyHandlers(door),
    ...archiveHandlers(door),
    ...accountHandlers(door),
    ...userHandlers(door),
    ...deviceHandlers(door),
    ...teamHandlers(door),
    ...shareHandlers(door),
    ...auditHandlers(door),
    ...webhookHandlers(door),
  };
  const shareReadLimit: RequestHandler = (req, _res, next) =>
    (hooks.spendAddress ? hooks.spendAddress(req, 'shareReads') : Promise.resolve()).then(() => next(), next);
  /** The limit a route outside the API's operations spends from, read from its declaration (http/site-routes.ts). */
  const limitOf = (route: SiteRoute): RequestHandler => ({ rest, graphql: hooks.graphql ?? pass, share_reads: shareReadLimit, none: pass })[route.rateLimit];
  /** What runs before an operation's handler, read from its declaration. */
  const middlewareOf = (route: NamedRoute): RequestHandler[] => {
    if (route.auth !== 'key') return rateLimitOf(route) === 'share_reads' ? [shareReadLimit] : [];
    const writes = route.method !== 'get' && route.method !== 'head' && !route.reads;
    // Idempotency-Key on every POST/PUT whose body is JSON (a streamed body is never digested).
    const keyed = (route.method === 'post' || route.method === 'put') && !route.rawBody;
    return [auth, rest, ...(writes ? [refuseWritesOfReadOnlyKeys] : []), bodyOf(route), ...(keyed ? [idempotent] : [])];
  };
  // The operations of the route table, each with what runs before its handler.
  const operations: Operation[] = REST_ROUTES.map((route) => {
    const h = handlers[route.id as keyof RestRoutes] as HandlerWith<unknown>['handle'] | HandlerWith<unknown>;
    const { use, handle } = typeof h === 'function' ? { use: [], handle: h } : h;
    const handler = respond(route, handle as (req: Request, res: Response) => unknown);
    if (route.auth === 'key') return { route, chain: [...middlewareOf(route), ...use, handler] };
    const before = [...use, ...middlewareOf(route)];
    return { route, chain: before.length ? [atOperation, ...before, handler] : [handler] };
  });
  if (deps.config.fastPaths) {
    // The fast dispatch runs `front` inside each operation's chain; any other request runs it here.
    app.use(routeDispatch(operations, front));
    app.use(front);
  } else {
    app.use(front);
    app.use(operationRouter(operations));
  }

  app.use(healthRouter(deps));
  if (metrics) app.use(metrics.router);

  // The MCP endpoint for coding agents (POST /mcp), its OAuth authorization server (MCP_OAUTH) and the discovery paths clients probe.
  app.use(mcpRouter(deps, { auth, rateLimit: limitOf(SITE_ROUTES.mcp), body: jsonBody({ limit: MCP_BODY_BYTES, slow }), hooks }));

  // GraphQL: the playground (GET text/html) and its assets need no token; operations do.
  app.use(
    routeName(GRAPHQL_ROUTE),
    (req: Request, _res: Response, next: NextFunction) => {
      req.apiRoute = GRAPHQL_ROUTE;
      next();
    },
    graphql.router,
  );
  // The OpenAPI document and its reference page need no token either.
  app.use(SITE_ROUTES.openApi.base, docsRouter());
  // The public page of a link (/s/<token>), under the same per-address limit as the link's reads.
  app.use(sharePageRouter(deps, door.probeAuth, limitOf(SITE_ROUTES.sharePage), deps.logger));

  // Any other path under the API: the middleware of an authenticated operation, then 404.
  app.use(
    SITE_ROUTES.apiOther.path,
    auth,
    limitOf(SITE_ROUTES.apiOther),
    refuseWritesOfReadOnlyKeys,
    bodyOf(null),
    idempotent,
    (_req: Request, _res: Response, next: NextFunction) => next(new AppError('NOT_FOUND', MESSAGES.notFound)),
  );

  // Unknown /api paths: 401 without a valid token (auth ran above for /api/v1), 404 with one.
  app.use(SITE_ROUTES.apiUnknown.path, auth, (_req: Request, _res: Response, next: NextFunction) => next(new AppError('NOT_FOUND', MESSAGES.notFound)));
  // The web console (single-page app) on its own routes, and its not-found page for a browser elsewhere;
  // every other request is a JSON 404.
  app.use(consoleRouter(deps.logger));
  app.use((_req: Request, _res: Response, next: NextFunction) => next(new AppError('NOT_FOUND', MESSAGES.notFound)));
  app.use(malformedUrl);
  app.use(errorHandler(deps.logger));

  return {
    app,
    async stop() {
      watchdog.stop();
      metrics?.close();
      await graphql.stop();
    },
  };
}
