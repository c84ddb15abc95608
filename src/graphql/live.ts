/**
 * GraphQL subscriptions over Server-Sent Events: `POST|GET /api/v1/graphql/stream`, the
 * `graphql-sse` protocol in its "distinct connections" mode (one operation per request, its events
 * on that response), served by the `graphql-sse` package's handler.
 *
 * The request passes what a query passes — authentication, the per-user GraphQL rate limit, the
 * CSRF rule, trusted documents, the guards on depth and cost — and then the open-stream cap
 * (STREAMS_PER_USER per user, across instances with Redis: the next one is 429). Only
 * subscriptions run here; queries and mutations go to `/api/v1/graphql`.
 */
import { Router, type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { getOperationAST, GraphQLError, OperationTypeNode, parse, validate, specifiedRules, type ExecutionResult, type GraphQLSchema } from 'graphql';
import { createHandler } from 'graphql-sse/lib/use/express';
import { AppError, invalid } from '../errors';
import { ownOrigin } from '../http/auth';
import { SITE_ROUTES } from '../http/site-routes';
import type { SessionEventHub } from '../live/session-events';
import { STREAMS_PER_USER } from '../live/session-events';
import { depsFor, type Deps } from '../services/context';
import { freshContext } from '../services/live';
import { createGraphqlContext, type GraphqlContext } from './context';
import { formatErrorWith } from './errors';
import { checkOperation } from './operation-limits';
import { createLoaders } from './loaders';

/** Apollo's CSRF rule, which queries pass: a request a browser could send cross-site without a preflight is refused. */
function preflighted(req: Request): boolean {
  if (req.headers['x-apollo-operation-name'] || req.headers['apollo-require-preflight']) return true;
  const type = (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
  return req.method === 'POST' && type !== '' && !['application/x-www-form-urlencoded', 'multipart/form-data', 'text/plain'].includes(type);
}

interface LiveMiddleware {
  auth: RequestHandler;
  rateLimit: RequestHandler;
  body: RequestHandler;
  trusted: RequestHandler;
}

/** The stream endpoint, mounted under the GraphQL router at `/stream`. */
export function liveRouter(deps: Deps, schema: GraphQLSchema, hub: SessionEventHub, mw: LiveMiddleware): Router {
  const format = formatErrorWith(deps.logger);
  const formatResult = (result: ExecutionResult): ExecutionResult =>
    result.errors ? { ...result, errors: result.errors.map((e) => format(e.toJSON(), e) as GraphQLError) } : result;

  // graphql-sse types its context as a record; ours is the GraphqlContext every resolver takes.
  type SseContext = Record<PropertyKey, unknown>;
  const handler = createHandler<SseContext>({
    schema,
    // Distinct connections only: no reserved streams, no stream tokens.
    authenticate: () => null,
    onSubscribe(req, params) {
      const raw = req.raw;
      const refuse = (message: string) => [JSON.stringify({ errors: [{ message, extensions: { code: 'VALIDATION_ERROR' } }] }), badRequest] as const;
      let document;
      try {
        document = parse(params.query);
      } catch (err) {
        return refuse((err as Error).message);
      }
      const problems = validate(schema, document, specifiedRules);
      if (problems.length) return refuse(problems[0].message);
      const operation = getOperationAST(document, params.operationName);
      if (!operation) return refuse('Name the operation to run: the document holds several');
      if (operation.operation !== OperationTypeNode.SUBSCRIPTION) {
        return refuse('Only subscriptions run on /api/v1/graphql/stream: send queries and mutations to /api/v1/graphql');
      }
      try {
        checkOperation(schema, document, operation, params.variables ?? undefined);
      } catch (err) {
        if (err instanceof GraphQLError) return refuse(err.message);
        throw err;
      }
      const user = raw.user!;
      const gql = createGraphqlContext({ deps: depsFor(deps, user.id), user, log: deps.logger.child({ reqId: raw.id }) }, ownOrigin(raw, deps.config));
      gql.live = hub;
      return {
        schema,
        document,
        variableValues: params.variables ?? undefined,
        operationName: params.operationName ?? undefined,
        contextValue: gql as unknown as SseContext,
      };
    },
    onNext: (_ctx, _req, result) => formatResult(result as ExecutionResult),
  });

  const cap: RequestHandler = (req: Request, res: Response, next: NextFunction) => {
    hub.openStream(req.user!.id).then((close) => {
      if (!close) {
        return next(new AppError('RATE_LIMITED', `At most ${STREAMS_PER_USER} open streams per user: close one first`));
      }
      res.once('close', close);
      next();
    }, next);
  };

  const accepts: RequestHandler = (req, _res, next) => {
    if (!preflighted(req)) {
      return next(invalid('This request needs a JSON body (Content-Type: application/json) or an Apollo-Require-Preflight header'));
    }
    if ((req.headers.accept ?? '') !== 'text/event-stream') return next(invalid('Ask for the event stream: Accept: text/event-stream'));
    next();
  };

  const router = Router();
  router.all(SITE_ROUTES.graphqlStream.path, mw.auth, accepts, mw.rateLimit, mw.body, mw.trusted, cap, (req: Request, res: Response, next: NextFunction) => {
    handler(req, res).catch(next);
  });
  return router;
}

const badRequest = { status: 400, statusText: 'Bad Request', headers: { 'content-type': 'application/json; charset=utf-8' } };

/** Each event's fields read what is true now: a new context per change (memberships, loaders). */
export function contextForEvent(gql: GraphqlContext): void {
  gql.ctx = freshContext(gql.ctx);
  gql.loaders = createLoaders(gql.ctx, gql.origin);
}
