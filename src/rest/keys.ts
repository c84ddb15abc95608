import { Router } from 'express';
import type { Deps } from '../services/context';
import * as keys from '../services/keys';
import { ctxOf, ok } from './context';

export function keysRouter(deps: Deps): Router {
  const r = Router();
  r.get('/keys', async (req, res) => {
    const list = await keys.listApiKeys(ctxOf(req, deps));
    res.json(ok({ keys: list, total: list.length }));
  });
  r.post('/keys', async (req, res) => {
    res.status(201).json(ok(await keys.createApiKey(ctxOf(req, deps), req.body)));
  });
  r.delete('/keys/:keyId', async (req, res) => {
    res.json(ok({ key: await keys.revokeApiKey(ctxOf(req, deps), req.params.keyId) }));
  });
  return r;
}
