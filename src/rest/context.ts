import type { RequestHandler } from 'express';
import type { LongReads } from '../http/long-reads';
import type { RateLimitHooks } from '../http/rate-limit';
import type { Deps } from '../services/context';
import '../http/types';

export const ok = <T>(data: T) => ({ success: true as const, data });

/** What the doors' handlers are made with (src/app.ts). */
export interface Door {
  deps: Deps;
  hooks: RateLimitHooks;
  /** Reads the small JSON body of a public operation (64 KiB), when its handler is ready for it. */
  publicBody: RequestHandler;
  /** Authentication without the failed-authentication hooks: whether a share link's reader is signed in. */
  probeAuth: RequestHandler;
  /** Answers that stream: counted per user, their idle readers cut off. */
  longReads: LongReads;
}

/** Runs `body` (a body-reading middleware) as a promise. */
export const readBody = (body: RequestHandler, req: Parameters<RequestHandler>[0], res: Parameters<RequestHandler>[1]) =>
  new Promise<void>((resolve, reject) =>
    body(req, res, (err?: unknown) => (err ? reject(err instanceof Error ? err : new Error('request body could not be read')) : resolve())),
  );
