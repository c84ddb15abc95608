/**
 * The retention of webhook deliveries: hourly, whichever instance takes the named lock deletes
 * each webhook's finished deliveries (delivered, failed, skipped) older than
 * WEBHOOK_DELIVERY_RETENTION_DAYS, beyond its newest 100 finished ones (what its delivery list
 * shows). A pending delivery, one waiting for a retry included, is never deleted.
 */
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { tryNamedLock } from '../data/locks';
import { pruneDeliveriesOf, webhookIdsAfter } from '../data/webhooks';
import type { DbHandles } from '../db/client';
import type { Logger } from '../logger';
import { hourly } from './hourly';
import { DELIVERIES_LISTED } from './webhooks';

const PRUNE_BATCH = 1000;
const WEBHOOKS_PER_READ = 500;

/**
 * Deletes the finished deliveries past retention, webhook by webhook in batches, while holding
 * the named lock, so one instance prunes at a time; how many went, or null when another holds it.
 */
export async function pruneWebhookDeliveries(db: DbHandles, namespace: string, days: number, now = new Date()): Promise<number | null> {
  const before = new Date(now.getTime() - days * 86_400_000);
  const r = await tryNamedLock(db.pool, `${namespace}:webhook-delivery-prune`, async (sql) => {
    let total = 0;
    let after = '';
    for (;;) {
      const ids = await webhookIdsAfter(sql, after, WEBHOOKS_PER_READ);
      for (const id of ids) {
        for (;;) {
          const n = await pruneDeliveriesOf(sql, id, before, DELIVERIES_LISTED, PRUNE_BATCH);
          total += n;
          if (n < PRUNE_BATCH) break;
          await yieldToLoop();
        }
      }
      if (ids.length < WEBHOOKS_PER_READ) return total;
      after = ids[ids.length - 1];
      await yieldToLoop();
    }
  });
  return r.got ? r.value : null;
}

/** Prunes a minute after start and then hourly (src/services/hourly.ts); `stop()` ends it. */
export function startWebhookDeliveryPruner(
  db: DbHandles,
  config: { namespace: string; webhookDeliveryRetentionDays: number },
  logger: Logger,
): { stop(): void } {
  return hourly(
    async () => {
      const n = await pruneWebhookDeliveries(db, config.namespace, config.webhookDeliveryRetentionDays);
      if (n) logger.info({ msg: 'webhook deliveries pruned', deliveries: n });
    },
    (err) => logger.error({ err, msg: 'webhook delivery prune failed' }),
  );
}
