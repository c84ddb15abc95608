/**
 * GET /billing/entitlement: what this server implements, in the shape the upload
 * CLI reads. It hides every feature that is false; resume is implemented here, the others are
 * features of the hosted service this server does not have.
 */
export const ENTITLEMENT = {
  plan: 'self-hosted',
  features: { resume: true, skills: false, knowledge_base: false, work_tracking: false, governance: false },
} as const;
