/**
 * The routes outside the API's declared operations (src/api/routes), declared once: health and
 * readiness, /metrics, /mcp and the OAuth discovery paths its clients probe, the REST reference and
 * the GraphQL playground's assets, the public share page, the web console's pages and assets, and
 * the API's catch-all. Each router registers its paths from here, and middleware that must know a
 * request's route before routing (the database watchdog, the access log and metrics) looks it up
 * here by path (siteRouteOf) and reads its flags; no middleware compares paths of its own. They are
 * not part of the OpenAPI document. test/rest/site-routes.test.ts checks that every path the app
 * registers is declared here or in the API's table.
 */
import type { Request } from 'express';
import { API_PREFIX, routeName } from '../api/route';
import { GRAPHQL_ROUTE } from '../api/routes';

export interface SiteRoute {
  /** `get` (HEAD too), `all` (every method; the handler answers the ones it refuses), `use` (the path and everything below it). */
  method: 'get' | 'all' | 'use';
  /** The Express path, below `base` (the router's mount); a RegExp is matched as it is, at the root. */
  path: string | RegExp;
  /** Where the router that registers `path` is mounted (default: the root). */
  base?: string;
  /** The route's name in the access log and the metrics' labels. */
  name: string;
  /** Answered without the database: the database watchdog lets it through while the database is down. */
  withoutDb?: boolean;
  /** Readiness: while the database is down the watchdog answers it with the readiness body, not the error envelope. */
  readiness?: boolean;
  /**
   * Who may call it: `none` (public), `key` (authentication as for the API's operations),
   * `token` (METRICS_TOKEN when set), `linkAudience` (a signed-in share link asks who the visitor is).
   */
  auth: 'none' | 'key' | 'token' | 'linkAudience';
  /** The limit its requests spend from: `rest` or `graphql` per user, `share_reads` per address. */
  rateLimit: 'none' | 'rest' | 'graphql' | 'share_reads';
  /** Its body goes through admission control (src/http/admission.ts). */
  admission?: boolean;
}

const GRAPHQL = routeName(GRAPHQL_ROUTE);

/** A page of the web console (the single-page app renders it; history API): a static file. */
const consolePage = (path: RegExp, name: string): SiteRoute => ({ method: 'get', path, name, withoutDb: true, auth: 'none', rateLimit: 'none' });

const oauthRoute = (method: 'get' | 'use' | 'all', path: string): SiteRoute => ({ method, path, name: path, auth: 'none', rateLimit: 'none' });

