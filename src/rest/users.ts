import { Router, type Request } from 'express';
import { createResetLink, userByAdminOf } from '../services/accounts';
import type { Deps } from '../services/context';
import { AppError, forbidden, invalid } from '../errors';
import { ownOrigin } from '../http/auth';
import { createUser, getAdminUser, listUsers, setUserDisabled } from '../services/users';
import { ctxOf, ok } from './context';

/** The admins' Users page of the console: list, create, reset link, disable / enable. */
export function usersRouter(deps: Deps): Router {
  const r = Router();
  const { db } = deps;
  const admin = (req: Request) => {
    const ctx = ctxOf(req, deps);
    if (ctx.user.role !== 'admin') throw forbidden();
    return ctx;
  };
  const base = (req: Request) => deps.config.publicUrl ?? ownOrigin(req, deps.config);

  r.get('/users', async (req, res) => {
    admin(req);
    const users = await listUsers(db);
    res.json(ok({ users, total: users.length }));
  });

  r.post('/users', async (req, res) => {
    admin(req);
    const { email, name, password, role } = userByAdminOf(req.body);
    const user = await createUser(db, email, name, { password, role });
    const row = (await getAdminUser(db, user.id))!;
    // Without a password, the new user sets one through a reset link (valid one hour).
    const reset = password ? {} : await createResetLink(db, user.id, base(req));
    res.status(201).json(ok({ user: row, ...reset }));
  });

  r.post('/users/:userId/reset-password', async (req, res) => {
    admin(req);
    const row = await getAdminUser(db, req.params.userId);
    if (!row) throw new AppError('NOT_FOUND', 'User not found');
    res.json(ok(await createResetLink(db, row.id, base(req))));
  });

  for (const [action, disabled] of [
    ['disable', true],
    ['enable', false],
  ] as const) {
    r.post(`/users/:userId/${action}`, async (req, res) => {
      const ctx = admin(req);
      if (disabled && req.params.userId === ctx.user.id) throw invalid('You cannot disable your own account');
      res.json(ok({ user: await setUserDisabled(db, req.params.userId, disabled) }));
    });
  }

  return r;
}
