import { Router, type Request } from 'express';
import { addUser, createResetLink } from '../services/accounts';
import type { Deps } from '../services/context';
import { ownOrigin } from '../http/auth';
import { listUsers, setUserDisabled } from '../services/users';
import { ctxOf, ok } from './context';

/** The admins' Users page of the console: list, create, reset link, disable / enable (the rules: src/services/users.ts). */
export function usersRouter(deps: Deps): Router {
  const r = Router();
  const base = (req: Request) => deps.config.publicUrl ?? ownOrigin(req, deps.config);

  r.get('/users', async (req, res) => {
    const users = await listUsers(ctxOf(req, deps));
    res.json(ok({ users, total: users.length }));
  });

  r.post('/users', async (req, res) => {
    res.status(201).json(ok(await addUser(ctxOf(req, deps), req.body, base(req))));
  });

  r.post('/users/:userId/reset-password', async (req, res) => {
    res.json(ok(await createResetLink(ctxOf(req, deps), req.params.userId, base(req))));
  });

  for (const [action, disabled] of [
    ['disable', true],
    ['enable', false],
  ] as const) {
    r.post(`/users/:userId/${action}`, async (req, res) => {
      res.json(ok({ user: await setUserDisabled(ctxOf(req, deps), req.params.userId, disabled) }));
    });
  }

  return r;
}
