import { Router, type Request } from 'express';
import { createResetLink, newAccountOf } from '../services/accounts';
import type { Deps } from '../services/context';
import { AppError, forbidden, invalid } from '../errors';
import { ownOrigin } from '../http/auth';
import { isPlainObject } from '../services/validation';
import { createUser, listUsers, setUserDisabled, toAdminUser, type Role } from '../services/users';
import { ctxOf, ok } from './context';

/** The admins' Users page (contract §10): list, create, reset link, disable / enable. */
export function usersRouter(deps: Deps): Router {
  const r = Router();
  const { pool, prisma } = deps.db;
  const admin = (req: Request) => {
    const ctx = ctxOf(req, deps);
    if (ctx.user.role !== 'admin') throw forbidden();
    return ctx;
  };
  const base = (req: Request) => deps.config.publicUrl ?? ownOrigin(req, deps.config);

  r.get('/users', async (req, res) => {
    admin(req);
    const users = await listUsers(prisma);
    res.json(ok({ users, total: users.length }));
  });

  r.post('/users', async (req, res) => {
    admin(req);
    const { email, name, password } = newAccountOf(req.body, false);
    const roleIn = isPlainObject(req.body) ? req.body.role : undefined;
    if (roleIn !== undefined && roleIn !== null && roleIn !== 'admin' && roleIn !== 'member') {
      throw invalid('Invalid value for role. Must be one of: admin, member');
    }
    const role: Role = roleIn === 'admin' ? 'admin' : 'member';
    const user = await createUser(prisma, email, name, { password, role });
    const row = await prisma.user.findUniqueOrThrow({ where: { id: user.id } });
    // Without a password, the new user sets one through a reset link (valid one hour).
    const reset = password ? {} : await createResetLink(prisma, user.id, base(req));
    res.status(201).json(ok({ user: toAdminUser(row), ...reset }));
  });

  r.post('/users/:userId/reset-password', async (req, res) => {
    admin(req);
    const row = await prisma.user.findUnique({ where: { id: req.params.userId } });
    if (!row) throw new AppError('NOT_FOUND', 'User not found');
    res.json(ok(await createResetLink(prisma, row.id, base(req))));
  });

  for (const [action, disabled] of [['disable', true], ['enable', false]] as const) {
    r.post(`/users/:userId/${action}`, async (req, res) => {
      const ctx = admin(req);
      if (disabled && req.params.userId === ctx.user.id) throw invalid('You cannot disable your own account');
      res.json(ok({ user: await setUserDisabled(pool, prisma, req.params.userId, disabled) }));
    });
  }

  return r;
}
