/**
 * Every HTTP operation of the API, declared once (src/api/route.ts says what a declaration
 * holds). The doors implement them by name: src/rest/<resource>.ts the REST operations,
 * src/graphql the GraphQL one. To add an operation: declare it in the file of its resource
 * below, then give its handler in the door; the compiler asks for the handler, and the OpenAPI
 * document, the router, route names and the middleware follow from the declaration.
 */
import type { NamedRoute, Route } from '../route';
import { accountRoutes } from './accounts';
import { archiveRoutes } from './archive';
import { auditRoutes } from './audit';
import { deviceRoutes } from './device';
import { graphqlRoutes } from './graphql';
import { keyRoutes } from './keys';
import { projectRoutes } from './projects';
import { sessionRoutes } from './sessions';
import { shareRoutes } from './shares';
import { teamRoutes } from './teams';
import { userRoutes } from './users';
import { webhookRoutes } from './webhooks';

export { accountRoutes, archiveRoutes, auditRoutes, deviceRoutes, keyRoutes, projectRoutes, sessionRoutes, shareRoutes, teamRoutes, userRoutes, webhookRoutes };

/** The operations src/rest handles. */
const restRoutes = {
  ...projectRoutes,
  ...sessionRoutes,
  ...keyRoutes,
  ...archiveRoutes,
  ...accountRoutes,
  ...userRoutes,
  ...deviceRoutes,
  ...teamRoutes,
  ...shareRoutes,
  ...auditRoutes,
  ...webhookRoutes,
};
export type RestRoutes = typeof restRoutes;

const routes = { ...restRoutes, ...graphqlRoutes };

const named = (table: Record<string, Route>): NamedRoute[] => Object.entries(table).map(([id, route]) => ({ ...route, id }));

/** Every operation, REST and GraphQL, with its name. */
export const ROUTES: readonly NamedRoute[] = named(routes);
export const REST_ROUTES: readonly NamedRoute[] = named(restRoutes);
export const GRAPHQL_ROUTE: NamedRoute = { ...graphqlRoutes.graphql, id: 'graphql' };
