import crypto from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import { routeName } from '../api/route';
import { GRAPHQL_ROUTE } from '../api/routes';
import { isGraphqlRequest } from './graphql-path';
import { siteRouteOf } from './site-routes';
import { withRequestOrigin } from '../domain/request-origin';
import { unauthenticated } from '../errors';
import type { Logger } from '../logger';
import { depsFor, type AuthUser, type Ctx, type Deps } from '../services/context';
import type { WorkGuard } from '../services/work-guard';
import './types';

const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Request id (the client's if sane, else new) on every response, one log line per request, the request's origin. */
export function requestContext(logger: Logger, onFinish?: (req: Request, res: Response, seconds: number, route: string) => void) {
  return (req: Request, res: Response, next: NextFunction) => {
    const given = req.get('x-request-id');
    req.id = given && SANE_REQUEST_ID.test(given) ? given : crypto.randomUUID();
    req.startedAt = process.hrtime.bigint();
    res.setHeader('X-Request-Id', req.id);
    res.on('finish', () => {
      const seconds = Number(process.hrtime.bigint() - req.startedAt) / 1e9;
      const route = routeOf(req);
      logger.info({
        reqId: req.id,
        method: req.method,
        route,
        status: res.statusCode,
        durationMs: Math.round(seconds * 1e4) / 10,
        userId: req.user?.id ?? null,
      });
      onFinish?.(req, res, seconds, route);
    });
    // The client's address, for the audit log (src/services/audit.ts).
    withRequestOrigin({ ip: req.ip }, next);
  };
}

/**
 * The declared operation's name, the matched route's path, the declared route's name (never ids
 * or query strings; src/api/routes, ./site-routes.ts), or a coarse bucket for a path nothing declares.
 */
export function routeOf(req: Request): string {
  if (req.apiRoute && req.atOperation) return routeName(req.apiRoute);
  // An operation's request refused before it (authentication): named by its path below, as with
  // either dispatch (Express's router, FAST_PATHS=off, gives it a route of its own).
  const operation = req.apiRoute !== undefined && req.apiRoute.id !== GRAPHQL_ROUTE.id;
  const route = operation ? undefined : (req.route as { path?: unknown } | undefined);
  if (typeof route?.path === 'string') return `${req.baseUrl}${route.path}`;
  if (isGraphqlRequest(req)) return routeName(GRAPHQL_ROUTE);
  const site = siteRouteOf(req);
  if (site) return site.name;
  return req.path.split('/').slice(0, 2).join('/') || '/';
}

/**
 * The request's service context. Its logger (a child carrying `reqId`) is made on first use:
 * most reads never log, and building a pino child serialises its bindings every time.
 */
export function ctxOf(req: Request, deps: Deps): Ctx {
  const user = req.user;
  if (!user) throw unauthenticated();
  return new RequestCtx(depsFor(deps, user.id), user, req.guard, deps.logger, req.id);
}

/**
 * A request's context, its logger made on first use by the getter. `withReads` derives contexts
 * from it with Object.create, which keeps the getter (it lives on the prototype).
 */
class RequestCtx implements Ctx {
  private child: Logger | undefined;
  constructor(
    readonly deps: Deps,
    readonly user: AuthUser,
    readonly guard: WorkGuard | undefined,
    private readonly logger: Logger,
    private readonly reqId: string,
  ) {}

  get log(): Logger {
    return (this.child ??= this.logger.child({ reqId: this.reqId }));
  }
}
