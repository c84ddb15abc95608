import crypto from 'node:crypto';
import { parseCookie } from 'cookie';
import type { NextFunction, Request, Response } from 'express';
import { authenticate } from '../services/authenticate';
import { resolveBrowserSession, SESSION_COOKIE, SESSION_IDLE_MS, type BrowserSession } from '../services/browser-sessions';
import type { Config } from '../config';
import { AppError, unauthenticated } from '../errors';
import type { Deps } from '../services/context';
import { roleOf } from '../domain/roles';
import { READ_ONLY_MESSAGE } from '../domain/scopes';
import './types';

/** Hook run when authentication fails (the brute-force guard against failed authentications plugs in here). */
export type AuthFailureHook = (req: Request) => Promise<void>;

const CSRF_HEADER = 'x-csrf-token';
export const invalidCsrf = () => new AppError('FORBIDDEN', 'Invalid CSRF token');

/** The `sa_session` cookie's token, if the request carries one. */
export function sessionCookie(req: Request): string | null {
  const header = req.headers.cookie;
  if (!header) return null;
  try {
    return parseCookie(header)[SESSION_COOKIE] || null;
  } catch {
    return null;
  }
}

/** The service's own origin: PUBLIC_URL's, else the one this request was addressed to. */
export function ownOrigin(req: Request, config: Config): string {
  return config.publicUrl ?? `${req.protocol}://${req.get('host') ?? ''}`;
}

const sameSecret = (a: string, b: string) => {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && crypto.timingSafeEqual(x, y);
};

/**
 * The CSRF rule for cookie-authenticated requests (docs/accounts.md): anything but GET/HEAD must
 * carry `X-CSRF-Token` equal to the session's token and, when `Origin` is present, come from the
 * service's own origin; else 403 `Invalid CSRF token`. Runs before the body is read: a refused
 * request writes nothing.
 */
export function checkCsrf(req: Request, config: Config, session: BrowserSession): void {
  if (req.method === 'GET' || req.method === 'HEAD') return;
  const given = req.get(CSRF_HEADER);
  if (!given || !sameSecret(given, session.csrfToken)) throw invalidCsrf();
  const origin = req.get('origin');
  if (origin !== undefined && origin !== ownOrigin(req, config)) throw invalidCsrf();
}

/** Sets the session cookie (HttpOnly, SameSite=Lax, Path=/, Secure on HTTPS or with COOKIE_SECURE). */
export function setSessionCookie(req: Request, res: Response, config: Config, token: string): void {
  res.cookie(SESSION_COOKIE, token, {
    httpOnly: true,
    sameSite: 'lax',
    path: '/',
    secure: req.secure || config.cookieSecure,
    maxAge: SESSION_IDLE_MS,
  });
}

export function clearSessionCookie(req: Request, res: Response, config: Config): void {
  res.clearCookie(SESSION_COOKIE, { httpOnly: true, sameSite: 'lax', path: '/', secure: req.secure || config.cookieSecure });
}

/**
 * Authentication of every API request: `Authorization: Bearer` (an API key or a device access
 * token) when the header is present, else the `sa_session` cookie with the CSRF rule.
 */
export function requireAuth(deps: Deps, onFailure?: AuthFailureHook, beforeAuth?: AuthFailureHook) {
  return async (req: Request, res: Response, next: NextFunction) => {
    try {
      // An address already over the failed-authentication limit is refused before its token is tried.
      if (beforeAuth) await beforeAuth(req);
      const header = req.get('authorization');
      const cookieToken = header === undefined ? sessionCookie(req) : null;
      if (cookieToken) {
        const session = await resolveBrowserSession(deps.db.reads, cookieToken);
        if (session) {
          checkCsrf(req, deps.config, session);
          if (session.touched) setSessionCookie(req, res, deps.config, cookieToken);
          req.user = { id: session.userId, keyId: null, role: roleOf(session.role), sessionTokenHash: session.tokenHash, memberships: session.memberships };
          return next();
        }
        // A dead session: the browser may forget its cookie.
        clearSessionCookie(req, res, deps.config);
      } else {
        const user = await authenticate(deps.db.reads, deps.config.jwtSecret, header);
        if (user) {
          req.user = user;
          return next();
        }
      }
      if (onFailure) await onFailure(req);
      next(unauthenticated());
    } catch (err) {
      next(err);
    }
  };
}

/**
 * A read-only key (scopes ["read"]) may read but never write: any other method than GET/HEAD on
 * the REST API → 403 `This key is read-only`, before the body is read (and after
 * authentication and the rate limit). Operations declared `reads` (a POST that only reads, the
 * upload CLI's resume search) go without it (src/app.ts).
 */
export function refuseWritesOfReadOnlyKeys(req: Request, _res: Response, next: NextFunction): void {
  if (!req.user?.readOnly || req.method === 'GET' || req.method === 'HEAD') return next();
  next(new AppError('FORBIDDEN', READ_ONLY_MESSAGE));
}
