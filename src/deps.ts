import type { Config } from './config';
import { createDb, dbOptionsOf } from './db/client';
import { openContentStore, withContentStore } from './data/content-store';
import { startSweeper } from './data/content-store/sweep';
import type { Logger } from './logger';
import { createOffload, inlineOffload } from './offload';
import { createSearch, type Search } from './search';
import { startAuditPruner } from './services/audit-log';
import { operatorCtx, type Deps } from './services/context';
import { startRetentionSweeper } from './services/retention-sweep';
import { startWebhookWorker } from './services/webhook-delivery';
import { startWebhookDeliveryPruner } from './services/webhook-prune';

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
  let content: Awaited<ReturnType<typeof openContentStore>> | null = null;
  let sweeper: ReturnType<typeof startSweeper> | null = null;
  let retention: ReturnType<typeof startRetentionSweeper> | null = null;
  let auditPruner: ReturnType<typeof startAuditPruner> | null = null;
  let deliveryPruner: ReturnType<typeof startWebhookDeliveryPruner> | null = null;
  let webhooks: ReturnType<typeof startWebhookWorker> | null = null;
  const deps: AppDeps = {
    config,
    db,
    logger,
    search,
    offload,
    withContent: (fn) => (content ? withContentStore(content, fn) : fn()),
    async start() {
      // First: a missing bucket is a start-up error before anything else runs.
      const store = (content = await openContentStore(config));
      if (store.objects && config.workersEnabled) {
        sweeper = startSweeper(db.writes, store, (err) => logger.error({ err, msg: 'content sweep failed' }));
      }
      if (config.workersEnabled) auditPruner = startAuditPruner(db, config, logger);
      if (config.workersEnabled) deliveryPruner = startWebhookDeliveryPruner(db, config, logger);
      // The hourly retention sweep, on whichever instance takes its lock; objects go from this service's store.
      if (config.workersEnabled) retention = withContentStore(store, () => startRetentionSweeper(operatorCtx(db, config), config.namespace, logger));
      // The search worker's reads of markdown (and anything else started here) use this service's store.
      await withContentStore(store, () => search.start());
      if (config.workersEnabled) webhooks = startWebhookWorker(deps);
    },
    async close() {
      auditPruner?.stop();
      deliveryPruner?.stop();
      await webhooks?.stop().catch(() => undefined);
      await sweeper?.stop().catch(() => undefined);
      await retention?.stop().catch(() => undefined);
      await search.stop().catch(() => undefined);
      await offload.close().catch(() => undefined);
      await db.close();
      content?.close();
    },
  };
  return deps;
}
