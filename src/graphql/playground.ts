import type { Request, Router } from 'express';
import { SITE_ROUTES } from '../http/site-routes';
import { findBuiltDir, IMMUTABLE, serveBundle } from '../http/static-bundle';

/**
 * The GraphiQL playground (docs/graphql.md), served entirely by this service (no CDN, works offline):
 * GraphiQL 5 with its Monaco editors, bundled by Vite from web/playground into dist/playground
 * (`npm run build:web`). The page is that build's index.html; its content-hashed scripts, styles
 * and Monaco's web workers are under /api/v1/graphql/assets/. The page and its assets need no
 * token; the user types `Authorization: Bearer …` into GraphiQL's headers editor. Security headers
 * (CSP: scripts and workers from this origin only) are set for the whole path in
 * src/http/security.ts.
 */

/** dist/playground above this file: dist/src/graphql when built, src/graphql under tests and tsx. */
export const findPlaygroundDir = (start = __dirname): string | null => findBuiltDir('playground', start);

/** A browser asking for a page (not a GET operation, which carries ?query=). */
function wantsPlayground(req: Request): boolean {
  return req.method === 'GET' && req.query.query === undefined && req.accepts(['application/json', 'text/html']) === 'text/html';
}

// Unknown asset names fall through to the API route (a 401 without a token, as any other path).
export function playgroundRouter(dir: string | null = findPlaygroundDir()): Router {
  return serveBundle({
    what: 'GraphQL playground',
    dir: dir ?? findPlaygroundDir(),
    find: findPlaygroundDir,
    page: { at: '/', file: 'index.html' },
    wants: wantsPlayground,
    assets: { at: SITE_ROUTES.playgroundAssets.path, from: 'assets', cacheControl: IMMUTABLE },
  });
}
