/**
 * Every path the app registers comes from a table: the API's operations (src/api/routes) or the
 * routes outside them (src/http/site-routes.ts), whose flags the middleware reads instead of
 * comparing paths of its own.
 */
import fs from 'node:fs';
import path from 'node:path';
import { buildApp, type BuiltApp } from '../../src/app';
import { routeName } from '../../src/api/route';
import { GRAPHQL_ROUTE } from '../../src/api/routes';
import { findPlaygroundDir } from '../../src/graphql/playground';
import { findConsoleDir } from '../../src/http/console';
import { fullPath, SITE_ROUTES, siteRouteAt } from '../../src/http/site-routes';
import { startTestApp, type TestApp } from '../support/app';
import { ROOT } from '../support/paths';

interface Layer {
  rawPath?: unknown;
  slash?: boolean;
  route?: { path: unknown };
  handle: { stack?: Layer[] };
}

const key = (p: string | RegExp) => (p instanceof RegExp ? p.toString() : p.toLowerCase());
const join = (mount: string, p: string) => (p === '/' ? mount || '/' : mount + p);

/** The paths of the app's router stack, joined with the mounts of the routers they are in. */
function registered(stack: Layer[], mount = '', out: string[] = []): string[] {
  for (const layer of stack) {
    const raw = layer.route ? layer.route.path : layer.slash ? null : layer.rawPath;
    const paths = (raw === null || raw === undefined ? [] : Array.isArray(raw) ? raw : [raw]) as Array<string | RegExp>;
    for (const p of paths) out.push(p instanceof RegExp ? key(p) : key(join(mount, p)));
    if (layer.handle.stack) {
      if (paths.length > 1 || paths.some((p) => p instanceof RegExp)) throw new Error('a router mounted at several paths or a RegExp');
      registered(layer.handle.stack, paths.length ? join(mount, paths[0] as string) : mount, out);
    }
  }
  return out;
}

let t: TestApp;
let built: BuiltApp;

beforeAll(async () => {
  t = await startTestApp({ env: { METRICS_ENABLED: 'true' } });
  built = await buildApp(t.deps);
});
afterAll(async () => {
  await built?.stop();
  await t?.close();
});

test('every path the app registers is declared, and every declared route is registered', () => {
  const paths = registered((built.app as unknown as { router: { stack: Layer[] } }).router.stack);
  // The API's operations are dispatched by one middleware (no path); GraphQL is mounted at its operation's path.
  const declared = new Set([...Object.values(SITE_ROUTES).map((r) => key(fullPath(r))), key(routeName(GRAPHQL_ROUTE))]);
  expect(paths.filter((p) => !declared.has(p))).toEqual([]);
  // A bundle's assets are served only once it is built (npm run build:web).
  const unbuilt = [...(findConsoleDir() ? [] : [SITE_ROUTES.consoleAssets]), ...(findPlaygroundDir() ? [] : [SITE_ROUTES.playgroundAssets])];
  const optional = new Set(unbuilt.map((r) => key(fullPath(r))));
  expect([...declared].filter((d) => !paths.includes(d) && !optional.has(d))).toEqual([]);
});

test('a lookup by path finds what routing reaches', () => {
  const at = (p: string) => siteRouteAt(p)?.id ?? null;
  expect(at('/healthz')).toBe('healthz');
  expect(at('/HealthZ/')).toBe('healthz');
  expect(at('/healthzz')).toBe('notFound');
  expect(at('/metrics')).toBe('metrics');
  expect(at('/readyz')).toBe('readyz');
  expect(at('/mcp')).toBe('mcp');
  expect(at('/.well-known/oauth-protected-resource/mcp')).toBe('oauthProtectedResourceMcp');
  expect(at('/.well-known/openid-configuration')).toBe('oauthDiscovery');
  expect(at('/oauth/token')).toBe('oauthToken');
  expect(at('/api/v1/graphql/assets/index-abc.js')).toBe('playgroundAssets');
  expect(at('/api/v1/openapi.json')).toBe('openApi');
  expect(at('/api/v1/docs')).toBe('docsPage');
  expect(at('/api/v1/docs/boot.js')).toBe('docsScript');
  expect(at('/api/v1/docs/assets/standalone.js')).toBe('docsAssets');
  expect(at('/s/abc')).toBe('sharePage');
  expect(at('/s/abc/def')).toBe('sharePage');
  expect(at('/api/v1/nothing')).toBe('apiOther');
  expect(at('/api/v2')).toBe('apiUnknown');
  expect(at('/apiary')).toBe('notFound');
  expect(at('/')).toBe('consoleHome');
  expect(at('/cli-login')).toBe('consoleCliLogin');
  expect(at('/join')).toBe('consoleJoin');
  expect(at('/projects/p/sessions/s')).toBe('consoleSession');
  expect(at('/assets/app-123.js')).toBe('consoleAssets');
  expect(at('/favicon.ico')).toBe('favicon');
  expect(at('/no-such-file.ico')).toBe('notFound');
});

test('no middleware or door compares a request path with a literal', () => {
  const SRC = path.resolve(ROOT, 'src');
  const files = (dir: string): string[] =>
    fs
      .readdirSync(dir, { withFileTypes: true })
      .flatMap((e) => (e.isDirectory() ? files(path.join(dir, e.name)) : /\.ts$/.test(e.name) ? [path.join(dir, e.name)] : []));
  // `req.path === '/x'`, `req.originalUrl.startsWith('/x')`, `new Set(['/healthz', …])`: lookups of site-routes.ts instead.
  const literal =
    /req\.(?:path|url|originalUrl|baseUrl)\s*(?:===|!==|\.startsWith\(|\.endsWith\(|\.includes\()\s*['"`]\/|(?:new Set|\[)\(?\[?\s*['"]\/(?:healthz|readyz|metrics|mcp|s\/)/;
  const doors = ['app.ts', 'metrics.ts', 'http', 'rest', 'mcp', 'graphql'].flatMap((d) => (d.endsWith('.ts') ? [path.join(SRC, d)] : files(path.join(SRC, d))));
  const found = doors
    .filter((f) => !f.endsWith(`${path.sep}site-routes.ts`))
    .flatMap((f) =>
      fs
        .readFileSync(f, 'utf8')
        .split('\n')
        .map((line, i) => ({ at: `${path.relative(SRC, f)}:${i + 1}`, line }))
        .filter(({ line }) => literal.test(line)),
    );
  expect(found).toEqual([]);
});
