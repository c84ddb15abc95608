import type { BodyGate } from '../domain/body-gate';
import type { NextFunction, Request, Response } from 'express';
import { AppError, MESSAGES } from '../errors';
import { sendError } from './errors';

interface AdmissionLimits {
  /** The shared upload capacity: body bytes held by admitted requests, all users together. */
  bytesInFlight: number;
  /** Requests with a body one user may have admitted at once (more wait in the queue). */
  perUser: number;
  /** The largest body (after inflating): what one request may still come to hold. */
  maxBodyBytes: number;
  /** How long a request over capacity waits for room before it is refused as busy. */
  queueWaitMs: number;
}

export interface AdmissionStats {
  /** Body bytes held by admitted requests (counted as received, inflated). */
  bytesHeld: number;
  admitted: number;
  queued: number;
  /** Admitted requests whose reading is held back for lack of room. */
  paused: number;
  refusedBusy: number;
}

interface UserState {
  held: number;
  admitted: number;
  queued: number;
  /** The one request of this user allowed past the user's soft limit (see below). */
  exempt: Ticket | null;
}

interface Ticket extends BodyGate {
  seq: number;
  user: UserState;
  held: number;
  pausedSince: number | null;
  pausedTotal: number;
  resume: (() => void) | null;
}

interface Waiter {
  key: string;
  user: UserState;
  admit(): void;
  refuse(): void;
}

/**
 * Admission control for request bodies (after authentication, so the user is known). Capacity is
 * counted in bytes actually received and kept (inflated), not in the length a client declares:
 * a body that trickles holds almost nothing, and http/body.ts cuts it off below a minimum rate.
 *
 * - A request is admitted when its user has fewer than `perUser` admitted and there is room (below);
 *   else it waits in a FIFO queue up to `queueWaitMs`, then gets 503 `Server busy, retry later`
 *   with Retry-After (nothing read, nothing written; closeUnreadBodies closes the connection).
 * - While reading, every chunk is counted. One user never holds more than half the capacity, and
 *   all users together never more than the capacity, to within one network read per request:
 *   each user's requests share `half − maxBody` (the soft limit), and one request of that user,
 *   the exempt one, may read past it up to its whole body (≤ maxBody). Likewise all requests share
 *   `capacity − maxBody`, and one exempt request (always a user-exempt one) may read past it. A
 *   request over a limit pauses; the exempt slots guarantee that some request can always finish,
 *   so paused requests never deadlock. Room freed (a response ends) wakes paused requests oldest
 *   first, then the queue.
 * - A request's bytes are held until its response ends (the body is kept until it is stored).
 */
