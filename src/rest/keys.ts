import type { keyRoutes } from '../api/routes';
import * as keys from '../services/keys';
import { ok, type Door } from './context';
import { ctxOf } from '../http/request-context';
import type { Handlers } from '../api/route';

export function keyHandlers({ deps }: Door): Handlers<typeof keyRoutes> {
  return {
    listKeys: async (req) => {
      const list = await keys.listApiKeys(ctxOf(req, deps));
      return ok({ keys: list, total: list.length });
    },
    createKey: async (req, res) => {
      res.status(201);
      return ok(await keys.createApiKey(ctxOf(req, deps), req.body));
    },
    revokeKey: async (req) => ok({ key: await keys.revokeApiKey(ctxOf(req, deps), req.params.keyId) }),
  };
}
