/** How a webhook and its deliveries are shown to their owner: REST's `Webhook` and `WebhookDelivery`. */
import type { z } from 'zod';
import type { Webhook, WebhookDelivery } from '../../api/schemas/webhooks';
import type { DeliveryRow, WebhookRow } from '../../data/webhooks';

export type WebhookDto = z.input<typeof Webhook>;
export type DeliveryDto = z.input<typeof WebhookDelivery>;

export const presentWebhook = (row: WebhookRow): WebhookDto => ({
  id: row.id,
  url: row.url,
  events: row.events.split(',') as WebhookDto['events'],
  projectId: row.projectId,
  teamId: row.teamId,
  disabled: row.disabledAt !== null,
  disabledReason: row.disabledReason,
  createdAt: row.createdAt.toISOString(),
});

export const presentDelivery = (row: DeliveryRow): DeliveryDto => ({
  id: String(row.id),
  eventId: row.eventId,
  type: row.type as DeliveryDto['type'],
  status: row.status as DeliveryDto['status'],
  attempts: row.attempts,
  responseStatus: row.responseStatus,
  durationMs: row.durationMs,
  error: row.lastError,
  attemptedAt: row.attemptedAt?.toISOString() ?? null,
  nextAttemptAt: row.nextAttemptAt?.toISOString() ?? null,
  createdAt: row.createdAt.toISOString(),
});
