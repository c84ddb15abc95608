import { Router, type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { strictPageHeaders } from '../http/console';
import { publicCtx, type Deps } from '../services/context';
import * as shares from '../services/shares';
import { ownOrigin } from '../http/auth';
import { ctxOf, ok } from './context';

const base = (req: Request, deps: Deps) => ownOrigin(req, deps.config);

/** Making and managing links: behind authentication, like every other resource. */
export function sharesRouter(deps: Deps): Router {
  const r = Router();
  const path = '/projects/:projectId/sessions/:sessionId/shares';
  r.post(path, async (req, res) => {
    const share = await shares.createShare(ctxOf(req, deps), base(req, deps), req.params.projectId, req.params.sessionId, req.body);
    res.status(201).json(ok({ share }));
  });
  r.get(path, async (req, res) => {
    const list = await shares.listSessionShares(ctxOf(req, deps), base(req, deps), req.params.projectId, req.params.sessionId);
    res.json(ok({ shares: list, total: list.length }));
  });
  r.get('/shares', async (req, res) => {
    const list = await shares.listShares(ctxOf(req, deps), base(req, deps));
    res.json(ok({ shares: list, total: list.length }));
  });
  r.patch('/shares/:shareId', async (req, res) => {
    res.json(ok({ share: await shares.updateShare(ctxOf(req, deps), base(req, deps), req.params.shareId, req.body) }));
  });
  r.delete('/shares/:shareId', async (req, res) => {
    await shares.deleteShare(ctxOf(req, deps), req.params.shareId);
    res.json(ok({}));
  });
  return r;
}

/**
 * What every answer of a share link carries (success or not): not indexed, never in a Referer,
 * never cached, and the console's strict CSP (nothing from another origin, no inline script).
 */
export const shareHeaders: RequestHandler[] = [
  strictPageHeaders('no-referrer'),
  (_req, res, next) => {
    res.setHeader('X-Robots-Tag', 'noindex, nofollow, noarchive');
    res.setHeader('Cache-Control', 'no-store');
    next();
  },
];

/**
 * Whether the request is signed in, asked only for `signed-in` links: a public link never reads
 * the cookie or the Authorization header.
 */
export function signedInProbe(auth: RequestHandler, req: Request, res: Response): () => Promise<boolean> {
  return () =>
    new Promise<boolean>((resolve) => {
      Promise.resolve(auth(req, res, (err?: unknown) => resolve(!err && !!req.user))).catch(() => resolve(false));
    });
}

/** GET /api/v1/share/<token>: no authentication for public links. */
export function publicShareRouter(deps: Deps, auth: RequestHandler, limit: RequestHandler): Router {
  const r = Router();
  r.get('/share/:token', ...shareHeaders, limit, async (req: Request, res: Response, next: NextFunction) => {
    const paging = shares.parseSharePaging(req.query);
    const page = await shares.readShare(publicCtx(deps), req.params.token as string, { ...paging, countView: true, signedIn: signedInProbe(auth, req, res) });
    res.json(ok(page));
    void next;
  });
  return r;
}
