import { Webhook as StandardWebhook } from 'standardwebhooks';
import { loadConfig } from '../../src/config';
import { SID, startTestApp, type TestApp, type TestUser } from '../support/app';
import { startReceiver, status, type Receiver } from './receiver';

/*
 * How deliveries go: retried with backoff (same id and body, each attempt signed), failed once the
 * delays run out, a 410 disables the webhook, redirects are not followed, and a receiver that
 * hangs holds up neither other webhooks nor the API.
 */

let app: TestApp;
let rx: Receiver;
let u: TestUser;
let seq = 0;

const req = (method: string, path: string, body?: unknown) => app.request(method, `/api/v1${path}`, { token: u.token, body });
const uploadOne = () => req('PUT', `/projects/delivery-${++seq}/sessions/${SID(seq)}`, { name: `Session ${seq}`, markdown: '# m' });

async function hook(url: string, events = ['session.created']): Promise<{ id: string; secret: string }> {
  const r = await req('POST', '/webhooks', { url, events });
  expect(r.status).toBe(201);
  return { id: r.body.data.webhook.id, secret: r.body.data.secret };
}

const deliveries = async (id: string) => (await req('GET', `/webhooks/${id}/deliveries`)).body.data.deliveries as Array<Record<string, any>>;

async function until<T>(what: string, fn: () => Promise<T | undefined | false>, ms = 30_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

beforeAll(async () => {
  rx = await startReceiver();
  app = await startTestApp({ env: { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_RETRY_DELAYS_S: '1,1', WEBHOOK_TIMEOUT_S: '2' } });
  u = await app.createUser('deliveries');
});
afterAll(async () => {
  await app?.close();
  await rx?.close();
});

test('the default retry schedule spans about a day', () => {
  const delays = loadConfig({ DATABASE_URL: 'mysql://root@127.0.0.1:3306/x', JWT_SECRET: 'x'.repeat(32) }).webhookRetryDelaysS;
  const hours = delays.reduce((s, d) => s + d, 0) / 3600;
  expect(hours).toBeGreaterThan(20);
  expect(hours).toBeLessThan(30);
  // Each wait is longer than or equal to the one before (exponential backoff).
  expect(delays.every((d, i) => i === 0 || d >= delays[i - 1])).toBe(true);
});

test('a failed attempt is retried after its delay, with the same id and body, each attempt signed; then delivered', async () => {
  const path = `/retry-${seq}`;
  let calls = 0;
  rx.answer = (r, res) => {
    if (r.path === `/hook${path}` && ++calls === 1) res.writeHead(500).end('not yet');
    else res.writeHead(204).end();
  };
  const h = await hook(`${rx.url}${path}`);
  expect((await uploadOne()).status).toBe(201);
  const [first, second] = await rx.waitFor(2, (r) => r.path === `/hook${path}`);
  expect(second.headers['webhook-id']).toBe(first.headers['webhook-id']);
  expect(second.body).toBe(first.body);
  const wh = new StandardWebhook(h.secret);
  expect(wh.verify(first.body, first.headers as Record<string, string>)).toMatchObject({ type: 'session.created' });
  expect(wh.verify(second.body, second.headers as Record<string, string>)).toMatchObject({ type: 'session.created' });
  const [d] = await until('delivered', async () => {
    const list = await deliveries(h.id);
    return list[0]?.status === 'delivered' && list;
  });
  expect(d).toMatchObject({ attempts: 2, responseStatus: 204, error: null, nextAttemptAt: null });
});

test('the wait before a retry is the configured delay; when the delays run out the delivery has failed', async () => {
  const path = `/down-${seq}`;
  rx.answer = (r, res) => res.writeHead(r.path === `/hook${path}` ? 503 : 200).end();
  const h = await hook(`${rx.url}${path}`);
  expect((await uploadOne()).status).toBe(201);
  const pending = await until('a failed first attempt', async () => {
    const [d] = await deliveries(h.id);
    return d?.attempts === 1 && d.responseStatus === 503 && d.status === 'pending' && d;
  });
  expect(Date.parse(pending.nextAttemptAt)).toBeGreaterThanOrEqual(Date.parse(pending.attemptedAt) + 1000);
  expect(pending.error).toBe('answered 503');
  const [failed] = await until('the last attempt', async () => {
    const list = await deliveries(h.id);
    return list[0]?.status === 'failed' && list;
  });
  // The first attempt and one per delay ('1,1').
  expect(failed).toMatchObject({ attempts: 3, responseStatus: 503, nextAttemptAt: null });
  expect(rx.received.filter((r) => r.path === `/hook${path}`)).toHaveLength(3);
});

test('a 410 disables the webhook: nothing more is sent, and a resend is refused', async () => {
  const path = `/gone-${seq}`;
  rx.answer = (r, res) => res.writeHead(r.path === `/hook${path}` ? 410 : 200).end();
  const h = await hook(`${rx.url}${path}`);
  expect((await uploadOne()).status).toBe(201);
  const webhook = await until('disabled', async () => {
    const w = (await req('GET', `/webhooks/${h.id}`)).body.data.webhook;
    return w.disabled && w;
  });
  expect(webhook.disabledReason).toBe('The receiver answered 410 Gone');
  const [d] = await deliveries(h.id);
  expect(d).toMatchObject({ status: 'failed', attempts: 1, responseStatus: 410 });
  expect((await uploadOne()).status).toBe(201);
  expect(await deliveries(h.id)).toHaveLength(1);
  const resend = await req('POST', `/webhooks/${h.id}/deliveries/${d.id}/resend`);
  expect(resend.status).toBe(409);
  expect(resend.body.error).toBe('Webhook is disabled');
  expect(rx.received.filter((r) => r.path === `/hook${path}`)).toHaveLength(1);
});

test('a redirect is not followed', async () => {
  const elsewhere = await startReceiver();
  try {
    const path = `/moved-${seq}`;
    rx.answer = (r, res) => (r.path === `/hook${path}` ? status(302, { location: `${elsewhere.url}/taken` })(r, res) : res.writeHead(200).end());
    const h = await hook(`${rx.url}${path}`);
    expect((await uploadOne()).status).toBe(201);
    const d = await until('the redirect', async () => {
      const [x] = await deliveries(h.id);
      return x?.responseStatus === 302 && x;
    });
    expect(d).toMatchObject({ status: 'pending', error: 'redirect (302) not followed' });
    expect(elsewhere.received).toEqual([]);
  } finally {
    await elsewhere.close();
  }
});

test('a receiver that hangs holds up neither other webhooks nor the API; it is cut off after the timeout', async () => {
  const hanging = await startReceiver();
  const open = new Set<unknown>();
  let most = 0;
  hanging.answer = (_r, res) => {
    open.add(res);
    most = Math.max(most, open.size);
    res.on('close', () => open.delete(res));
  };
  try {
    const slow = await hook(hanging.url);
    const path = `/quick-${seq}`;
    rx.answer = status(200);
    await hook(`${rx.url}${path}`);
    for (let i = 0; i < 5; i++) expect((await uploadOne()).status).toBe(201);
    await rx.waitFor(5, (r) => r.path === `/hook${path}`);
    // The API answers while deliveries hang.
    expect((await req('GET', '/webhooks')).status).toBe(200);
    // At most two attempts of one webhook at once (per instance).
    await hanging.waitFor(2);
    expect(most).toBeLessThanOrEqual(2);
    const cut = await until('a timed-out attempt', async () => (await deliveries(slow.id)).find((d) => d.error?.startsWith('could not deliver')));
    expect(cut).toMatchObject({ status: 'pending', responseStatus: null });
    expect(cut.error).toContain('no answer within 2 s');
  } finally {
    await hanging.close();
  }
});
