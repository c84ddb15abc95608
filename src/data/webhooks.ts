/**
 * The webhooks store (tables `webhooks` and `webhook_deliveries`). Deliveries are the outbox:
 * an event is fanned out to the webhooks that may receive it in the transaction of the write it
 * describes, and the delivery worker claims due rows with a lease (nextAttemptAt moved past the
 * attempt's end), so an attempt cut short by a crash is claimed again once its lease is over.
 */
import type * as mariadb from 'mariadb';
import type { WebhookDeliveryModel, WebhookModel } from '../generated/prisma/models';
import { inClaimTransaction } from './outbox';
import { marks, type Sql } from './sql';
import type { DriverRow } from '../domain/driver-row';
import type { Tx } from './transaction';

export type WebhookRow = DriverRow<WebhookModel>;
export type DeliveryRow = Omit<DriverRow<WebhookDeliveryModel>, 'payload' | 'scopeId'>;

const WEBHOOK_COLUMNS = 'id, userId, url, events, projectId, teamId, secret, disabledAt, disabledReason, createdAt';
const DELIVERY_COLUMNS = 'id, webhookId, eventId, type, status, attempts, nextAttemptAt, responseStatus, durationMs, lastError, attemptedAt, createdAt';

export async function insertWebhook(db: Sql, row: Omit<WebhookRow, 'disabledAt' | 'disabledReason'>): Promise<void> {
  await db.execute(
    'INSERT INTO webhooks (id, userId, url, events, projectId, teamId, secret, createdAt) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
    row.id,
    row.userId,
    row.url,
    row.events,
    row.projectId,
    row.teamId,
    row.secret,
    row.createdAt,
  );
}

export function webhooksOfUser(db: Sql, userId: string): Promise<WebhookRow[]> {
  return db.query<WebhookRow>(`SELECT ${WEBHOOK_COLUMNS} FROM webhooks WHERE userId = ? ORDER BY createdAt DESC, id LIMIT 1000`, userId);
}

export async function webhookOfUser(db: Sql, userId: string, id: string): Promise<WebhookRow | undefined> {
  return (await db.query<WebhookRow>(`SELECT ${WEBHOOK_COLUMNS} FROM webhooks WHERE id = ? AND userId = ?`, id, userId))[0];
}

export function deleteWebhookRow(db: Sql, userId: string, id: string): Promise<number> {
  return db.execute('DELETE FROM webhooks WHERE id = ? AND userId = ?', id, userId);
}

/** The last `limit` deliveries of a webhook, newest first. */
export function deliveriesOf(db: Sql, webhookId: string, limit: number): Promise<DeliveryRow[]> {
  return db.query<DeliveryRow>(`SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries WHERE webhookId = ? ORDER BY id DESC LIMIT ?`, webhookId, limit);
}

export async function deliveryOf(db: Sql, webhookId: string, id: number): Promise<DeliveryRow | undefined> {
  return (await db.query<DeliveryRow>(`SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries WHERE id = ? AND webhookId = ?`, id, webhookId))[0];
}

/** A new delivery of the same event (same id and body), due now; its id. */
export async function insertResend(tx: Tx, webhookId: string, id: number): Promise<number | undefined> {
  const n = await tx.execute(
    `INSERT INTO webhook_deliveries (webhookId, eventId, type, scopeId, payload, nextAttemptAt)
     SELECT webhookId, eventId, type, scopeId, payload, NOW(3) FROM webhook_deliveries WHERE id = ? AND webhookId = ?`,
    id,
    webhookId,
  );
  if (n === 0) return undefined;
  tx.afterCommit(tx.signals.webhooksWritten.emit);
  const [row] = await tx.query<{ id: number }>('SELECT LAST_INSERT_ID() AS id');
  return row.id;
}

/** One event as it is fanned out: who it is about and the body every receiver gets. */
interface WebhookEventRow {
  eventId: string;
  type: string;
  /** The owner (user or team id) of what the event is about. */
  scopeId: string;
  /** The project it is about; null for a team's events. */
  projectId: string | null;
  payload: string;
}

/**
 * The enabled webhooks (`w`) that asked for an event's type and whose owner may read it: a
 * webhook of the project (its owner may read the project), of the owning team (its owner is an
 * admin of the team), or of the owner's own projects. Its parameters: listeningArgs.
 */
const LISTENING = `w.disabledAt IS NULL AND FIND_IN_SET(?, w.events) > 0
        AND ((w.projectId = ? AND (w.userId = ? OR EXISTS (SELECT 1 FROM team_members tm WHERE tm.teamId = ? AND tm.userId = w.userId)))
          OR (w.teamId = ? AND EXISTS (SELECT 1 FROM team_members tm WHERE tm.teamId = w.teamId AND tm.userId = w.userId AND tm.role = 'admin'))
          OR (w.projectId IS NULL AND w.teamId IS NULL AND w.userId = ?))`;
