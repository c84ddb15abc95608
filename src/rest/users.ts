import type { Request } from 'express';
import type { userRoutes } from '../api/routes';
import { addUser, createResetLink } from '../services/accounts';
import { ownOrigin } from '../http/auth';
import { deleteUser } from '../services/user-delete';
import { listUsers, setUserDisabled } from '../services/users';
import { ok, type Door } from './context';
import { ctxOf } from '../http/request-context';
import type { Handlers } from '../api/route';

/** The admins' Users page of the console: list, create, reset link, disable / enable, delete (the rules: src/services/users.ts, src/services/user-delete.ts). */
export function userHandlers({ deps }: Door): Handlers<typeof userRoutes> {
  const base = (req: Request) => deps.config.publicUrl ?? ownOrigin(req, deps.config);
  const setDisabled = (disabled: boolean) => async (req: Request<{ userId: string }>) =>
    ok({ user: await setUserDisabled(ctxOf(req, deps), req.params.userId, disabled) });

  return {
    listUsers: async (req) => {
      const users = await listUsers(ctxOf(req, deps));
      return ok({ users, total: users.length });
    },
    createUser: async (req) => ok(await addUser(ctxOf(req, deps), req.body, base(req))),
    userResetLink: async (req) => ok(await createResetLink(ctxOf(req, deps), req.params.userId, base(req))),
    disableUser: setDisabled(true),
    enableUser: setDisabled(false),
    deleteUser: async (req) => ok(await deleteUser(ctxOf(req, deps), req.params.userId)),
  };
}
