import type { Request } from 'express';
import type { deviceRoutes } from '../api/routes';
import { unauthenticated } from '../errors';
import * as device from '../services/device';
import { publicCtx } from '../services/context';
import { ok, readBody, type Door } from './context';
import { ctxOf } from '../http/request-context';
import type { Handlers } from '../api/route';

/**
 * Device login for the upload CLI and the desktop app. Their answers carry no
 * envelope (the clients parse them as they are); errors use the usual one. Every failure counts
 * against the failed-authentication limit of the address. The `/cli-login` code is asked for
 * behind authentication (the signed-in person's code).
 */
export function deviceHandlers({ deps, hooks, publicBody }: Door): Handlers<typeof deviceRoutes> {
  const ctx = publicCtx(deps);

  const counted = async <T>(req: Request, work: () => Promise<T>): Promise<T> => {
    try {
      return await work();
    } catch (err) {
      if ((err as { code?: string }).code === 'UNAUTHENTICATED') await hooks.onAuthFailure?.(req);
      throw err;
    }
  };

  return {
    createDeviceCode: async (req, res) => {
      res.status(201);
      return ok(await device.issueDeviceCode(ctxOf(req, deps), req.body));
    },

    // Spends from the address's budget first (before any lock or query).
    deviceLogin: async (req, res) => {
      await hooks.spendAddress?.(req, 'anonymous');
      await hooks.beforeAuth?.(req);
      // Codes are 6 characters (what the clients accept): guessing is bounded by the service-wide
      // budget of failed device logins as well as by the address's.
      await hooks.beforeDeviceLogin?.(req);
      await readBody(publicBody, req, res);
      return counted(req, async () => {
        try {
          return await device.deviceLogin(ctx, req.body);
        } catch (err) {
          if ((err as { code?: string }).code === 'UNAUTHENTICATED') await hooks.onDeviceLoginFailure?.(req);
          throw err;
        }
      });
    },

    // Refresh and logout read the database only for a token whose signature checks out.
    deviceRefresh: async (req) => {
      await hooks.beforeAuth?.(req);
      return counted(req, async () => (await device.deviceRefresh(ctx, req.get('authorization'))) ?? Promise.reject(unauthenticated()));
    },

    deviceLogout: async (req) => {
      await device.deviceLogout(ctx, req.get('authorization'));
      return { success: true as const };
    },
  };
}
