import type { Request } from 'express';
import { unauthenticated } from '../errors';
import type { Logger } from '../logger';
import type { Ctx, Deps } from '../services/context';
import '../http/types';

/**
 * The request's service context. Its logger (a child carrying `reqId`) is made on first use:
 * most reads never log, and building a pino child serialises its bindings every time.
 */
export function ctxOf(req: Request, deps: Deps): Ctx {
  const user = req.user;
  if (!user) throw unauthenticated();
  let log: Logger | undefined;
  return {
    deps,
    user,
    guard: req.guard,
    get log() {
      return (log ??= deps.logger.child({ reqId: req.id }));
    },
  };
}

export const ok = <T>(data: T) => ({ success: true as const, data });
