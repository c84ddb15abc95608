import type { Request, Response } from 'express';
import { AppError } from '../errors';
import type { RateLimitKind } from './rate-limit';

interface LongReadLimits {
  /** Answers that stream one user may have open at once, per instance; one more → 429. */
  perUser: number;
  /** A streaming answer whose reader takes nothing for this long is cut off. */
  idleMs: number;
}

export interface LongReads {
  /**
   * Counts this response as one of its user's long reads until it closes, or throws 429 (with
   * Retry-After) when the user already has `perUser` open. Call before the first byte is sent.
   */
  enter(req: Request, res: Response): void;
  /**
   * From now until the response ends, a reader that takes nothing for `idleMs` is cut off (the
   * connection is destroyed). Call when the body starts: the time spent preparing it (an export's
   * first pass) is the server's, not the reader's.
   */
  cutOffIdle(res: Response): void;
}

/**
 * Long reads: answers that stream (a download of a part larger than one chunk, an export). They
 * hold no database connection while they wait for their reader (src/services/session-reads.ts,
 * src/services/exports.ts); what they still hold is a socket, a chunk of memory and a little CPU
 * per chunk, so one user's are limited in number and an idle reader's end after `idleMs`
 * (docs/operations.md, "Long reads").
 */
export function longReads(limits: LongReadLimits): LongReads {
  const open = new Map<string, number>();
  return {
    enter(req, res) {
      const key = req.user?.id ?? '';
      const n = open.get(key) ?? 0;
      if (n >= limits.perUser) {
        res.locals.rateLimitKind = 'long_reads' satisfies RateLimitKind;
        res.setHeader('Retry-After', '1');
        throw new AppError(
          'RATE_LIMITED',
          `Too many downloads at once: at most ${limits.perUser} downloads and exports per user at a time. Finish one, then retry.`,
          { retryAfter: 1 },
        );
      }
      open.set(key, n + 1);
      res.once('close', () => {
        const left = (open.get(key) ?? 1) - 1;
        if (left > 0) open.set(key, left);
        else open.delete(key);
      });
    },
    cutOffIdle(res) {
      const socket = res.socket;
      if (!socket) return;
      // No byte leaves the socket while its reader takes nothing (the kernel's buffers are full):
      // the socket's own inactivity timer measures exactly that.
      const onIdle = () => socket.destroy();
      socket.setTimeout(limits.idleMs, onIdle);
      // Once the answer is out, the server's own keep-alive timeout takes the socket over.
      res.once('close', () => socket.off('timeout', onIdle));
    },
  };
}
