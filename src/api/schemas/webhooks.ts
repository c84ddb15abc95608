/** Webhooks and their deliveries (docs/webhooks.md): what their owner sends and reads. */
import { body, text } from '../../domain/inputs';
import { WEBHOOK_EVENTS } from '../../domain/webhooks';
import { Timestamp, z } from './common';

const EVENTS_MESSAGE = `events must be a non-empty list of: ${WEBHOOK_EVENTS.join(', ')}`;

const WebhookEventType = z.enum(WEBHOOK_EVENTS, { error: EVENTS_MESSAGE });

export const CreateWebhookInput = body({
  url: text('url', 1, 2048).meta({
    description:
      'Where deliveries are POSTed: `https://…` or `http://…`, no user name or password. A host on a private, loopback or link-local address is refused (unless the server runs with `WEBHOOK_ALLOW_PRIVATE=true`).',
  }),
  events: z
    .array(WebhookEventType, { error: EVENTS_MESSAGE })
    .min(1, EVENTS_MESSAGE)
    .max(WEBHOOK_EVENTS.length * 4, EVENTS_MESSAGE),
  projectId: z.string({ error: 'Invalid type for projectId: expected a string' }).min(1).max(128).optional().meta({
    description: 'Events of this project only (you must be able to read it).',
  }),
  teamId: z.string({ error: 'Invalid type for teamId: expected a string' }).min(1).max(36).optional().meta({
    description: "Events of this team's projects and its members (team admins only).",
  }),
}).meta({
  id: 'CreateWebhook',
  description: 'Neither `projectId` nor `teamId`: the events of your own projects. Not both.',
});

export const Webhook = z
  .strictObject({
    id: z.string(),
    url: z.string(),
    events: z.array(WebhookEventType),
    projectId: z.string().nullable(),
    teamId: z.string().nullable(),
    disabled: z.boolean().meta({ description: 'True once a receiver answered 410 Gone: nothing more is sent.' }),
    disabledReason: z.string().nullable(),
    createdAt: Timestamp,
  })
  .meta({ id: 'Webhook', description: 'A webhook. Never its secret, which is shown once, when it is made.' });

export const CreatedWebhook = z
  .strictObject({
    webhook: Webhook,
    secret: z.string().meta({ description: '`whsec_<base64>`: the key of every delivery’s `webhook-signature`. Shown only here.' }),
  })
  .meta({ id: 'CreatedWebhook' });

export const WebhookDelivery = z
  .strictObject({
    id: z.string(),
    eventId: z.string().meta({ description: 'The `webhook-id` header: the same on every attempt and on a resend.' }),
    type: WebhookEventType,
    status: z.enum(['pending', 'delivered', 'failed', 'skipped']).meta({
      description:
        '`pending`: waiting for its next attempt; `delivered`: a 2xx answer; `failed`: the retries ran out, or a 410; `skipped`: not sent (the webhook was disabled, or its owner can no longer read what the event is about).',
    }),
    attempts: z.int().min(0),
    responseStatus: z
      .int()
      .nullable()
      .meta({ description: 'The HTTP status of the last attempt; null when it got none (refused address, timeout, connection error).' }),
    durationMs: z.int().min(0).nullable().meta({ description: 'How long the last attempt took.' }),
    error: z.string().nullable().meta({ description: 'Why the last attempt failed, when it did.' }),
    attemptedAt: Timestamp.nullable(),
    nextAttemptAt: Timestamp.nullable(),
    createdAt: Timestamp,
  })
  .meta({ id: 'WebhookDelivery' });
