import { Router } from 'express';
import { ok } from './context';

/**
 * GET /billing/entitlement: what this server implements, in the shape the upload
 * CLI reads. It hides every feature that is false; resume is implemented here, the others are
 * features of the hosted service this server does not have.
 */
export const ENTITLEMENT = {
  plan: 'self-hosted',
  features: { resume: true, skills: false, knowledge_base: false, work_tracking: false, governance: false },
} as const;

export function billingRouter(): Router {
  const r = Router();
  r.get('/billing/entitlement', (_req, res) => {
    res.json(ok(ENTITLEMENT));
  });
  return r;
}
