/** Webhooks: made, listed and deleted by their owner, with their deliveries (docs/webhooks.md). */
import { defineRoute } from '../route';
import { envelope, z } from '../schemas/common';
import { CreatedWebhook, CreateWebhookInput, Webhook, WebhookDelivery } from '../schemas/webhooks';

const WebhookParams = z.object({ webhookId: z.string() });

export const webhookRoutes = {
  createWebhook: defineRoute({
    method: 'post',
    path: '/webhooks',
    tag: 'Webhooks',
    auth: 'key',
    summary: 'Make a webhook',
    description:
      'Events are POSTed to `url` as `{type, timestamp, data}`, signed as the Standard Webhooks specification says (`webhook-id`, `webhook-timestamp`, `webhook-signature`). With `projectId`: that project’s events (you must be able to read it; else 404/403). With `teamId`: the team’s (admins only: a team you are not in → 404 `Team not found`, another role → 403). Neither: your own projects’. A host on a private, loopback or link-local address → 400, unless the server runs with `WEBHOOK_ALLOW_PRIVATE=true`. The secret is shown only in this answer.',
    body: CreateWebhookInput,
    responses: { 201: { description: 'The webhook and its secret (shown once).', schema: envelope(CreatedWebhook) } },
    errors: [403, 404],
  }),
  listWebhooks: defineRoute({
    method: 'get',
    path: '/webhooks',
    tag: 'Webhooks',
    auth: 'key',
    summary: 'Your webhooks',
    responses: { 200: { description: 'Newest first.', schema: envelope(z.strictObject({ webhooks: z.array(Webhook), total: z.int().min(0) })) } },
  }),
  getWebhook: defineRoute({
    method: 'get',
    path: '/webhooks/{webhookId}',
    tag: 'Webhooks',
    auth: 'key',
    summary: 'One of your webhooks',
    description: 'Another user’s webhook → 404.',
    params: WebhookParams,
    responses: { 200: { description: 'The webhook.', schema: envelope(z.strictObject({ webhook: Webhook })) } },
    errors: [404],
  }),
  deleteWebhook: defineRoute({
    method: 'delete',
    path: '/webhooks/{webhookId}',
    tag: 'Webhooks',
    auth: 'key',
    summary: 'Delete a webhook',
    description: 'Nothing more is sent, deliveries waiting included.',
    params: WebhookParams,
    responses: { 200: { description: 'Deleted.', schema: envelope(z.strictObject({})) } },
    errors: [404],
  }),
  listWebhookDeliveries: defineRoute({
    method: 'get',
    path: '/webhooks/{webhookId}/deliveries',
    tag: 'Webhooks',
    auth: 'key',
    summary: 'The last 100 deliveries of a webhook',
    params: WebhookParams,
    responses: {
      200: { description: 'Newest first.', schema: envelope(z.strictObject({ deliveries: z.array(WebhookDelivery), total: z.int().min(0) })) },
    },
    errors: [404],
  }),
  resendWebhookDelivery: defineRoute({
    method: 'post',
    path: '/webhooks/{webhookId}/deliveries/{deliveryId}/resend',
    tag: 'Webhooks',
    auth: 'key',
    summary: 'Send a delivery’s event again',
    description: 'A new delivery of the same event (same `webhook-id` and body), due now. A disabled webhook → 409.',
    params: z.object({ webhookId: z.string(), deliveryId: z.string() }),
    responses: { 201: { description: 'The new delivery.', schema: envelope(z.strictObject({ delivery: WebhookDelivery })) } },
    errors: [404, 409],
  }),
};
