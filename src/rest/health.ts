import { Router } from 'express';
import { pendingMigrations } from '../db/migrate';
import { SITE_ROUTES } from '../http/site-routes';
import type { Deps } from '../services/context';

/** Liveness and readiness, without authentication. */
export function healthRouter(deps: Deps): Router {
  const r = Router();
  r.get(SITE_ROUTES.healthz.path, (_req, res) => {
    res.json({ status: 'ok' });
  });
  r.get(SITE_ROUTES.readyz.path, async (_req, res) => {
    try {
      const pending = await pendingMigrations(deps.db.writes);
      if (pending.length) {
        res.status(503).json({ status: 'not ready', reason: 'migrations pending' });
        return;
      }
      res.json({ status: 'ready' });
    } catch {
      res.status(503).json({ status: 'not ready', reason: 'database unreachable' });
    }
  });
  return r;
}