/** In the order the app mounts them: a lookup answers the first that matches, as routing does. */
export const SITE_ROUTES = {
  healthz: { method: 'get', path: '/healthz', name: '/healthz', withoutDb: true, auth: 'none', rateLimit: 'none' },
  readyz: { method: 'get', path: '/readyz', name: '/readyz', readiness: true, auth: 'none', rateLimit: 'none' },
  metrics: { method: 'get', path: '/metrics', name: '/metrics', withoutDb: true, auth: 'token', rateLimit: 'none' },
  // The OAuth authorization server of /mcp (MCP_OAUTH=on; src/mcp/oauth.ts): its discovery documents and endpoints
  // (registration and tokens spend per-address budgets of their own).
  oauthProtectedResource: oauthRoute('get', '/.well-known/oauth-protected-resource'),
  oauthProtectedResourceMcp: oauthRoute('get', '/.well-known/oauth-protected-resource/mcp'),
  oauthAuthorizationServer: oauthRoute('get', '/.well-known/oauth-authorization-server'),
  oauthAuthorize: oauthRoute('use', '/oauth/authorize'),
  oauthConsent: oauthRoute('all', '/oauth/consent'),
  oauthToken: oauthRoute('use', '/oauth/token'),
  oauthRegister: oauthRoute('use', '/oauth/register'),
  oauthRevoke: oauthRoute('use', '/oauth/revoke'),
  // Without the OAuth server (and OpenID's, always): a JSON 404.
  oauthDiscovery: { method: 'use', path: '/.well-known', name: '/.well-known/*', auth: 'none', rateLimit: 'none' },
  mcp: { method: 'all', path: '/mcp', name: '/mcp', auth: 'key', rateLimit: 'rest' },
  // The SDL the service runs and its changelog (a credential only with GRAPHQL_SCHEMA_PUBLIC=false).
  graphqlSchema: { method: 'get', base: GRAPHQL, path: '/schema.graphql', name: `${GRAPHQL}/schema.graphql`, withoutDb: true, auth: 'none', rateLimit: 'none' },
  graphqlChangelog: {
    method: 'get',
    base: GRAPHQL,
    path: '/changelog.json',
    name: `${GRAPHQL}/changelog.json`,
    withoutDb: true,
    auth: 'none',
    rateLimit: 'none',
  },
  // Operations run per client and day, for schema review (instance administrators).
  graphqlUsage: { method: 'get', base: GRAPHQL, path: '/usage', name: `${GRAPHQL}/usage`, auth: 'key', rateLimit: 'graphql' },
  // Subscriptions over Server-Sent Events (graphql-sse, distinct connections).
  graphqlStream: { method: 'all', base: GRAPHQL, path: '/stream', name: `${GRAPHQL}/stream`, auth: 'key', rateLimit: 'graphql' },
  // Trusted documents: GET lists, POST registers (instance administrators).
  graphqlDocuments: { method: 'all', base: GRAPHQL, path: '/documents', name: `${GRAPHQL}/documents`, auth: 'key', rateLimit: 'graphql' },
  playgroundAssets: { method: 'use', base: GRAPHQL, path: '/assets', name: GRAPHQL, withoutDb: true, auth: 'none', rateLimit: 'none' },
  openApi: { method: 'get', base: API_PREFIX, path: '/openapi.json', name: `${API_PREFIX}/openapi.json`, withoutDb: true, auth: 'none', rateLimit: 'none' },
  docsAssets: { method: 'use', base: API_PREFIX, path: '/docs/assets', name: `${API_PREFIX}/docs/assets/*`, withoutDb: true, auth: 'none', rateLimit: 'none' },
  docsPage: { method: 'get', base: API_PREFIX, path: '/docs', name: `${API_PREFIX}/docs`, withoutDb: true, auth: 'none', rateLimit: 'none' },
  docsScript: { method: 'get', base: API_PREFIX, path: '/docs/boot.js', name: `${API_PREFIX}/docs/boot.js`, withoutDb: true, auth: 'none', rateLimit: 'none' },
  // Every path under /s/: a token holds no slash, so anything longer is a dead link too.
  sharePage: { method: 'get', path: /^\/s\/(.*)$/, name: '/s/:token', auth: 'linkAudience', rateLimit: 'share_reads' },
  // Any other path under the API: the middleware of an authenticated operation, then 404.
  apiOther: { method: 'use', path: API_PREFIX, name: '/api/*', auth: 'key', rateLimit: 'rest', admission: true },
  // Unknown /api paths: 401 without a valid token, 404 with one.
  apiUnknown: { method: 'use', path: '/api', name: '/api/*', auth: 'key', rateLimit: 'none' },
  consoleAssets: { method: 'use', path: '/assets', name: '/assets/*', withoutDb: true, auth: 'none', rateLimit: 'none' },
  // The service's icon (SVG, and the .ico browsers ask for on every page of this origin).
  favicon: { method: 'get', path: /^\/favicon\.(?:ico|svg)$/, name: '/favicon', withoutDb: true, auth: 'none', rateLimit: 'none' },
  // The console's routes (docs/console.md; plus /dashboard).
  consoleHome: consolePage(/^\/$/, '/'),
  consoleSignIn: consolePage(/^\/sign-in$/, '/sign-in'),
  consoleResetPassword: consolePage(/^\/reset-password$/, '/reset-password'),
  consoleJoin: consolePage(/^\/join$/, '/join'),
  consoleCliLogin: consolePage(/^\/cli-login$/, '/cli-login'),
  consoleSearch: consolePage(/^\/search$/, '/search'),
  consoleDashboard: consolePage(/^\/dashboard$/, '/dashboard'),
  consoleSettings: consolePage(/^\/settings\/(api-keys|account|users|teams|shares|export|audit|webhooks)$/, '/settings/:tab'),
  consoleProject: consolePage(/^\/projects\/[^/]+$/, '/projects/:projectId'),
  consoleSession: consolePage(/^\/projects\/[^/]+\/sessions\/[^/]+$/, '/projects/:projectId/sessions/:sessionId'),
  // Every other path: a browser's GET gets the console's not-found page, anything else the JSON 404
  // (neither reads the database).
  notFound: { method: 'get', path: /.*/, name: '/*', withoutDb: true, auth: 'none', rateLimit: 'none' },
} as const satisfies Record<string, SiteRoute>;

type SiteRouteId = keyof typeof SITE_ROUTES;
export type NamedSiteRoute = SiteRoute & { id: SiteRouteId };

/** The console's pages, in order. */
export const CONSOLE_PAGES: RegExp[] = Object.entries(SITE_ROUTES)
  .filter(([id]) => id.startsWith('console') && id !== 'consoleAssets')
  .map(([, r]) => r.path as RegExp);

/** The path as mounted at the root (a RegExp stays as it is). */
export const fullPath = (route: SiteRoute): string | RegExp => (typeof route.path === 'string' ? (route.base ?? '') + route.path : route.path);

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * How Express matches a string path (no case, one trailing slash, `:name` a segment), as a RegExp:
 * `use` matches the path and anything below it.
 */
function matcherOf(route: SiteRoute): RegExp {
  const full = fullPath(route);
  if (full instanceof RegExp) return full;
  const body = full
    .split('/')
    .map((s) => (s.startsWith(':') ? '[^/]+' : escape(s)))
    .join('/');
  return new RegExp(route.method === 'use' ? `^${body}(?:/|$)` : `^${body}/?$`, 'i');
}

const COMPILED = (Object.entries(SITE_ROUTES) as Array<[SiteRouteId, SiteRoute]>).map(([id, route]) => ({
  route: { ...route, id },
  re: matcherOf(route),
}));

/** The declared route at a path, whatever the method (the first that matches, as routing does), or null. */
export function siteRouteAt(path: string): NamedSiteRoute | null {
  return COMPILED.find((c) => c.re.test(path))?.route ?? null;
}

/** The declared route of the request, looked up once (by its whole path, wherever the router asking is mounted). */
export function siteRouteOf(req: Request): NamedSiteRoute | null {
  if (req.siteRoute === undefined) req.siteRoute = siteRouteAt((req.baseUrl ?? '') + req.path);
  return req.siteRoute;
}