export function admission(limits: AdmissionLimits) {
  const userSoft = Math.floor(limits.bytesInFlight / 2) - limits.maxBodyBytes;
  const globalSoft = limits.bytesInFlight - limits.maxBodyBytes;
  const users = new Map<string, UserState>();
  const paused = new Set<Ticket>();
  const queue: Waiter[] = [];
  let held = 0;
  let globalExempt: Ticket | null = null;
  let seq = 0;
  let refusedBusy = 0;

  const userNonExempt = (u: UserState) => u.held - (u.exempt?.held ?? 0);
  const globalNonExempt = () => held - (globalExempt?.held ?? 0);

  /** May `t` read more? Takes a free exempt slot when that is what it needs. */
  function mayRead(t: Ticket): boolean {
    const u = t.user;
    if (t !== u.exempt && userNonExempt(u) >= userSoft) {
      if (u.exempt) return false;
      u.exempt = t;
      soon();
    }
    if (t !== globalExempt && globalNonExempt() >= globalSoft) {
      if (globalExempt || t !== u.exempt) return false;
      globalExempt = t;
      soon();
    }
    return true;
  }

  /**
   * Room for one more request of this user to start reading. A new request never starts as the
   * global exempt, so a full pool refuses it (it waits in the queue); a user whose soft share is
   * full but whose exempt slot is free may start one (it takes the slot).
   */
  function hasRoom(u: UserState): boolean {
    return u.admitted < limits.perUser && (userNonExempt(u) < userSoft || u.exempt === null) && globalNonExempt() < globalSoft;
  }

  // A request moved into an exempt slot no longer counts toward the shared soft limits: that may
  // make room for others, looked at once the current chunk has been handled.
  let pumpSoon = false;
  function soon(): void {
    if (pumpSoon) return;
    pumpSoon = true;
    setImmediate(() => {
      pumpSoon = false;
      pump();
    });
  }

  /** Room was freed: paused readers first (oldest first), then the queue in order. */
  function pump(): void {
    for (const t of [...paused].sort((x, y) => x.seq - y.seq)) {
      if (!paused.has(t) || !mayRead(t)) continue;
      paused.delete(t);
      t.pausedTotal += Date.now() - (t.pausedSince ?? Date.now());
      t.pausedSince = null;
      const resume = t.resume;
      t.resume = null;
      resume?.();
    }
    for (const w of [...queue]) {
      if (hasRoom(w.user)) {
        queue.splice(queue.indexOf(w), 1);
        w.user.queued--;
        w.admit();
      }
    }
  }

  function userOf(key: string): UserState {
    let u = users.get(key);
    if (!u) users.set(key, (u = { held: 0, admitted: 0, queued: 0, exempt: null }));
    return u;
  }

  function forget(key: string, u: UserState): void {
    if (u.admitted === 0 && u.queued === 0 && users.get(key) === u) users.delete(key);
  }

  function admit(req: Request, res: Response, key: string, u: UserState, next: NextFunction): void {
    u.admitted++;
    let released = false;
    const t: Ticket = {
      seq: seq++,
      user: u,
      held: 0,
      pausedSince: null,
      pausedTotal: 0,
      resume: null,
      take(bytes) {
        if (released) return true;
        t.held += bytes;
        u.held += bytes;
        held += bytes;
        if (mayRead(t)) return true;
        paused.add(t);
        t.pausedSince = Date.now();
        return false;
      },
      give(bytes) {
        const n = Math.min(bytes, t.held);
        if (released || n <= 0) return;
        t.held -= n;
        u.held -= n;
        held -= n;
        pump();
      },
      onResume(resume) {
        if (paused.has(t)) t.resume = resume;
        else resume();
      },
      pausedMs: () => t.pausedTotal + (t.pausedSince === null ? 0 : Date.now() - t.pausedSince),
    };
    res.once('close', () => {
      released = true;
      held -= t.held;
      u.held -= t.held;
      u.admitted--;
      paused.delete(t);
      t.resume = null;
      if (u.exempt === t) u.exempt = null;
      if (globalExempt === t) globalExempt = null;
      forget(key, u);
      pump();
    });
    req.bodyGate = t;
    next();
  }

  const mw = (req: Request, res: Response, next: NextFunction) => {
    const length = req.headers['content-length'];
    const chunked = req.headers['transfer-encoding'] !== undefined;
    if (!chunked && (length === undefined || length === '0')) return next();
    // Authentication ran first: an unauthenticated request never gets here.
    const key = req.user?.id ?? '';
    const u = userOf(key);
    // Behind an earlier request of the same user that waits: first come, first served.
    if (u.queued === 0 && hasRoom(u)) return admit(req, res, key, u, next);
    let done = false;
    const w: Waiter = {
      key,
      user: u,
      admit: () => {
        done = true;
        clearTimeout(timer);
        admit(req, res, key, u, next);
      },
      refuse: () => {
        done = true;
        refusedBusy++;
        sendError(req, res, new AppError('SERVICE_UNAVAILABLE', MESSAGES.busy));
      },
    };
    const leave = () => {
      const i = queue.indexOf(w);
      if (i < 0) return false;
      queue.splice(i, 1);
      u.queued--;
      forget(key, u);
      return true;
    };
    const timer = setTimeout(() => {
      if (leave()) w.refuse();
    }, limits.queueWaitMs);
    timer.unref();
    // A client that goes away while waiting leaves the queue.
    res.once('close', () => {
      if (!done) {
        clearTimeout(timer);
        leave();
      }
    });
    u.queued++;
    queue.push(w);
  };
  const stats = (): AdmissionStats => ({
    bytesHeld: held,
    admitted: [...users.values()].reduce((n, u) => n + u.admitted, 0),
    queued: queue.length,
    paused: paused.size,
    refusedBusy,
  });
  return Object.assign(mw, { stats });
}

/**
 * Slow and abandoned clients: a response sent before its request's body was read
 * closes the connection (`Connection: close`; Node then ends the socket once the response is
 * out), so a client trickling a body it was refused cannot keep the socket.
 */
export function closeUnreadBodies(req: Request, res: Response, next: NextFunction): void {
  // A request without a body (no Content-Length but 0, no Transfer-Encoding) has nothing to leave unread.
  const length = req.headers['content-length'];
  if ((length === undefined || length === '0') && req.headers['transfer-encoding'] === undefined) return next();
  const writeHead = res.writeHead.bind(res) as (...a: unknown[]) => Response;
  res.writeHead = function (...args: unknown[]) {
    if (!req.complete && !res.headersSent) res.setHeader('Connection', 'close');
    return writeHead(...args);
  } as Response['writeHead'];
  res.once('finish', () => {
    if (req.complete) return;
    // Whatever Node does with the rest of the body, the socket goes once the answer had time to leave.
    setTimeout(() => req.socket?.destroy(), 1000).unref();
  });
  next();
}
