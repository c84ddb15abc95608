import type { Request } from 'express';
import { unauthenticated } from '../errors';
import type { Ctx, Deps } from '../services/context';
import '../http/types';

export function ctxOf(req: Request, deps: Deps): Ctx {
  if (!req.user) throw unauthenticated();
  return { deps, user: req.user, log: deps.logger.child({ reqId: req.id }) };
}

export const ok = <T>(data: T) => ({ success: true as const, data });
