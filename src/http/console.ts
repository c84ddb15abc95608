import path from 'node:path';
import { Router, type NextFunction, type Request, type Response } from 'express';
import helmet from 'helmet';
import { AppError, MESSAGES } from '../errors';
import type { Logger } from '../logger';
import { CONSOLE_PAGES, SITE_ROUTES } from './site-routes';
import { findBuiltDir, IMMUTABLE, serveBundle } from './static-bundle';

/**
 * The web console: the single-page app that `npm run build` puts in dist/web,
 * served by this process. Content-hashed files under /assets/ are cached for a year; index.html
 * is revalidated on every load; the console's routes (history API) all answer index.html.
 * Strict CSP: everything from this origin only, no inline script, no framing.
 */

/**
 * The console's strict headers (nothing from another origin, no inline script, no framing), with
 * the Referrer-Policy a page asks for: the console's own pages and the public share page use them.
 */
export const strictPageHeaders = (referrer: 'same-origin' | 'no-referrer') =>
  helmet({
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        defaultSrc: ["'self'"],
        scriptSrc: ["'self'"],
        styleSrc: ["'self'"],
        imgSrc: ["'self'"],
        fontSrc: ["'self'"],
        connectSrc: ["'self'"],
        manifestSrc: ["'self'"],
        objectSrc: ["'none'"],
        frameSrc: ["'none'"],
        workerSrc: ["'none'"],
        frameAncestors: ["'none'"],
        baseUri: ["'none'"],
        formAction: ["'self'"],
      },
    },
    crossOriginResourcePolicy: { policy: 'same-origin' },
    crossOriginEmbedderPolicy: false,
    frameguard: { action: 'deny' },
    referrerPolicy: { policy: referrer },
  });

const consoleHeaders = strictPageHeaders('same-origin');

/** dist/web above this file: dist/src/http when built, src/http under tests and tsx. */
export const findConsoleDir = (start = __dirname): string | null => findBuiltDir('web', start);

export function consoleRouter(logger: Logger, dir: string | null = findConsoleDir()): Router {
  if (!dir) logger.warn({ msg: 'web console not built (dist/web missing): run `npm run build`' });
  const r = Router();
  // The icon (web/public: favicon.svg, and favicon.ico for what asks for that name), a day in caches.
  r.get(SITE_ROUTES.favicon.path, consoleHeaders, (req: Request, res: Response, next: NextFunction) => {
    const d = dir ?? findConsoleDir();
    if (!d) return next();
    res.setHeader('Cache-Control', 'public, max-age=86400');
    res.sendFile(path.join(d, path.basename(req.path)), (err) => err && next());
  });
  r.use(
    serveBundle({
      what: 'web console',
      dir,
      find: findConsoleDir,
      headers: consoleHeaders,
      // The routes that the SPA renders (site-routes.ts).
      page: { at: CONSOLE_PAGES, file: 'index.html' },
      assets: {
        at: SITE_ROUTES.consoleAssets.path,
        from: 'assets',
        cacheControl: IMMUTABLE,
        unknown: (_req: Request, _res: Response, next: NextFunction) => next(new AppError('NOT_FOUND', MESSAGES.notFound)),
      },
      // Last, any other GET from a browser (HTML preferred to JSON) gets the console with 404, which
      // shows "Page not found"; the API's clients (JSON, `*/*` or no Accept) keep the JSON 404.
      notFoundPage: { at: SITE_ROUTES.notFound.path, wants: (req) => req.accepts(['json', 'html']) === 'html' },
    }),
  );
  return r;
}
