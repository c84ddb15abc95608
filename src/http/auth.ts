import type { NextFunction, Request, Response } from 'express';
import { authenticate } from '../auth/authenticate';
import { unauthenticated } from '../errors';
import type { Deps } from '../services/context';
import './types';

/** Hook run when authentication fails (the brute-force guard of contract §5 plugs in here). */
export type AuthFailureHook = (req: Request) => Promise<void>;

export function requireAuth(deps: Deps, onFailure?: AuthFailureHook, beforeAuth?: AuthFailureHook) {
  return async (req: Request, _res: Response, next: NextFunction) => {
    try {
      // An address already over the failed-authentication limit is refused before its token is tried.
      if (beforeAuth) await beforeAuth(req);
      const user = await authenticate(deps.db.readPool, deps.config.jwtSecret, req.get('authorization'));
      if (!user) {
        if (onFailure) await onFailure(req);
        return next(unauthenticated());
      }
      req.user = user;
      next();
    } catch (err) {
      next(err);
    }
  };
}
