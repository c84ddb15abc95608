import fs from 'node:fs';
import path from 'node:path';
import { ApolloServer, type ApolloServerPlugin, type GraphQLRequestListener } from '@apollo/server';
import { OperationTypeNode } from 'graphql';
import { ApolloServerPluginLandingPageDisabled } from '@apollo/server/plugin/disabled';
import { expressMiddleware } from '@as-integrations/express5';
import { makeExecutableSchema } from '@graphql-tools/schema';
import { Router, type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { invalid, unauthenticated } from '../errors';
import { ownOrigin } from '../http/auth';
import '../http/types';
import { depsFor, type Deps } from '../services/context';
import { isPlainObject } from '../domain/validation';
import { createGraphqlContext, type GraphqlContext } from './context';
import { formatErrorWith } from './errors';
import { checkOperation, MAX_QUERY_BYTES, readOnlyRejection, subscriptionElsewhere } from './operation-limits';
import { playgroundRouter } from './playground';
import { publishedSchemaRouter } from './published';
import { documentsRouter, trustedDocumentsGate } from './trusted-documents';
import { loadConsoleDocuments, trustedDocuments } from '../services/graphql-documents';
import { operationUsagePlugin } from './operation-usage';
import { ctxOf } from '../http/request-context';
import { operationUsage, operationUsageRecorder } from '../services/graphql-usage';
import { SITE_ROUTES } from '../http/site-routes';
import { resolvers } from './resolvers';
import { createSessionEventHub } from '../live/session-events';
import { liveRouter } from './live';

interface GraphqlMiddleware {
  /** Authentication (401 in GraphQL's envelope on failure). */
  auth: RequestHandler;
  /** Per-user GraphQL rate limit. */
  rateLimit: RequestHandler;
  /** JSON body parsing with the size cap and gzip. */
  body: RequestHandler;
}

function schemaPath(): string {
  for (let dir = __dirname; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'schema.graphql');
    if (fs.existsSync(candidate)) return candidate;
    if (path.dirname(dir) === dir) throw new Error('schema.graphql not found');
  }
}

/** Guards (depth, cost, aliases, page sizes) after validation, before execution → 400. */
const guardPlugin: ApolloServerPlugin<GraphqlContext> = {
  requestDidStart() {
    return Promise.resolve<GraphQLRequestListener<GraphqlContext>>({
      // Apollo awaits this inside its own try: a throw here answers like a rejection.
      didResolveOperation(rc) {
        if (rc.operation?.operation === OperationTypeNode.SUBSCRIPTION) throw subscriptionElsewhere();
        if (rc.operation) checkOperation(rc.schema, rc.document, rc.operation, rc.request.variables);
        // A read-only key (scopes ["read"]) may query but never mutate: 403, nothing executed.
        if (rc.operation?.operation === OperationTypeNode.MUTATION && rc.contextValue.ctx.user.readOnly) throw readOnlyRejection();
        if (rc.operation?.operation === OperationTypeNode.QUERY) rc.contextValue.readFromSnapshot();
        return Promise.resolve();
      },
      async willSendResponse(rc) {
        await rc.contextValue.release();
      },
    });
  },
};

/** Shape checks Apollo would answer with its own codes: one operation per POST, ≤ 100 KB of query. */
function preflight(req: Request, _res: Response, next: NextFunction) {
  if (req.method === 'POST') {
    const b: unknown = req.body;
    if (Array.isArray(b)) return next(invalid('Batched operations are not supported: send one operation per request'));
    if (!isPlainObject(b)) return next(invalid('Request body must be a JSON object with a query'));
    if (typeof b.query === 'string' && Buffer.byteLength(b.query, 'utf8') > MAX_QUERY_BYTES) {
      return next(invalid('Query text too large: at most 100 KB'));
    }
  } else if (typeof req.query.query === 'string' && Buffer.byteLength(req.query.query, 'utf8') > MAX_QUERY_BYTES) {
    return next(invalid('Query text too large: at most 100 KB'));
  } else if (req.body === undefined) {
    req.body = {};
  }
  next();
}

/** POST /api/v1/graphql (Apollo Server 5) and the playground, on the services REST uses. */
export async function createGraphqlRouter(deps: Deps, mw: GraphqlMiddleware): Promise<{ router: Router; stop(): Promise<void> }> {
  const usage = operationUsageRecorder(deps, deps.logger, { periodic: deps.config.workersEnabled });
  const schemaFile = schemaPath();
  const typeDefs = fs.readFileSync(schemaFile, 'utf8');
  const schema = makeExecutableSchema({ typeDefs, resolvers });
  const consoleDocuments = loadConsoleDocuments();
  const trusted = trustedDocuments(deps, consoleDocuments);
  const server = new ApolloServer<GraphqlContext>({
    schema,
    introspection: true,
    includeStacktraceInErrorResponses: false,
    // main.ts owns shutdown: Apollo's own SIGTERM handler (on unless NODE_ENV=test) raced it and
    // left the process hanging after a SIGTERM.
    stopOnTerminationSignals: false,
    allowBatchedHttpRequests: false,
    // Automatic persisted queries off: their cache would be shared between users.
    persistedQueries: false,
    // JSON POSTs are never "simple" requests, so they pass; GET operations need a custom header.
    csrfPrevention: true,
    formatError: formatErrorWith(deps.logger),
    logger: deps.logger,
    plugins: [ApolloServerPluginLandingPageDisabled(), guardPlugin, operationUsagePlugin(usage)],
  });
  await server.start();

  const apollo = expressMiddleware(server, {
    context: ({ req, res }) => {
      if (!req.user) return Promise.reject(unauthenticated());
      const gql = createGraphqlContext(
        { deps: depsFor(deps, req.user.id), user: req.user, guard: req.guard, log: deps.logger.child({ reqId: req.id }) },
        ownOrigin(req, deps.config),
      );
      res.once('close', () => void gql.release());
      return Promise.resolve(gql);
    },
  });

  const router = Router();
  router.use(playgroundRouter());
  router.use(publishedSchemaRouter(schemaFile, typeDefs, deps.config.graphqlSchemaPublic ? null : mw.auth));
  // What each operation touched, per client and day: instance administrators, for schema review.
  router.get(SITE_ROUTES.graphqlUsage.path, mw.auth, mw.rateLimit, (req: Request, res: Response, next: NextFunction) => {
    // This instance's counts not yet added go first, so that what was just run is listed.
    usage
      .flush()
      .then(() => operationUsage(ctxOf(req, deps), req.query.days))
      .then((operations) => res.json({ operations }), next);
  });
  router.use(documentsRouter(deps, schema, consoleDocuments, mw));
  const trustedGate = trustedDocumentsGate(trusted, deps.config.graphqlTrustedDocuments);
  const hub = createSessionEventHub({ signals: deps.db.signals, redisUrl: deps.config.redisUrl, namespace: deps.config.namespace, logger: deps.logger });
  router.use(liveRouter(deps, schema, hub, { ...mw, trusted: trustedGate }));
  router.all('/', mw.auth, mw.rateLimit, mw.body, preflight, trustedGate, apollo);
  return {
    router,
    stop: async () => {
      await server.stop();
      await usage.stop();
      await hub.stop();
    },
  };
}
