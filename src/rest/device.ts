import { Router, type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import type { RateLimitHooks } from '../http/rate-limit';
import { unauthenticated } from '../errors';
import * as device from '../services/device';
import { publicCtx, type Deps } from '../services/context';
import { ctxOf, ok } from './context';

type Handler = (req: Request, res: Response) => Promise<void>;
const wrap = (h: Handler) => (req: Request, res: Response, next: NextFunction) => h(req, res).catch(next);
const parse = (body: RequestHandler, req: Request, res: Response) =>
  new Promise<void>((resolve, reject) =>
    body(req, res, (err?: unknown) => (err ? reject(err instanceof Error ? err : new Error('request body could not be read')) : resolve())),
  );

/**
 * Device login for the upload CLI and the desktop app. Their answers carry no
 * envelope (the clients parse them as they are); errors use the usual one. Every failure counts
 * against the failed-authentication limit of the address.
 */
export function deviceLoginRouter(deps: Deps, hooks: RateLimitHooks, body: RequestHandler): Router {
  const r = Router();
  const ctx = publicCtx(deps);

  const counted = async <T>(req: Request, work: () => Promise<T>): Promise<T> => {
    try {
      return await work();
    } catch (err) {
      if ((err as { code?: string }).code === 'UNAUTHENTICATED') await hooks.onAuthFailure?.(req);
      throw err;
    }
  };

  // Spends from the address's budget first (before any lock or query).
  r.post(
    '/device-login',
    wrap(async (req, res) => {
      await hooks.spendAddress?.(req, 'anonymous');
      await hooks.beforeAuth?.(req);
      // Codes are 6 characters (what the clients accept): guessing is bounded by the service-wide
      // budget of failed device logins as well as by the address's.
      await hooks.beforeDeviceLogin?.(req);
      await parse(body, req, res);
      res.json(
        await counted(req, async () => {
          try {
            return await device.deviceLogin(ctx, req.body);
          } catch (err) {
            if ((err as { code?: string }).code === 'UNAUTHENTICATED') await hooks.onDeviceLoginFailure?.(req);
            throw err;
          }
        }),
      );
    }),
  );

  // Refresh and logout read the database only for a token whose signature checks out.
  r.post(
    '/device-refresh',
    wrap(async (req, res) => {
      await hooks.beforeAuth?.(req);
      const result = await counted(req, async () => (await device.deviceRefresh(ctx, req.get('authorization'))) ?? Promise.reject(unauthenticated()));
      res.json(result);
    }),
  );

  r.post(
    '/device-logout',
    wrap(async (req, res) => {
      await device.deviceLogout(ctx, req.get('authorization'));
      res.json({ success: true });
    }),
  );

  return r;
}

/** `/cli-login`'s code (behind authentication: the signed-in person's code). */
export function deviceCodesRouter(deps: Deps): Router {
  const r = Router();
  r.post('/device-codes', async (req, res) => {
    res.status(201).json(ok(await device.issueDeviceCode(ctxOf(req, deps), req.body)));
  });
  return r;
}
