import type { Config } from '../config';
import type { DbHandles } from '../db/client';
import { createLogger } from '../logger';
import { createSearch } from '../search';
import { percentLines } from './progress-lines';

/** `search reindex`: rebuilds the index from the database, printing progress as it goes (pace and time left). */
export async function reindexFromCli(config: Config, db: DbHandles, out: (line: string) => void): Promise<void> {
  const logger = createLogger(config.logLevel === 'info' ? 'warn' : config.logLevel);
  // The CLI applies the rebuild itself; a running service's worker may share the work.
  const search = createSearch({ config: { ...config, workersEnabled: true }, db, logger });
  await search.start();
  try {
    const progress = percentLines('reindex', out);
    const { sessions } = await search.reindexAll(({ done, total }) => progress(done, total));
    out(`reindex complete: ${sessions} sessions indexed into ${search.indexUid}`);
  } finally {
    await search.stop();
  }
}
