import type { Config } from './config';
import { createDb, dbOptionsOf } from './db/client';
import type { Logger } from './logger';
import { createOffload, inlineOffload } from './offload';
import { createSearch, type Search } from './search';
import type { Deps } from './services/context';

export type AppDeps = Deps & { search: Search; start(): Promise<void>; close(): Promise<void> };

/**
 * Builds the process-wide dependencies; `start()` brings up background parts (search).
 * `warmReads`: the serving process keeps its read connections open (see createDb).
 */
export function createDeps(config: Config, logger: Logger, options: { warmReads?: boolean } = {}): AppDeps {
  const db = createDb(config.databaseUrl, { ...options, ...dbOptionsOf(config, logger) });
  const offload =
    config.offloadThreads === 0
      ? inlineOffload
      : createOffload({ threads: config.offloadThreads, onError: (err) => logger.error({ err, msg: 'offload thread failed' }) });
  const search = createSearch({ config, db, logger, offload });
  return {
    config,
    db,
    logger,
    search,
    offload,
    async start() {
      await search.start();
    },
    async close() {
      await search.stop().catch(() => undefined);
      await offload.close().catch(() => undefined);
      await db.close();
    },
  };
}
