import fs from 'node:fs';
import path from 'node:path';
import express, { Router, type Request, type Response } from 'express';

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
export function findPlaygroundDir(start = __dirname): string | null {
  for (let dir = start; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'dist', 'playground');
    if (fs.existsSync(path.join(candidate, 'index.html'))) return candidate;
    if (path.dirname(dir) === dir) return null;
  }
}

const IMMUTABLE = 'public, max-age=31536000, immutable';

/** A browser asking for a page (not a GET operation, which carries ?query=). */
export function wantsPlayground(req: Request): boolean {
  return req.method === 'GET' && req.query.query === undefined && req.accepts(['application/json', 'text/html']) === 'text/html';
}

export function playgroundRouter(dir: string | null = findPlaygroundDir()): Router {
  const r = Router();
  let page: Buffer | null = null;
  const readPage = (): Buffer | null => {
    if (page) return page;
    const d = dir ?? findPlaygroundDir();
    if (!d) return null;
    page = fs.readFileSync(path.join(d, 'index.html'));
    return page;
  };

  r.get('/', (req: Request, res: Response, next) => {
    if (!wantsPlayground(req)) return next();
    const html = readPage();
    if (!html) {
      res.status(503).type('text/plain').send('The GraphQL playground is not built: run `npm run build`, then restart.\n');
      return;
    }
    res.status(200).type('text/html; charset=utf-8').setHeader('Cache-Control', 'no-cache');
    res.send(html);
  });
  // Unknown asset names fall through to the API route (a 401 without a token, as any other path).
  const assets = dir ?? findPlaygroundDir();
  if (assets) {
    r.use(
      '/assets',
      express.static(path.join(assets, 'assets'), {
        index: false,
        redirect: false,
        dotfiles: 'ignore',
        fallthrough: true,
        etag: true,
        lastModified: false,
        setHeaders: (res) => res.setHeader('Cache-Control', IMMUTABLE),
      }),
    );
  }
  return r;
}
