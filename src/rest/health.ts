import { Router } from 'express';
import { pendingMigrations } from '../db/migrate';
import type { Deps } from '../services/context';

/** Liveness and readiness, without authentication. */
export function healthRouter(deps: Deps): Router {
  const r = Router();
  r.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  r.get('/readyz', async (_req, res) => {
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
