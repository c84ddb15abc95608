import dns from 'node:dns';
import { isPublicAddress } from '../../src/domain/webhooks';
import { startTestApp, type TestApp, type TestUser } from '../support/app';
import { startReceiver, type Receiver } from './receiver';

/*
 * Where webhooks may send: private, loopback, link-local, unspecified and the IPv6 forms that
 * carry an IPv4 address are refused when a webhook is made and again before every attempt (the
 * host resolved then), and an attempt connects to the address it checked.
 */

let app: TestApp;
let rx: Receiver;
let u: TestUser;
/** What `hooks.example.test` resolves to now (the app's resolver is replaced for these tests). */
let answer: string[] = [];

const create = (url: string) => app.request('POST', '/api/v1/webhooks', { token: u.token, body: { url, events: ['session.created'] } });

beforeAll(async () => {
  rx = await startReceiver();
  app = await startTestApp({ env: { WEBHOOK_RETRY_DELAYS_S: '60' } });
  // hooks.example.test answers what the test says; other *.example.test names are not found; the rest (localhost) as the system resolves them.
  app.deps.resolveHost = async (host) => {
    if (host === 'hooks.example.test') return answer;
    if (host.endsWith('.example.test')) throw new Error('not found');
    return (await dns.promises.lookup(host, { all: true })).map((a) => a.address);
  };
  u = await app.createUser('targets');
});
afterAll(async () => {
  await app?.close();
  await rx?.close();
});

test.each([
  '127.0.0.1',
  '10.1.2.3',
  '172.16.0.1',
  '192.168.1.1',
  '169.254.169.254',
  '100.64.0.1',
  '0.0.0.0',
  '255.255.255.255',
  '224.0.0.1',
  '198.18.0.1',
  '::1',
  '::',
  'fe80::1',
  'fc00::1',
  'fd12:3456::1',
  '::ffff:127.0.0.1',
  '::ffff:10.0.0.1',
  '64:ff9b::7f00:1',
  '2002:7f00:1::1',
  'ff02::1',
])('%s is not a public address', (address) => {
  expect(isPublicAddress(address)).toBe(false);
});

test.each(['93.184.216.34', '1.1.1.1', '2606:4700:4700::1111'])('%s is a public address', (address) => {
  expect(isPublicAddress(address)).toBe(true);
});

test.each([
  'http://127.0.0.1:8080/hook',
  'http://localhost/hook',
  'https://10.0.0.5/hook',
  'http://169.254.169.254/latest/meta-data',
  'http://[::1]/hook',
  'http://[::ffff:127.0.0.1]/hook',
  'http://[fe80::1]/hook',
  'http://0.0.0.0/hook',
  'http://2130706433/hook',
])('a webhook to %s is refused when it is made', async (url) => {
  const r = await create(url);
  expect(r.status).toBe(400);
  expect(r.body.error).toContain('is on a private, loopback or link-local address');
});

test('a host that resolves to a private address is refused; one that is not found too', async () => {
  answer = ['93.184.216.34', '192.168.0.10'];
  const r = await create('https://hooks.example.test/hook');
  expect(r.status).toBe(400);
  expect(r.body.error).toBe(
    'url: hooks.example.test is on a private, loopback or link-local address (192.168.0.10); webhooks are sent to public addresses only, unless the operator sets WEBHOOK_ALLOW_PRIVATE=true',
  );
  const missing = await create('https://nowhere.example.test/hook');
  expect(missing.status).toBe(400);
  expect(missing.body.error).toBe('url: the host nowhere.example.test was not found');
});

test('a host whose DNS answer changes to a private address after the webhook was made is refused at delivery', async () => {
  answer = ['93.184.216.34'];
  const made = await create(`http://hooks.example.test:${rx.port}/rebound`);
  expect(made.status).toBe(201);
  const id = made.body.data.webhook.id;
  answer = ['127.0.0.1'];
  expect(
    (
      await app.request('PUT', '/api/v1/projects/targets/sessions/0e6a2d7c-1111-4222-8333-000000000077', {
        token: u.token,
        body: { name: 's', markdown: '# m' },
      })
    ).status,
  ).toBe(201);
  const deadline = Date.now() + 30_000;
  let d: any;
  for (;;) {
    [d] = (await app.request('GET', `/api/v1/webhooks/${id}/deliveries`, { token: u.token })).body.data.deliveries;
    if (d?.attempts >= 1 && d.error) break;
    if (Date.now() > deadline) throw new Error('no attempt');
    await new Promise((r) => setTimeout(r, 100));
  }
  expect(d).toMatchObject({ status: 'pending', responseStatus: null });
  expect(d.error).toContain('hooks.example.test is on a private, loopback or link-local address (127.0.0.1)');
  expect(rx.received).toEqual([]);
});

test('with WEBHOOK_ALLOW_PRIVATE=true an attempt connects to the address it resolved, with the URL’s host', async () => {
  const open = await startTestApp({ db: app.db, env: { WEBHOOK_ALLOW_PRIVATE: 'true' } });
  try {
    open.deps.resolveHost = (host) => (host === 'hooks.example.test' ? Promise.resolve(['127.0.0.1']) : Promise.reject(new Error('not found')));
    const made = await open.request('POST', '/api/v1/webhooks', {
      token: u.token,
      body: { url: `http://hooks.example.test:${rx.port}/allowed`, events: ['session.created'] },
    });
    expect(made.status).toBe(201);
    expect(
      (
        await open.request('PUT', '/api/v1/projects/targets/sessions/0e6a2d7c-1111-4222-8333-000000000078', {
          token: u.token,
          body: { name: 's', markdown: '# m' },
        })
      ).status,
    ).toBe(201);
    const [got] = await rx.waitFor(1, (r) => r.path === '/allowed');
    expect(got.headers.host).toBe(`hooks.example.test:${rx.port}`);
  } finally {
    await open.close();
  }
});
