import type { Config } from './config';
import { createDb } from './db/client';
import type { Logger } from './logger';
import { nullSearch } from './search/port';
import type { Deps, SearchDeps } from './services/context';

/** Builds the process-wide dependencies; `start()` brings up background parts (search). */
export function createDeps(config: Config, logger: Logger): Deps & { start(): Promise<void>; close(): Promise<void> } {
  const db = createDb(config.databaseUrl);
  const search: SearchDeps = { ...nullSearch, notify: () => {} };
  return {
    config,
    db,
    logger,
    search,
    async start() {
      await search.start();
    },
    async close() {
      await search.stop().catch(() => undefined);
      await db.close();
    },
  };
}
