import type { webhookRoutes } from '../api/routes';
import * as webhooks from '../services/webhooks';
import { ok, type Door } from './context';
import { ctxOf } from '../http/request-context';
import type { Handlers } from '../api/route';

export function webhookHandlers({ deps }: Door): Handlers<typeof webhookRoutes> {
  return {
    createWebhook: async (req, res) => {
      const created = await webhooks.createWebhook(ctxOf(req, deps), req.body);
      res.status(201);
      return ok(created);
    },
    listWebhooks: async (req) => {
      const list = await webhooks.listWebhooks(ctxOf(req, deps));
      return ok({ webhooks: list, total: list.length });
    },
    getWebhook: async (req) => ok({ webhook: await webhooks.getWebhook(ctxOf(req, deps), req.params.webhookId) }),
    deleteWebhook: async (req) => {
      await webhooks.deleteWebhook(ctxOf(req, deps), req.params.webhookId);
      return ok({});
    },
    listWebhookDeliveries: async (req) => {
      const list = await webhooks.listDeliveries(ctxOf(req, deps), req.params.webhookId);
      return ok({ deliveries: list, total: list.length });
    },
    resendWebhookDelivery: async (req, res) => {
      const delivery = await webhooks.resendDelivery(ctxOf(req, deps), req.params.webhookId, req.params.deliveryId);
      res.status(201);
      return ok({ delivery });
    },
  };
}
