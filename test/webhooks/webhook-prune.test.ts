/**
 * The retention of webhook deliveries (WEBHOOK_DELIVERY_RETENTION_DAYS): finished deliveries
 * older than it go, except each webhook's newest 100 finished ones; pending ones (retries too)
 * stay whatever their age; each webhook is pruned on its own rows only; one instance at a time.
 */
import { pruneWebhookDeliveries } from '../../src/services/webhook-prune';
import { startTestApp, type TestApp, type TestUser } from '../support/app';

let app: TestApp;
let ada: TestUser;

beforeAll(async () => {
  app = await startTestApp({ env: { WORKERS_ENABLED: 'false', WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_DELIVERY_RETENTION_DAYS: '30' } });
  ada = await app.createUser('ada');
}, 60_000);
afterAll(async () => {
  await app?.close();
}, 60_000);

let seq = 0;
async function webhook(): Promise<string> {
  const r = await app.request('POST', '/api/v1/webhooks', { token: ada.token, body: { url: 'http://127.0.0.1:9/hook', events: ['session.created'] } });
  expect(r.status).toBe(201);
  return r.body.data.webhook.id;
}

/** `n` deliveries of the webhook, `daysOld` days old, in id order. */
async function deliveries(webhookId: string, n: number, daysOld: number, status: 'delivered' | 'failed' | 'skipped' | 'pending'): Promise<void> {
  const rows = Array.from({ length: n }, () => `msg_prune_${++seq}`);
  await app.deps.db.writes.execute(
    `INSERT INTO webhook_deliveries (webhookId, eventId, type, scopeId, payload, status, attempts, nextAttemptAt, createdAt)
     VALUES ${rows.map(() => "(?, ?, 'session.created', ?, '{}', ?, ?, IF(? = 'pending', UTC_TIMESTAMP(3) + INTERVAL 1 HOUR, NULL), UTC_TIMESTAMP(3) - INTERVAL ? DAY)").join(', ')}`,
    ...rows.flatMap((eventId) => [webhookId, eventId, ada.id, status, status === 'pending' ? 3 : 1, status, daysOld]),
  );
}

const idsOf = async (webhookId: string) =>
  (await app.deps.db.writes.query<{ id: number; status: string }>('SELECT id, status FROM webhook_deliveries WHERE webhookId = ? ORDER BY id', webhookId)).map(
    (r) => `${r.id}:${r.status}`,
  );
const listed = async (webhookId: string) =>
  ((await app.request('GET', `/api/v1/webhooks/${webhookId}/deliveries`, { token: ada.token })).body.data.deliveries as Array<{ id: unknown }>).map((d) =>
    String(d.id),
  );

test('old finished deliveries go; pending ones and each webhook’s newest 100 finished stay; other webhooks keep theirs', async () => {
  const busy = await webhook();
  // Oldest first: 5 pending retries, 60 delivered and 60 failed, 30 skipped, all 40 days old, then 20 delivered 2 days old.
  await deliveries(busy, 5, 40, 'pending');
  await deliveries(busy, 60, 40, 'delivered');
  await deliveries(busy, 60, 40, 'failed');
  await deliveries(busy, 30, 40, 'skipped');
  await deliveries(busy, 20, 2, 'delivered');
  // Under 100 finished, all old: kept.
  const few = await webhook();
  await deliveries(few, 80, 40, 'failed');
  await deliveries(few, 2, 40, 'pending');
  // Over 100 finished, none older than the retention: kept.
  const recent = await webhook();
  await deliveries(recent, 150, 29, 'delivered');

  const before = await idsOf(busy);
  const fewBefore = await idsOf(few);
  const recentBefore = await idsOf(recent);
  const listedBefore = await listed(busy);
  expect(listedBefore).toHaveLength(100);

  expect(await pruneWebhookDeliveries(app.deps.db, app.deps.config.namespace, app.deps.config.webhookDeliveryRetentionDays)).toBe(70);

  // busy: 170 finished → its newest 100 (20 recent, 30 skipped, the last 50 failed); the 70 older ones (60 delivered, 10 failed) gone; all 5 pending stay.
  const finished = before.filter((r) => !r.endsWith(':pending'));
  const kept = [...finished.slice(70), ...before.filter((r) => r.endsWith(':pending'))];
  expect((await idsOf(busy)).sort()).toEqual(kept.sort());
  expect(await listed(busy)).toEqual(listedBefore);
  expect(await idsOf(few)).toEqual(fewBefore);
  expect(await idsOf(recent)).toEqual(recentBefore);

  // Nothing more to do: a second run deletes nothing.
  expect(await pruneWebhookDeliveries(app.deps.db, app.deps.config.namespace, 30)).toBe(0);
  // With a shorter retention the recent webhook's 50 oldest go, past its newest 100.
  expect(await pruneWebhookDeliveries(app.deps.db, app.deps.config.namespace, 10)).toBe(50);
  expect(await idsOf(recent)).toEqual(recentBefore.slice(50));
  expect(await idsOf(few)).toEqual(fewBefore);
});

test('while another instance holds the lock, this one prunes nothing', async () => {
  const h = await webhook();
  await deliveries(h, 101, 40, 'delivered');
  const ns = app.deps.config.namespace;
  const other = await app.deps.db.pool.getConnection();
  try {
    await other.query('SELECT GET_LOCK(?, 0)', [`${ns}:webhook-delivery-prune`]);
    expect(await pruneWebhookDeliveries(app.deps.db, ns, 30)).toBeNull();
    expect(await idsOf(h)).toHaveLength(101);
  } finally {
    await other.query('SELECT RELEASE_LOCK(?)', [`${ns}:webhook-delivery-prune`]);
    await other.release();
  }
  expect(await pruneWebhookDeliveries(app.deps.db, ns, 30)).toBe(1);
  expect(await idsOf(h)).toHaveLength(100);
});
