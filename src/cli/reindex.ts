import type { Config } from '../config';
import type { DbHandles } from '../db/client';

/** Placeholder until search lands. */
export async function reindexFromCli(_config: Config, _db: DbHandles, out: (line: string) => void): Promise<void> {
  out('search is not configured in this build');
}
