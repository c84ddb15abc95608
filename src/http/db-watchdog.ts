import type { NextFunction, Request, Response } from 'express';
import * as mariadb from 'mariadb';
import type { Config } from '../config';
import { connectionOptions } from '../db/client';
import { AppError, isDatabaseUnavailable, MESSAGES } from '../errors';
import type { Logger } from '../logger';
import { sendError } from './errors';

/** A request still running after this long makes the watchdog check the database. */
const CHECK_AFTER_MS = 450;
/** A fresh connection must complete its handshake within this. */
const PROBE_TIMEOUT_MS = 400;
/** Probe results are shared by all requests for this long (one probe at a time). */
const PROBE_TTL_MS = 500;

/**
 * "503 within a second, never hanging" also for a database that is frozen rather than gone (a
 * stopped server process, a black-holed network): the pool's acquire timeout covers new
 * connections, but a statement already sent on a pooled connection would wait for TCP to give
 * up. When a request has run for CHECK_AFTER_MS, a fresh connection is tried (outside the pool);
 * if the database is unreachable the request is answered 503 at once (/readyz: not ready) and
 * whatever it was waiting for is left to fail or finish on its own — a write answered 503 is
 * unacknowledged, and uploads are idempotent PUTs a client retries. A slow but reachable
 * database is left alone.
 */
export function dbWatchdog(config: Config, logger: Logger) {
  const options = { ...connectionOptions(config.databaseUrl), connectTimeout: PROBE_TIMEOUT_MS };
  let last: { at: number; reachable: boolean } | null = null;
  let inflight: Promise<boolean> | null = null;

  const probe = (): Promise<boolean> => {
    if (last && Date.now() - last.at < PROBE_TTL_MS) return Promise.resolve(last.reachable);
    if (inflight) return inflight;
    inflight = (async () => {
      let reachable = true;
      let conn: mariadb.Connection | null = null;
      try {
        conn = await mariadb.createConnection(options);
      } catch (err) {
        reachable = !isDatabaseUnavailable(err) && !/timeout/i.test(String((err as Error)?.message ?? ''));
      }
      conn?.destroy();
      last = { at: Date.now(), reachable };
      inflight = null;
      if (!reachable) logger.warn({ msg: 'database unreachable (watchdog probe failed)' });
      return reachable;
    })();
    return inflight;
  };

  return (req: Request, res: Response, next: NextFunction) => {
    const timer = setTimeout(() => {
      void probe().then((reachable) => {
        if (reachable || res.headersSent || res.writableEnded) return;
        if (req.path === '/readyz') {
          res.status(503).json({ status: 'not ready', reason: 'database unreachable' });
        } else {
          sendError(req, res, new AppError('SERVICE_UNAVAILABLE', MESSAGES.unavailable));
        }
      });
    }, CHECK_AFTER_MS);
    timer.unref();
    // 'close' follows 'finish' on every response (and also ends an aborted one): one listener is
    // enough. A timer firing in between finds the response ended and does nothing.
    res.once('close', () => clearTimeout(timer));
    next();
  };
}
