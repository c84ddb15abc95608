/**
 * Webhooks as their owner manages them (docs/webhooks.md): made for one project (whoever may read
 * it), for one team (its admins only) or for the owner's own projects; listed, shown and deleted
 * by their owner alone (anyone else's → 404); their last 100 deliveries, and a resend of one.
 */
import crypto from 'node:crypto';
import { AppError, invalid } from '../errors';
import { parseInput } from '../domain/inputs';
import { newWebhookSecret } from '../domain/webhooks';
import { CreateWebhookInput } from '../api/schemas/webhooks';
import * as store from '../data/webhooks';
import type { Sql } from '../data/sql';
import { inTransaction } from '../data/transaction';
import { requireReadableProject, requireTeamAdmin, requireWriteAccess } from './access';
import { recordAudit } from './audit';
import type { Ctx } from './context';
import { presentDelivery, presentWebhook, type DeliveryDto, type WebhookDto } from './presenters/webhook';
import { requireAllowedTarget } from './webhook-targets';

/** How many deliveries of a webhook are listed (the newest). */
export const DELIVERIES_LISTED = 100;

const webhookNotFound = (webhookId: string) => new AppError('NOT_FOUND', 'Webhook not found', { webhookId });

/** The caller's own webhook (read on `db`: the write pool, or a transaction), else 404. */
async function ownWebhook(ctx: Ctx, webhookId: string, db: Sql = ctx.deps.db.writes): Promise<store.WebhookRow> {
  const row = await store.webhookOfUser(db, ctx.user.id, webhookId);
  if (!row) throw webhookNotFound(webhookId);
  return row;
}

export async function createWebhook(ctx: Ctx, input: unknown): Promise<{ webhook: WebhookDto; secret: string }> {
  requireWriteAccess(ctx);
  const v = parseInput(CreateWebhookInput, input);
  if (v.projectId !== undefined && v.teamId !== undefined) throw invalid('Give projectId or teamId, not both');
  if (v.projectId !== undefined) await requireReadableProject(ctx, v.projectId);
  if (v.teamId !== undefined) await requireTeamAdmin(ctx, v.teamId, 'add webhooks for the team');
  const url = await requireAllowedTarget(ctx.deps, v.url);
  const row = {
    id: crypto.randomUUID(),
    userId: ctx.user.id,
    url: url.href,
    events: [...new Set(v.events)].join(','),
    projectId: v.projectId ?? null,
    teamId: v.teamId ?? null,
    secret: newWebhookSecret(),
    createdAt: new Date(),
  };
  // Audited: a webhook sends the archive's events (titles, ids) to an address of its maker's choosing.
  // The entry names the host only: a receiver's path or query often holds its own secret.
  await inTransaction(ctx.deps.db, ctx.guard, async (tx) => {
    await store.insertWebhook(tx, row);
    await recordAudit(ctx, { action: 'webhook.create', ...auditedAs(row), detail: { host: url.host, events: row.events } }, tx);
  });
  return { webhook: presentWebhook({ ...row, disabledAt: null, disabledReason: null }), secret: row.secret };
}

export async function listWebhooks(ctx: Ctx): Promise<WebhookDto[]> {
  return (await store.webhooksOfUser(ctx.deps.db.writes, ctx.user.id)).map(presentWebhook);
}

export async function getWebhook(ctx: Ctx, webhookId: string): Promise<WebhookDto> {
  return presentWebhook(await ownWebhook(ctx, webhookId));
}

export async function deleteWebhook(ctx: Ctx, webhookId: string): Promise<void> {
  requireWriteAccess(ctx);
  await inTransaction(ctx.deps.db, ctx.guard, async (tx) => {
    const row = await ownWebhook(ctx, webhookId, tx);
    // Nothing deleted: a concurrent delete of the same webhook won.
    if ((await store.deleteWebhookRow(tx, ctx.user.id, webhookId)) === 0) throw webhookNotFound(webhookId);
    await recordAudit(ctx, { action: 'webhook.delete', ...auditedAs(row), detail: { host: new URL(row.url).host } }, tx);
  });
}

/** An audit entry's target and owner for a webhook: a team's belongs to that team, a project's to the project's. */
const auditedAs = (row: Pick<store.WebhookRow, 'id' | 'teamId' | 'projectId'>) => ({
  target: { type: 'webhook' as const, id: row.id },
  teamId: row.teamId ?? undefined,
  projectId: row.projectId,
});

export async function listDeliveries(ctx: Ctx, webhookId: string): Promise<DeliveryDto[]> {
  await ownWebhook(ctx, webhookId);
  return (await store.deliveriesOf(ctx.deps.db.writes, webhookId, DELIVERIES_LISTED)).map(presentDelivery);
}

/** Sends a delivery's event again (same id and body) as a new delivery, due now; a disabled webhook → 409. */
export async function resendDelivery(ctx: Ctx, webhookId: string, deliveryId: string): Promise<DeliveryDto> {
  requireWriteAccess(ctx);
  const hook = await ownWebhook(ctx, webhookId);
  if (hook.disabledAt) throw new AppError('CONFLICT', 'Webhook is disabled', { webhookId });
  const id = /^\d{1,15}$/.test(deliveryId) ? Number(deliveryId) : NaN;
  const notFound = () => new AppError('NOT_FOUND', 'Delivery not found', { webhookId, deliveryId });
  if (!Number.isSafeInteger(id)) throw notFound();
  const newId = await inTransaction(ctx.deps.db, ctx.guard, (tx) => store.insertResend(tx, webhookId, id));
  if (newId === undefined) throw notFound();
  return presentDelivery((await store.deliveryOf(ctx.deps.db.writes, webhookId, newId))!);
}
