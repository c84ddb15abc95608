import type { Request, Response } from 'express';
import type { accountRoutes } from '../api/routes';
import { browserSessionOf, endBrowserSession, startBrowserSession } from '../services/browser-sessions';
import { AppError, unauthenticated } from '../errors';
import { checkCsrf, clearSessionCookie, invalidCsrf, ownOrigin, sessionCookie, setSessionCookie } from '../http/auth';
import * as accounts from '../services/accounts';
import { publicCtx } from '../services/context';
import { ok, readBody, type Door } from './context';
import { ctxOf } from '../http/request-context';
import type { Handler, Handlers } from '../api/route';

type Routes = typeof accountRoutes;

/**
 * Sign-in and the other doors that work without a session: sign-in, sign-out,
 * the session, first-run setup, optional sign-up, reset links; and, behind authentication (cookie
 * or key), changing the password and signing out everywhere. Anything that signs a browser in
 * refuses a foreign `Origin` (login CSRF).
 */
export function accountHandlers({ deps, hooks, publicBody: body }: Door): Handlers<typeof accountRoutes> {
  const config = deps.config;
  const ctx = publicCtx(deps);

  const sameOrigin = (req: Request) => {
    const origin = req.get('origin');
    if (origin !== undefined && origin !== ownOrigin(req, config)) throw invalidCsrf();
  };
  const setCookie = (req: Request, res: Response, session: { token: string }) => setSessionCookie(req, res, config, session.token);
  // Every door here that does database work first spends from the address's budget (before any
  // lock or query), so a burst from one address costs the database nothing.
  const anonymous = (req: Request) => hooks.spendAddress?.(req, 'anonymous');
  const parseBody = (req: Request, res: Response) => readBody(body, req, res);

  const browserSession: Handler<Routes['browserSession']> = async (req, res) => {
    const token = sessionCookie(req);
    const current = token ? await accounts.currentAccount(ctx, token) : null;
    if (!current) {
      if (token) clearSessionCookie(req, res, config);
      throw unauthenticated();
    }
    res.setHeader('Cache-Control', 'no-store');
    return ok(current);
  };

  const signIn: Handler<Routes['signIn']> = async (req, res) => {
    sameOrigin(req);
    await anonymous(req);
    await hooks.beforeAuth?.(req);
    await parseBody(req, res);
    const credentials = accounts.credentialsOf(req.body);
    await hooks.beforeSignIn?.(req, credentials.email);
    const user = await accounts.signIn(ctx, credentials);
    if (!user) {
      await hooks.onAuthFailure?.(req);
      await hooks.onSignInFailure?.(req, credentials.email);
      throw new AppError('UNAUTHENTICATED', accounts.INVALID_CREDENTIALS);
    }
    // Successful sign-ins are limited too (each is a 30-day session): over → 429, no session.
    await hooks.onSignInSuccess?.(req, credentials.email);
    setCookie(req, res, await startBrowserSession(ctx, user.id));
    return ok({ user });
  };

  const signOut: Handler<Routes['signOut']> = async (req, res) => {
    const token = sessionCookie(req);
    const session = token ? await browserSessionOf(ctx, token) : null;
    if (session) {
      checkCsrf(req, config, session);
      await endBrowserSession(ctx, session);
    }
    clearSessionCookie(req, res, config);
    return ok({});
  };

  const setupState: Handler<Routes['setupState']> = async (_req, res) => {
    res.setHeader('Cache-Control', 'no-store');
    return ok(await accounts.setupState(ctx));
  };

  const setUp: Handler<Routes['setUp']> = async (req, res) => {
    sameOrigin(req);
    await anonymous(req);
    // After the first account this is a 409 at once: no lock, no body, and (once seen) no query.
    if (await accounts.anyUserExists(ctx)) throw new AppError('CONFLICT', accounts.SETUP_DONE);
    await parseBody(req, res);
    const { user, session } = await accounts.setupFirstAccount(ctx, req.body);
    setCookie(req, res, session);
    res.status(201);
    return ok({ user });
  };

  const signUp: Handler<Routes['signUp']> = async (req, res) => {
    sameOrigin(req);
    await anonymous(req);
    await parseBody(req, res);
    const { user, session } = await accounts.signUp(ctx, req.body, async () => {
      await hooks.spendAddress?.(req, 'signUp');
    });
    setCookie(req, res, session);
    res.status(201);
    return ok({ user });
  };

  const resetPassword: Handler<Routes['resetPassword']> = async (req, res) => {
    sameOrigin(req);
    await anonymous(req);
    await hooks.beforeAuth?.(req);
    await parseBody(req, res);
    try {
      await accounts.resetPassword(ctx, req.body);
    } catch (err) {
      if (err instanceof AppError && err.message === accounts.INVALID_RESET) await hooks.onAuthFailure?.(req);
      throw err;
    }
    clearSessionCookie(req, res, config);
    return ok({});
  };

  const changePassword: Handler<Routes['changePassword']> = async (req) => {
    await accounts.changePassword(ctxOf(req, deps), req.body);
    return ok({});
  };

  const signOutEverywhere: Handler<Routes['signOutEverywhere']> = async (req, res) => {
    await accounts.signOutEverywhere(ctxOf(req, deps));
    clearSessionCookie(req, res, deps.config);
    return ok({});
  };

  return { browserSession, signIn, signOut, setupState, setUp, signUp, resetPassword, changePassword, signOutEverywhere };
}
