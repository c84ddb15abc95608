import type { Request, RequestHandler, Response } from 'express';
import type { shareRoutes } from '../api/routes';
import { strictPageHeaders } from '../http/console';
import { publicCtx } from '../services/context';
import * as shares from '../services/shares';
import { ownOrigin } from '../http/auth';
import { ok, type Door } from './context';
import { ctxOf } from '../http/request-context';
import type { Handlers } from '../api/route';

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

/** Making and managing links (behind authentication), and reading one (no authentication for public links). */
export function shareHandlers({ deps, probeAuth }: Door): Handlers<typeof shareRoutes> {
  const base = (req: Request) => ownOrigin(req, deps.config);
  return {
    createShare: async (req, res) => {
      const share = await shares.createShare(ctxOf(req, deps), base(req), req.params.projectId, req.params.sessionId, req.body);
      res.status(201);
      return ok({ share });
    },
    listSessionShares: async (req) => {
      const list = await shares.listSessionShares(ctxOf(req, deps), base(req), req.params.projectId, req.params.sessionId);
      return ok({ shares: list, total: list.length });
    },
    listShares: async (req) => {
      const list = await shares.listShares(ctxOf(req, deps), base(req));
      return ok({ shares: list, total: list.length });
    },
    updateShare: async (req) => ok({ share: await shares.updateShare(ctxOf(req, deps), base(req), req.params.shareId, req.body) }),
    deleteShare: async (req) => {
      await shares.deleteShare(ctxOf(req, deps), req.params.shareId);
      return ok({});
    },
    // The share headers come first: every answer of a link carries them, a 429 of its limit too.
    readShare: {
      use: shareHeaders,
      handle: async (req, res) => {
        const paging = shares.parseSharePaging(req.query);
        return ok(await shares.readShare(publicCtx(deps), req.params.token, { ...paging, countView: true, signedIn: signedInProbe(probeAuth, req, res) }));
      },
    },
  };
}
