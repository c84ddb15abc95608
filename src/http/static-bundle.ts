import fs from 'node:fs';
import path from 'node:path';
import express, { Router, type Request, type RequestHandler, type Response } from 'express';

/**
 * A built front-end bundle served by this process under its own headers (its CSP): the web
 * console (dist/web), the GraphQL playground (dist/playground) and the REST reference (Scalar's
 * standalone build). One HTML page, same-origin scripts and content-hashed assets; a page whose
 * build is missing answers 503 with what to run, never a stack.
 */

/** A year: the asset names carry their content hash, so a new build has new names. */
export const IMMUTABLE = 'public, max-age=31536000, immutable';

/** dist/<name> above `start`: dist/src/<folder> when built, src/<folder> under tests and tsx. */
export function findBuiltDir(name: string, start: string, marker = 'index.html'): string | null {
  for (let dir = start; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'dist', name);
    if (fs.existsSync(path.join(candidate, marker))) return candidate;
    if (path.dirname(dir) === dir) return null;
  }
}

/** The 503 a page answers while its bundle is not built. */
export function sendNotBuilt(res: Response, what: string): void {
  res.status(503).type('text/plain').send(`The ${what} is not built: run \`npm run build\`, then restart.\n`);
}

interface BundleOptions {
  /** What the bundle is, for the 503 while it is not built ("web console"). */
  what: string;
  /** Where the build is: a folder, or null while none was found (the page looks again with `find`). */
  dir: string | null;
  /** Looks for the build again: a page asked for after `npm run build` on a running server is served. */
  find?: () => string | null;
  /** Headers of every answer (the bundle's CSP); none when they are set for the whole path elsewhere. */
  headers?: RequestHandler;
  /** The page: its routes, and either a file of the build or the HTML itself. */
  page: { at: string | RegExp | (string | RegExp)[]; file: string } | { at: string | RegExp | (string | RegExp)[]; html: string };
  /** Whether a GET on the page's routes is for the page (else the next route answers). */
  wants?: (req: Request) => boolean;
  /**
   * The other paths (`at`; a missing asset goes to `assets.unknown` before): a GET that `wants` the
   * page (a person's browser) gets it with status 404, and the page's own router shows that nothing
   * is there; any other request goes on to the next route.
   */
  notFoundPage?: { at: string | RegExp; wants: (req: Request) => boolean };
  /** Same-origin scripts of ours (no inline script): path → JavaScript. */
  scripts?: Record<string, string>;
  /** Static files: mounted at `at`, from `from` (a folder of the build, or an absolute path), with this Cache-Control. */
  assets: { at: string; from: string; cacheControl: string; unknown?: RequestHandler };
}

/** One router for a bundle: the page (revalidated on every load), its scripts and its assets. */
export function serveBundle(o: BundleOptions): Router {
  const r = Router();
  const headers: RequestHandler[] = o.headers ? [o.headers] : [];
  let page: Buffer | string | null = 'html' in o.page ? o.page.html : null;
  const pageFile = 'file' in o.page ? o.page.file : null;
  const readPage = (): Buffer | string | null => {
    if (page !== null || pageFile === null) return page;
    const d = o.dir ?? o.find?.() ?? null;
    if (!d) return null;
    page = fs.readFileSync(path.join(d, pageFile));
    return page;
  };

  const assetsDir = path.isAbsolute(o.assets.from) ? o.assets.from : o.dir && path.join(o.dir, o.assets.from);
  if (assetsDir) {
    const statics = express.static(assetsDir, {
      index: false,
      redirect: false,
      dotfiles: 'ignore',
      fallthrough: true,
      etag: true,
      lastModified: false,
      setHeaders: (res) => res.setHeader('Cache-Control', o.assets.cacheControl),
    });
    r.use(o.assets.at, ...headers, statics, ...(o.assets.unknown ? [o.assets.unknown] : []));
  }

  const sendPage = (res: Response, status = 200) => {
    const html = readPage();
    if (html === null) return sendNotBuilt(res, o.what);
    res.setHeader('Cache-Control', 'no-cache');
    res.status(status).type('text/html; charset=utf-8').send(html);
  };
  r.get(o.page.at, ...headers, (req: Request, res: Response, next) => {
    if (o.wants && !o.wants(req)) return next();
    sendPage(res);
  });

  for (const [at, js] of Object.entries(o.scripts ?? {})) {
    r.get(at, ...headers, (_req: Request, res: Response) => {
      res.type('text/javascript; charset=utf-8').send(js);
    });
  }

  const notFound = o.notFoundPage;
  if (notFound) {
    r.get(
      notFound.at,
      (req: Request, _res: Response, next) => next(notFound.wants(req) ? undefined : 'route'),
      ...headers,
      (_req: Request, res: Response) => sendPage(res, 404),
    );
  }
  return r;
}
