import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import { AppError, MESSAGES } from './errors';
import { createGraphqlRouter } from './graphql';
import { refuseWritesOfReadOnlyKeys, requireAuth } from './http/auth';
import type { RateLimitHooks } from './http/rate-limit';
import { consoleRouter } from './http/console';
import { dbWatchdog } from './http/db-watchdog';
import { admission, closeUnreadBodies } from './http/admission';
import { jsonBody } from './http/body';
import { idempotency } from './http/idempotency';
import { errorHandler } from './http/errors';
import { requestContext } from './http/request-context';
import { malformedUrl, securityHeaders } from './http/security';
import { createMetrics } from './metrics';
import { MCP_BODY_BYTES, mcpRouter } from './mcp/router';
import { billingRouter } from './rest/billing';
import { healthRouter } from './rest/health';
import { docsRouter } from './rest/docs';
import { exportsRouter } from './rest/exports';
import { accountRouter, publicAuthRouter } from './rest/auth';
import { deviceCodesRouter, deviceLoginRouter } from './rest/device';
import { keysRouter } from './rest/keys';
import { projectsRouter } from './rest/projects';
import { resumeRouter } from './rest/resume';
import { sessionsRouter } from './rest/sessions';
import { publicShareRouter, sharesRouter } from './rest/shares';
import { sharePageRouter } from './rest/share-page';
import { usersRouter } from './rest/users';
import { invitationLookupRouter, teamsRouter } from './rest/teams';
import type { Deps } from './services/context';

/** Rate limiting plugs in here (per user, after authentication). */
export type { RateLimitHooks } from './http/rate-limit';

export interface BuiltApp {
  app: Express;
  stop(): Promise<void>;
}

const pass = (_req: Request, _res: Response, next: NextFunction) => next();

/** The whole HTTP surface, without listening (tests and main.ts both use it). */
export async function buildApp(deps: Deps, hooks: RateLimitHooks = {}): Promise<BuiltApp> {
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
  const metrics = deps.config.metricsEnabled ? createMetrics(deps, admit.stats, { beforeAuth: hooks.beforeAuth, onAuthFailure: hooks.onAuthFailure }) : null;
  // Everything a request runs reads and writes content in this service's store (several services may share a process: tests).
  if (deps.withContent) app.use((_req: Request, _res: Response, next: NextFunction) => deps.withContent!(next));
  app.use(requestContext(deps.logger, metrics?.onRequestFinished));
  app.use(securityHeaders(deps.config));
  app.use(closeUnreadBodies);
  const watchdog = dbWatchdog(deps.config, deps.logger);
  app.use(watchdog.middleware());
  app.use(healthRouter(deps));
  if (metrics) app.use(metrics.router);

  const auth = requireAuth(deps, hooks.onAuthFailure, hooks.beforeAuth);
  // Slow bodies are cut off (http/body.ts), whatever the route.
  const slow = { minBytesPerSecond: deps.config.bodyMinBytesPerSecond, graceMs: deps.config.bodyMinRateGraceS * 1000 };
  // A session upload's body is parsed, validated, redacted and hashed in one trip to a worker
  // thread when large (src/offload); every other body is parsed before its route.
  const isSessionUpload = (req: Request) => req.method === 'PUT' && /^\/projects\/[^/]+\/sessions\/[^/]+\/?$/.test(req.path);
  const parse = jsonBody({ limit: deps.config.maxBodyBytes, slow, offload: deps.offload, defer: isSessionUpload });
  // Admission control runs after authentication (per user; an unauthenticated request never holds
  // upload capacity) and before a byte of the body is read.
  // An import's body is a tar the route reads as a stream, under its own limit (MAX_IMPORT_BYTES);
  // admission still applies (it reserves at most MAX_BODY_BYTES: an import holds one session at a time).
  const isImport = (req: Request) => req.method === 'POST' && /^\/import\/?$/i.test(req.path);
  const body = (req: Request, res: Response, next: NextFunction) => admit(req, res, () => (isImport(req) ? next() : parse(req, res, next)));
  // GraphQL bodies have a limit of their own (1 MiB), not the upload limit.
  const graphqlBody = jsonBody({ limit: deps.config.maxGraphqlBodyBytes, slow });
  const graphql = await createGraphqlRouter(deps, { auth, rateLimit: hooks.graphql ?? pass, body: graphqlBody });

  // The MCP endpoint for coding agents (POST /mcp) and the OAuth discovery paths they probe.
  app.use(mcpRouter(deps, { auth, rateLimit: hooks.rest ?? pass, body: jsonBody({ limit: MCP_BODY_BYTES, slow }) }));

  // GraphQL: the playground (GET text/html) and its assets need no token; operations do.
  app.use('/api/v1/graphql', graphql.router);
  // The OpenAPI document and its reference page need no token either.
  app.use('/api/v1', docsRouter());

  // Sign-in, first run, reset links and device login work without a session or key;
  // their bodies are small.
  const publicBody = jsonBody({ limit: 64 * 1024, slow });
  app.use('/api/v1', publicAuthRouter(deps, hooks, publicBody), deviceLoginRouter(deps, hooks, publicBody), invitationLookupRouter(deps, hooks, publicBody));
  // Share links are read without an account (public links); reads are limited per address.
  const shareReadLimit = (req: Request, _res: Response, next: NextFunction) =>
    (hooks.spendAddress ? hooks.spendAddress(req, 'shareReads') : Promise.resolve()).then(() => next(), next);
  app.use('/api/v1', publicShareRouter(deps, requireAuth(deps), shareReadLimit));
  // The public page of a link (/s/<token>), under the same per-address limit.
  app.use(sharePageRouter(deps, requireAuth(deps), shareReadLimit, deps.logger));

  const api = express.Router();
  // Idempotency-Key is not honoured on an import: its body streams by, never digested.
  const idem = idempotency(deps);
  const idempotent = (req: Request, res: Response, next: NextFunction) => (isImport(req) ? next() : idem(req, res, next));
  api.use(auth, hooks.rest ?? pass, refuseWritesOfReadOnlyKeys, body, idempotent);
  api.use(accountRouter(deps));
  api.use(usersRouter(deps));
  api.use(deviceCodesRouter(deps));
  api.use(projectsRouter(deps));
  api.use(sessionsRouter(deps));
  api.use(keysRouter(deps));
  api.use(teamsRouter(deps));
  api.use(sharesRouter(deps));
  api.use(billingRouter());
  api.use(resumeRouter(deps));
  api.use(exportsRouter(deps));
  api.use((_req: Request, _res: Response, next: NextFunction) => next(new AppError('NOT_FOUND', MESSAGES.notFound)));
  app.use('/api/v1', api);

  // Unknown /api paths: 401 without a valid token (auth ran above for /api/v1), 404 with one.
  app.use('/api', auth, (_req: Request, _res: Response, next: NextFunction) => next(new AppError('NOT_FOUND', MESSAGES.notFound)));
  // The web console (single-page app) on its own routes; every other path stays a JSON 404.
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
