import type { NextFunction, Request, Response } from 'express';
import * as mariadb from 'mariadb';
import { monitorEventLoopDelay } from 'node:perf_hooks';
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
/** An event loop stalled this long during a probe makes its timeout say nothing about the database. */
const LOOP_STALL_MS = 100;

/**
 * What a failed probe means. A refused or reset connection: the database is unreachable. A
 * timeout, only if this process was responsive meanwhile: under CPU saturation the handshake's
 * reply waits behind other work in the event loop, so a timeout there says the process is busy,
 * not that the database is gone (a bench of 50 heavy GraphQL clients answered 503s for that).
 */
export function probeVerdict(err: unknown, loopStallMs: number): 'reachable' | 'unreachable' {
  const timedOut = /timeout/i.test(String((err as Error)?.message ?? ''));
  if (timedOut) return loopStallMs >= LOOP_STALL_MS ? 'reachable' : 'unreachable';
  return isDatabaseUnavailable(err) ? 'unreachable' : 'reachable';
}

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
  const loopDelay = monitorEventLoopDelay({ resolution: 20 });
  loopDelay.enable();
  let last: { at: number; reachable: boolean } | null = null;
  let inflight: Promise<boolean> | null = null;

  const probe = (): Promise<boolean> => {
    if (last && Date.now() - last.at < PROBE_TTL_MS) return Promise.resolve(last.reachable);
    if (inflight) return inflight;
    inflight = (async () => {
      let reachable = true;
      let conn: mariadb.Connection | null = null;
      loopDelay.reset();
      try {
        conn = await mariadb.createConnection(options);
      } catch (err) {
        // The histogram's max is the longest stall seen since the reset, in nanoseconds.
        reachable = probeVerdict(err, loopDelay.max / 1e6) === 'reachable';
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
