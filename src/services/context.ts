import type { Config } from '../config';
import type { DbHandles } from '../db/client';
import type { Logger } from '../logger';
import type { SearchPort } from '../search/port';

/** Search as services use it: the port plus a nudge to the outbox worker after a write. */
export interface SearchDeps extends SearchPort {
  notify(): void;
}

/** Process-wide dependencies, built once in main.ts (or by a test). */
export interface Deps {
  config: Config;
  db: DbHandles;
  logger: Logger;
  search: SearchDeps;
}

export interface AuthUser {
  id: string;
  keyId: string;
}

/** What every service call gets: who is asking, and where to log. */
export interface Ctx {
  deps: Deps;
  user: AuthUser;
  log: Logger;
}
