import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import { AppError, MESSAGES } from './errors';
import { createGraphqlRouter } from './graphql';
import { requireAuth, type AuthFailureHook } from './http/auth';
import { jsonBody } from './http/body';
import { errorHandler } from './http/errors';
import { requestContext } from './http/request-context';
import { healthRouter } from './rest/health';
import { keysRouter } from './rest/keys';
import { projectsRouter } from './rest/projects';
import { sessionsRouter } from './rest/sessions';
import type { Deps } from './services/context';

/** Rate limiting plugs in here (per user, after authentication; contract §5). */
export interface RateLimitHooks {
  rest?: (req: Request, res: Response, next: NextFunction) => void;
  graphql?: (req: Request, res: Response, next: NextFunction) => void;
  onAuthFailure?: AuthFailureHook;
}

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
  app.set('trust proxy', 'loopback');
  app.set('query parser', 'simple');

  app.use(requestContext(deps.logger));
  app.use(healthRouter(deps));

  const auth = requireAuth(deps, hooks.onAuthFailure);
  const body = jsonBody(deps.config.maxBodyBytes);
  const graphql = await createGraphqlRouter(deps, { auth, rateLimit: hooks.graphql ?? pass, body });

  // GraphQL: the playground (GET text/html) and its assets need no token; operations do.
  app.use('/api/v1/graphql', graphql.router);

  const api = express.Router();
  api.use(auth, hooks.rest ?? pass, body);
  api.use(projectsRouter(deps));
  api.use(sessionsRouter(deps));
  api.use(keysRouter(deps));
  api.use((_req: Request, _res: Response, next: NextFunction) => next(new AppError('NOT_FOUND', MESSAGES.notFound)));
  app.use('/api/v1', api);

  // Unknown /api paths: 401 without a valid token (auth ran above for /api/v1), 404 with one.
  app.use('/api', auth, (_req: Request, _res: Response, next: NextFunction) => next(new AppError('NOT_FOUND', MESSAGES.notFound)));
  app.use((_req: Request, _res: Response, next: NextFunction) => next(new AppError('NOT_FOUND', MESSAGES.notFound)));
  app.use(errorHandler(deps.logger));

  return { app, stop: graphql.stop };
}