const listeningArgs = (type: string, scopeId: string, projectId: string | null) => [type, projectId, scopeId, scopeId, scopeId, scopeId];

/** Whether any webhook would receive an event of this type about this scope and project. */
export async function anyWebhookListening(tx: Tx, type: string, scopeId: string, projectId: string | null): Promise<boolean> {
  return (await tx.query(`SELECT 1 FROM webhooks w WHERE ${LISTENING} LIMIT 1`, ...listeningArgs(type, scopeId, projectId))).length > 0;
}

/**
 * Fans an event out, in the caller's transaction, to every webhook that listens for it (LISTENING).
 * A webhook that already has this event is left out (an event written for two scopes).
 */
export async function enqueueWebhookEvent(tx: Tx, e: WebhookEventRow): Promise<void> {
  const n = await tx.execute(
    `INSERT INTO webhook_deliveries (webhookId, eventId, type, scopeId, payload, nextAttemptAt)
     SELECT w.id, ?, ?, ?, ?, NOW(3) FROM webhooks w
      WHERE ${LISTENING}
        AND NOT EXISTS (SELECT 1 FROM webhook_deliveries x WHERE x.webhookId = w.id AND x.eventId = ?)`,
    e.eventId,
    e.type,
    e.scopeId,
    e.payload,
    ...listeningArgs(e.type, e.scopeId, e.projectId),
    e.eventId,
  );
  if (n > 0) tx.afterCommit(tx.signals.webhooksWritten.emit);
}

/** Events of one type about one owner and project, as many statements as this many events take. */
const EVENTS_PER_STATEMENT = 500;

/**
 * Fans out many events of one type about one owner and project (a project's sessions deleted at
 * once) to every webhook that listens: one statement per EVENTS_PER_STATEMENT events instead of
 * one per event. Every event id is new, so none is already there.
 */
export async function enqueueWebhookEvents(
  tx: Tx,
  about: { type: string; scopeId: string; projectId: string | null },
  events: ReadonlyArray<{ eventId: string; payload: string }>,
): Promise<void> {
  let written = 0;
  for (let at = 0; at < events.length; at += EVENTS_PER_STATEMENT) {
    const part = events.slice(at, at + EVENTS_PER_STATEMENT);
    // In the order given (a webhook receives them as the deletion listed them).
    const rows = part.map((_, i) => `SELECT ${i} AS n, ? AS eventId, ? AS payload`).join(' UNION ALL ');
    written += await tx.execute(
      `INSERT INTO webhook_deliveries (webhookId, eventId, type, scopeId, payload, nextAttemptAt)
       SELECT w.id, e.eventId, ?, ?, e.payload, NOW(3) FROM webhooks w JOIN (${rows}) e
        WHERE ${LISTENING}
        ORDER BY w.id, e.n`,
      about.type,
      about.scopeId,
      ...part.flatMap((e) => [e.eventId, e.payload]),
      ...listeningArgs(about.type, about.scopeId, about.projectId),
    );
  }
  if (written > 0) tx.afterCommit(tx.signals.webhooksWritten.emit);
}

// ---------------------------------------------------------------------------------------------
// The delivery worker's side

/** A claimed attempt: the delivery, its webhook, and whether the webhook's owner may still read what it is about. */
export interface ClaimedDelivery {
  id: number;
  webhookId: string;
  eventId: string;
  payload: string;
  /** This attempt's number (attempts after the claim): its outcome is written only while it still is. */
  attempts: number;
  url: string;
  secret: string;
  disabled: number;
  mayRead: number;
}

/**
 * Claims up to `limit` due deliveries, none of the webhooks in `busy`, at most `perWebhook` of one
 * webhook: each gets one attempt more and a lease of `leaseS` seconds (nextAttemptAt), after which
 * another worker may claim it again. The owner's access is read in the same statement as the row.
 */
