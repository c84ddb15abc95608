import type { NextFunction, Request, Response } from 'express';
import { AppError, MESSAGES } from '../errors';
import { sendError } from './errors';

const MiB = 1024 * 1024;
/** A body of unknown length (chunked) reserves this much of the budget. */
const UNKNOWN_LENGTH_RESERVE = 8 * MiB;
/** A gzip body may inflate: it reserves this multiple of its length (at most the body limit). */
const GZIP_RESERVE_FACTOR = 4;

export interface AdmissionLimits {
  bytesInFlight: number;
  perUser: number;
  maxBodyBytes: number;
}

/**
 * Admission control for request bodies, before a byte of them is read (contract §12): a budget of
 * body bytes in flight across all users and a cap on concurrent uploads per user. Over either →
 * 503 `Server busy, retry later` with Retry-After; nothing is read, nothing written, and the
 * connection is closed (closeUnreadBodies). The reservation ends when the response does.
 */
export function admission(limits: AdmissionLimits) {
  let inFlight = 0;
  const perUser = new Map<string, number>();
  const mw = (req: Request, res: Response, next: NextFunction) => {
    const length = req.headers['content-length'];
    const chunked = req.headers['transfer-encoding'] !== undefined;
    if (!chunked && (length === undefined || length === '0')) return next();
    const declared = chunked ? UNKNOWN_LENGTH_RESERVE : Number(length) || 0;
    const gzip = /gzip/i.test(String(req.headers['content-encoding'] ?? ''));
    const bytes = Math.min(limits.maxBodyBytes, gzip ? declared * GZIP_RESERVE_FACTOR : declared);
    // The per-user cap counts uploads (PUT); every body counts against the byte budget.
    const user = req.method === 'PUT' ? (req.user?.id ?? '') : null;
    const mine = user === null ? 0 : (perUser.get(user) ?? 0);
    // One body is always admitted when nothing else is in flight, whatever its size.
    if ((inFlight > 0 && inFlight + bytes > limits.bytesInFlight) || mine >= limits.perUser) {
      return sendError(req, res, new AppError('SERVICE_UNAVAILABLE', MESSAGES.busy));
    }
    inFlight += bytes;
    if (user !== null) perUser.set(user, mine + 1);
    res.once('close', () => {
      inFlight -= bytes;
      if (user === null) return;
      const n = (perUser.get(user) ?? 1) - 1;
      if (n > 0) perUser.set(user, n);
      else perUser.delete(user);
    });
    next();
  };
  return Object.assign(mw, { inFlight: () => inFlight });
}

/**
 * Contract §16, slow and abandoned clients: a response sent before its request's body was read
 * closes the connection (`Connection: close`; Node then ends the socket once the response is
 * out), so a client trickling a body it was refused cannot keep the socket.
 */
export function closeUnreadBodies(req: Request, res: Response, next: NextFunction): void {
  const writeHead = res.writeHead;
  res.writeHead = function (this: Response, ...args: unknown[]) {
    if (!req.complete && !res.headersSent) res.setHeader('Connection', 'close');
    return (writeHead as (...a: unknown[]) => Response).apply(this, args);
  } as Response['writeHead'];
  res.once('finish', () => {
    if (req.complete) return;
    // Whatever Node does with the rest of the body, the socket goes once the answer had time to leave.
    setTimeout(() => req.socket?.destroy(), 1000).unref();
  });
  next();
}
