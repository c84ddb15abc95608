import { Webhook as StandardWebhook } from 'standardwebhooks';
import { ServerProcess } from '../support/server-process';
import { killGroup } from '../support/processes';
import { testDataDir } from '../support/meili-engine';
import { SID, startTestApp, type TestApp, type TestUser } from '../support/app';
import { startReceiver, type Receiver } from './receiver';

/*
 * At least once: a delivery whose attempt was in flight on an instance that died (SIGKILL) is
 * claimed again by another instance once its lease is over, with the same id and body.
 */

let app: TestApp;
let survivor: TestApp | undefined;
let child: ServerProcess | undefined;
let rx: Receiver;
let u: TestUser;

beforeAll(async () => {
  rx = await startReceiver();
  // The app the test writes through runs no worker: only the child process delivers at first.
  app = await startTestApp({ env: { WORKERS_ENABLED: 'false', WEBHOOK_ALLOW_PRIVATE: 'true' } });
  u = await app.createUser('crash');
}, 60_000);
afterAll(async () => {
  if (child) killGroup(child.proc.pid!);
  await survivor?.close();
  await app?.close();
  await rx?.close();
}, 60_000);

test('an attempt cut short by a killed instance is delivered by another one', async () => {
  const made = await app.request('POST', '/api/v1/webhooks', { token: u.token, body: { url: rx.url, events: ['session.created'] } });
  expect(made.status).toBe(201);
  const { webhook, secret } = made.body.data;
  rx.answer = () => undefined; // hangs: the attempt stays in flight
  child = await ServerProcess.start(app.db.url, testDataDir(), {
    MEILI_URL: process.env.MEILI_URL ?? '',
    MEILI_MASTER_KEY: process.env.MEILI_MASTER_KEY ?? '',
    NAMESPACE: app.db.name,
    WORKERS_ENABLED: 'true',
    WEBHOOK_ALLOW_PRIVATE: 'true',
    WEBHOOK_TIMEOUT_S: '5',
  });
  expect((await app.request('PUT', `/api/v1/projects/crash/sessions/${SID(1)}`, { token: u.token, body: { name: 's', markdown: '# m' } })).status).toBe(201);
  const [first] = await rx.waitFor(1);
  child.proc.kill('SIGKILL');
  await child.exited;
  killGroup(child.proc.pid!);
  child = undefined;

  const [inFlight] = (await app.request('GET', `/api/v1/webhooks/${webhook.id}/deliveries`, { token: u.token })).body.data.deliveries;
  expect(inFlight).toMatchObject({ status: 'pending', attempts: 1 });

  rx.answer = (_r, res) => res.writeHead(200).end();
  survivor = await startTestApp({ db: app.db, env: { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_TIMEOUT_S: '5' } });
  const [, second] = await rx.waitFor(2, () => true, 45_000);
  expect(second.headers['webhook-id']).toBe(first.headers['webhook-id']);
  expect(second.body).toBe(first.body);
  expect(new StandardWebhook(secret).verify(second.body, second.headers as Record<string, string>)).toMatchObject({ type: 'session.created' });
  const deadline = Date.now() + 30_000;
  for (;;) {
    const [d] = (await app.request('GET', `/api/v1/webhooks/${webhook.id}/deliveries`, { token: u.token })).body.data.deliveries;
    if (d.status === 'delivered') {
      expect(d).toMatchObject({ attempts: 2, responseStatus: 200 });
      break;
    }
    if (Date.now() > deadline) throw new Error(`still ${d.status}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}, 120_000);
