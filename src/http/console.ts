import fs from 'node:fs';
import path from 'node:path';
import express, { Router, type Request, type Response } from 'express';
import helmet from 'helmet';
import type { Logger } from '../logger';

/**
 * The web console: the single-page app that `npm run build` puts in dist/web,
 * served by this process. Content-hashed files under /assets/ are cached for a year; index.html
 * is revalidated on every load; the console's routes (history API) all answer index.html.
 * Strict CSP: everything from this origin only, no inline script, no framing.
 */

/** The routes that the SPA renders (docs/console.md; plus /dashboard); any other path keeps the API's JSON 404. */
const CONSOLE_ROUTES = [
  /^\/$/,
  /^\/sign-in$/,
  /^\/reset-password$/,
  /^\/join$/,
  /^\/cli-login$/,
  /^\/search$/,
  /^\/dashboard$/,
  /^\/settings\/(api-keys|account|users|teams|shares)$/,
  /^\/projects\/[^/]+$/,
  /^\/projects\/[^/]+\/sessions\/[^/]+$/,
];

export const isConsoleRoute = (p: string): boolean => CONSOLE_ROUTES.some((re) => re.test(p));

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

export const consoleHeaders = strictPageHeaders('same-origin');

/** dist/web above this file: dist/src/http when built, src/http under tests and tsx. */
export function findConsoleDir(start = __dirname): string | null {
  for (let dir = start; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'dist', 'web');
    if (fs.existsSync(path.join(candidate, 'index.html'))) return candidate;
    if (path.dirname(dir) === dir) return null;
  }
}

const IMMUTABLE = 'public, max-age=31536000, immutable';

export function consoleRouter(logger: Logger, dir: string | null = findConsoleDir()): Router {
  const r = Router();
  if (!dir) logger.warn({ msg: 'web console not built (dist/web missing): run `npm run build`' });

  let index: Buffer | null = null;
  const readIndex = (): Buffer | null => {
    if (index) return index;
    const d = dir ?? findConsoleDir();
    if (!d) return null;
    index = fs.readFileSync(path.join(d, 'index.html'));
    return index;
  };

  if (dir) {
    r.use(
      '/assets',
      consoleHeaders,
      express.static(path.join(dir, 'assets'), {
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

  r.get(CONSOLE_ROUTES, consoleHeaders, (_req: Request, res: Response) => {
    const html = readIndex();
    if (!html) {
      res.status(503).type('text/plain').send('The web console is not built: run `npm run build`, then restart.\n');
      return;
    }
    res.setHeader('Cache-Control', 'no-cache');
    res.type('html').send(html);
  });
  return r;
}