export function claimDeliveries(
  pool: Pick<mariadb.Pool, 'getConnection'>,
  opts: { limit: number; perWebhook: number; busy: ReadonlyMap<string, number>; leaseS: number },
): Promise<ClaimedDelivery[]> {
  return inClaimTransaction(pool, async (tx) => {
    const full = [...opts.busy].filter(([, n]) => n >= opts.perWebhook).map(([id]) => id);
    const due = await tx.query<{ id: number; webhookId: string }>(
      `SELECT id, webhookId FROM webhook_deliveries FORCE INDEX (webhook_deliveries_status_nextAttemptAt_idx)
        WHERE status = 'pending' AND nextAttemptAt <= NOW(3)${full.length ? ` AND webhookId NOT IN (${marks(full)})` : ''}
        ORDER BY nextAttemptAt LIMIT ? FOR UPDATE SKIP LOCKED`,
      ...full,
      opts.limit * 4,
    );
    const taken = new Map(opts.busy);
    const ids: number[] = [];
    for (const d of due) {
      const n = taken.get(d.webhookId) ?? 0;
      if (n >= opts.perWebhook || ids.length >= opts.limit) continue;
      taken.set(d.webhookId, n + 1);
      ids.push(d.id);
    }
    if (ids.length === 0) return [];
    await tx.execute(
      `UPDATE webhook_deliveries SET attempts = attempts + 1, attemptedAt = NOW(3), nextAttemptAt = NOW(3) + INTERVAL ? SECOND WHERE id IN (${marks(ids)})`,
      opts.leaseS,
      ...ids,
    );
    const claimed = await tx.query<ClaimedDelivery>(
      `SELECT d.id, d.webhookId, d.eventId, d.payload, d.attempts, w.url, w.secret, w.disabledAt IS NOT NULL AS disabled,
              CASE WHEN w.teamId IS NOT NULL
                   THEN EXISTS (SELECT 1 FROM team_members tm WHERE tm.teamId = w.teamId AND tm.userId = w.userId AND tm.role = 'admin')
                   ELSE d.scopeId = w.userId OR EXISTS (SELECT 1 FROM team_members tm WHERE tm.teamId = d.scopeId AND tm.userId = w.userId) END AS mayRead
         FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhookId JOIN users u ON u.id = w.userId AND u.disabledAt IS NULL
        WHERE d.id IN (${marks(ids)})`,
      ...ids,
    );
    // Those whose owner's account is disabled are not sent.
    const orphans = ids.filter((id) => !claimed.some((d) => d.id === id));
    if (orphans.length) await tx.execute(`UPDATE webhook_deliveries SET status = 'skipped', nextAttemptAt = NULL WHERE id IN (${marks(orphans)})`, ...orphans);
    return claimed;
  });
}

/** What one attempt came to. `retryInS`: due again then (status stays pending); else `status` is final. */
export interface AttemptOutcome {
  status: 'pending' | 'delivered' | 'failed' | 'skipped';
  responseStatus: number | null;
  durationMs: number | null;
  error: string | null;
  retryInS?: number;
}

/** Writes an attempt's outcome, unless the delivery was claimed again since (its lease ran out). */
export function finishAttempt(db: Sql, d: Pick<ClaimedDelivery, 'id' | 'attempts'>, o: AttemptOutcome): Promise<number> {
  return db.execute(
    `UPDATE webhook_deliveries SET status = ?, responseStatus = ?, durationMs = ?, lastError = ?,
            nextAttemptAt = IF(? IS NULL, NULL, NOW(3) + INTERVAL ? SECOND)
      WHERE id = ? AND attempts = ? AND status = 'pending'`,
    o.status,
    o.responseStatus,
    o.durationMs,
    o.error?.slice(0, 500) ?? null,
    o.retryInS ?? null,
    o.retryInS ?? 0,
    d.id,
    d.attempts,
  );
}

/** A receiver answered 410 Gone: the webhook is disabled and what waits for it is skipped. */
export async function disableWebhook(db: Sql, id: string, reason: string): Promise<void> {
  await db.execute('UPDATE webhooks SET disabledAt = NOW(3), disabledReason = ? WHERE id = ? AND disabledAt IS NULL', reason, id);
  await db.execute("UPDATE webhook_deliveries SET status = 'skipped', nextAttemptAt = NULL WHERE webhookId = ? AND status = 'pending' AND attempts = 0", id);
}

// ---------------------------------------------------------------------------------------------
// Pruning finished deliveries

/** Up to `limit` webhook ids after `afterId`, in id order (the prune walks them all). */
export async function webhookIdsAfter(db: Sql, afterId: string, limit: number): Promise<string[]> {
  return (await db.query<{ id: string }>('SELECT id FROM webhooks WHERE id > ? ORDER BY id LIMIT ?', afterId, limit)).map((r) => r.id);
}

/**
 * Deletes up to `batch` finished deliveries (anything but pending) of the webhook created before
 * `before`, never one of its newest `keep` finished ones (what its delivery list shows); returns
 * how many went. Pending deliveries, retries included, are never touched.
 */
export async function pruneDeliveriesOf(db: Sql, webhookId: string, before: Date, keep: number, batch: number): Promise<number> {
  const [edge] = await db.query<{ id: number }>(
    "SELECT id FROM webhook_deliveries WHERE webhookId = ? AND status <> 'pending' ORDER BY id DESC LIMIT 1 OFFSET ?",
    webhookId,
    keep - 1,
  );
  if (!edge) return 0;
  return db.execute(
    "DELETE FROM webhook_deliveries WHERE webhookId = ? AND id < ? AND status <> 'pending' AND createdAt < ? ORDER BY id LIMIT ?",
    webhookId,
    edge.id,
    before,
    batch,
  );
}
