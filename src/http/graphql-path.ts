import type { Request } from 'express';
import { routeName } from '../api/route';
import { GRAPHQL_ROUTE } from '../api/routes';

const GRAPHQL_PATH = routeName(GRAPHQL_ROUTE).toLowerCase();

/**
 * A request to the GraphQL endpoint (its operations, the playground and its assets), known before
 * it is routed (security headers, errors answered early): its path is the declared operation's,
 * compared without case like the router does.
 */
export function isGraphqlRequest(req: Request): boolean {
  if (req.apiRoute) return req.apiRoute.id === GRAPHQL_ROUTE.id;
  const path = req.originalUrl.split('?')[0].toLowerCase();
  return path.startsWith(GRAPHQL_PATH) && (path.length === GRAPHQL_PATH.length || path[GRAPHQL_PATH.length] === '/');
}
