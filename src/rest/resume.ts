import { Router } from 'express';
import type { Deps } from '../services/context';
import { searchResumable } from '../services/resume';
import { ctxOf, ok } from './context';

/** POST /search/resume: the upload CLI's cross-machine resume search. */
export function resumeRouter(deps: Deps): Router {
  const r = Router();
  r.post('/search/resume', async (req, res) => {
    res.json(ok(await searchResumable(ctxOf(req, deps), req.body)));
  });
  return r;
}
