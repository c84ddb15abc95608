import { Router, type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import type { RateLimitHooks } from '../http/rate-limit';
import { endBrowserSession, endSessionsOfUser, resolveBrowserSession, startBrowserSession } from '../auth/browser-sessions';
import { AppError, unauthenticated } from '../errors';
import { checkCsrf, clearSessionCookie, invalidCsrf, ownOrigin, sessionCookie, setSessionCookie } from '../http/auth';
import * as accounts from '../services/accounts';
import * as teams from '../services/teams';
import type { Deps } from '../services/context';
import { createUser, getAccount, type AccountDto } from '../services/users';
import { ctxOf, ok } from './context';

type Handler = (req: Request, res: Response) => Promise<void>;

/** `invitationToken` of a sign-up body, when it carries one. */
const invitationTokenOf = (b: unknown): string | null => {
  const t = b && typeof b === 'object' ? (b as { invitationToken?: unknown }).invitationToken : undefined;
  return typeof t === 'string' && t.length > 0 && t.length <= 200 ? t : null;
};
const wrap = (h: Handler) => (req: Request, res: Response, next: NextFunction) => h(req, res).catch(next);

/**
 * Sign-in and the other doors that work without a session: sign-in, sign-out,
 * the session, first-run setup, optional sign-up, reset links. Anything that signs a browser in
 * refuses a foreign `Origin` (login CSRF).
 */
export function publicAuthRouter(deps: Deps, hooks: RateLimitHooks, body: RequestHandler): Router {
  const r = Router();
  const { db } = deps;
  const config = deps.config;

  const sameOrigin = (req: Request) => {
    const origin = req.get('origin');
    if (origin !== undefined && origin !== ownOrigin(req, config)) throw invalidCsrf();
  };
  const signInBrowser = async (req: Request, res: Response, user: AccountDto) => {
    const { token } = await startBrowserSession(db.writes, user.id, config.browserSessionsPerUser);
    setSessionCookie(req, res, config, token);
  };
  // Every door here that does database work first spends from the address's budget (before any
  // lock or query), so a burst from one address costs the database nothing.
  const anonymous = (req: Request) => hooks.spendAddress?.(req, 'anonymous');
  const parseBody = (req: Request, res: Response) =>
    new Promise<void>((resolve, reject) =>
      body(req, res, (err?: unknown) => (err ? reject(err instanceof Error ? err : new Error('request body could not be read')) : resolve())),
    );

  r.get(
    '/auth/session',
    wrap(async (req, res) => {
      const token = sessionCookie(req);
      const session = token ? await resolveBrowserSession(db.writes, token) : null;
      const user = session && (await getAccount(db, session.userId));
      if (!session || !user) {
        if (token) clearSessionCookie(req, res, config);
        throw unauthenticated();
      }
      res.setHeader('Cache-Control', 'no-store');
      res.json(ok({ user, csrfToken: session.csrfToken }));
    }),
  );

  r.post(
    '/auth/sign-in',
    wrap(async (req, res) => {
      sameOrigin(req);
      await anonymous(req);
      await hooks.beforeAuth?.(req);
      await parseBody(req, res);
      const credentials = accounts.credentialsOf(req.body);
      await hooks.beforeSignIn?.(req, credentials.email);
      const user = await accounts.signIn(db, credentials);
      if (!user) {
        await hooks.onAuthFailure?.(req);
        await hooks.onSignInFailure?.(req, credentials.email);
        throw new AppError('UNAUTHENTICATED', accounts.INVALID_CREDENTIALS);
      }
      // Successful sign-ins are limited too (each is a 30-day session): over → 429, no session.
      await hooks.onSignInSuccess?.(req, credentials.email);
      await signInBrowser(req, res, user);
      res.json(ok({ user }));
    }),
  );

  r.post(
    '/auth/sign-out',
    wrap(async (req, res) => {
      const token = sessionCookie(req);
      const session = token ? await resolveBrowserSession(db.writes, token) : null;
      if (session) {
        checkCsrf(req, config, session);
        await endBrowserSession(db.writes, session.tokenHash);
      }
      clearSessionCookie(req, res, config);
      res.json(ok({}));
    }),
  );

  r.get(
    '/auth/setup',
    wrap(async (_req, res) => {
      res.setHeader('Cache-Control', 'no-store');
      res.json(ok({ needsSetup: !(await accounts.anyUserExists(db)), signupEnabled: config.signupEnabled }));
    }),
  );

  r.post(
    '/auth/setup',
    wrap(async (req, res) => {
      sameOrigin(req);
      await anonymous(req);
      // After the first account this is a 409 at once: no lock, no body, and (once seen) no query.
      if (await accounts.anyUserExists(db)) throw new AppError('CONFLICT', accounts.SETUP_DONE);
      await parseBody(req, res);
      const user = await accounts.setupFirstAccount(db, `${config.namespace}:setup`, req.body);
      await signInBrowser(req, res, user);
      res.status(201).json(ok({ user }));
    }),
  );

  r.post(
    '/auth/sign-up',
    wrap(async (req, res) => {
      sameOrigin(req);
      await anonymous(req);
      await parseBody(req, res);
      // An invitation to a team lets its holder create an account even with sign-up off (for the
      // invitation's email when it names one), and joins the team with it.
      const invitationToken = invitationTokenOf(req.body);
      const invitation = invitationToken ? await teams.openInvitation(db, invitationToken) : null;
      if (!config.signupEnabled && !invitation) throw new AppError('FORBIDDEN', 'Sign-up is disabled');
      const { email, name, password } = accounts.newAccountOf(req.body);
      if (invitation) teams.checkInvitationEmail(invitation, email);
      // Each well-formed attempt counts (a taken email too: that bounds probing for accounts).
      await hooks.spendAddress?.(req, 'signUp');
      const created = await createUser(db, email, name, { password, role: 'member' });
      const user: AccountDto = { id: created.id, email: created.email, name: created.name, role: created.role };
      if (invitationToken) await teams.joinWithInvitation(db, invitationToken, user);
      await signInBrowser(req, res, user);
      res.status(201).json(ok({ user }));
    }),
  );

  r.post(
    '/auth/reset-password',
    wrap(async (req, res) => {
      sameOrigin(req);
      await anonymous(req);
      await hooks.beforeAuth?.(req);
      await parseBody(req, res);
      try {
        await accounts.resetPassword(db, req.body);
      } catch (err) {
        if (err instanceof AppError && err.message === accounts.INVALID_RESET) await hooks.onAuthFailure?.(req);
        throw err;
      }
      clearSessionCookie(req, res, config);
      res.json(ok({}));
    }),
  );

  return r;
}

/** Account routes behind authentication (cookie or key): change password, sign out everywhere. */
export function accountRouter(deps: Deps): Router {
  const r = Router();
  const { db } = deps;

  r.post('/auth/password', async (req, res) => {
    const ctx = ctxOf(req, deps);
    await accounts.changePassword(db, ctx.user.id, req.body, ctx.user.sessionTokenHash);
    res.json(ok({}));
  });

  r.post('/auth/sign-out-everywhere', async (req, res) => {
    const ctx = ctxOf(req, deps);
    await endSessionsOfUser(db.writes, ctx.user.id);
    clearSessionCookie(req, res, deps.config);
    res.json(ok({}));
  });

  return r;
}
