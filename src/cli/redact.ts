import type { Config } from '../config';
import type { DbHandles } from '../db/client';
import { createLogger } from '../logger';
import { createSearch } from '../search';
import { rescanSessions } from '../services/rescan';
import { operatorCtx } from '../services/context';
import { percentLines } from './progress-lines';

const INDEX_WAIT_MS = 10 * 60_000;

/**
 * `redact rescan [--dry-run]`: applies the current rules (and REDACT_SECRETS) to every stored
 * session with progress, then lets the search index catch up with the changed sessions.
 */
export async function rescanFromCli(config: Config, db: DbHandles, dryRun: boolean, out: (line: string) => void): Promise<void> {
  const progress = percentLines('rescan', out);
  const result = await rescanSessions(operatorCtx(db, config), config.redactSecrets, {
    dryRun,
    onProgress: ({ done, total, changed }) => progress(done, total, `${changed} with new findings`),
  });
  const rules = Object.keys(result.found)
    .sort()
    .map((r) => `${r}: ${result.found[r]}`);
  const verb = dryRun ? 'would change' : config.redactSecrets === 'on' ? 'redacted' : 'reported';
  out(`rescan complete: ${result.done} sessions scanned, ${verb} ${result.changed}${rules.length ? ` (${rules.join(', ')})` : ''}`);
  if (dryRun || result.changed === 0) return;

  const logger = createLogger(config.logLevel === 'info' ? 'warn' : config.logLevel);
  const search = createSearch({ config: { ...config, workersEnabled: true }, db, logger });
  await search.start();
  try {
    search.notify();
    const until = Date.now() + INDEX_WAIT_MS;
    let pending = await search.backlog();
    let lastPending = -1;
    while (pending > 0 && Date.now() < until) {
      if (pending !== lastPending) out(`search index: ${pending} updates pending`);
      lastPending = pending;
      await new Promise((r) => setTimeout(r, 500));
      pending = await search.backlog();
    }
    out(pending === 0 ? 'search index updated' : `search index: ${pending} updates still pending (the service's worker applies them)`);
  } finally {
    await search.stop();
  }
}
