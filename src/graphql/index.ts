import { Router, type RequestHandler } from 'express';
import type { Deps } from '../services/context';

export interface GraphqlMiddleware {
  /** Authentication (401 in GraphQL's envelope on failure). */
  auth: RequestHandler;
  /** Per-user GraphQL rate limit. */
  rateLimit: RequestHandler;
  /** JSON body parsing with the size cap and gzip. */
  body: RequestHandler;
}

/** Placeholder until the GraphQL API lands. */
export async function createGraphqlRouter(_deps: Deps, _mw: GraphqlMiddleware): Promise<{ router: Router; stop(): Promise<void> }> {
  return { router: Router(), stop: async () => {} };
}
