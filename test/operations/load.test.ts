import crypto from 'node:crypto';
import http from 'node:http';
import { startTestApp, type TestApp, type TestUser } from '../support/app';

/**
 * Load shedding (admission control before a body is read) and slow clients: a request over
 * capacity waits in the queue (1 s here) and is then refused as busy; a refused request writes
 * nothing and does not keep its connection. (Fairness between users: admission-fairness.test.ts.)
 */
let app: TestApp;
let a: TestUser;
let b: TestUser;

beforeAll(async () => {
  app = await startTestApp({
    rateLimit: false,
    env: {
      WORKERS_ENABLED: 'false',
      UPLOADS_PER_USER: '1',
      MAX_BODY_BYTES: String(256 * 1024),
      UPLOAD_BYTES_IN_FLIGHT: String(1024 * 1024),
      UPLOAD_QUEUE_WAIT_MS: '1000',
      // The held uploads below pause mid-body on purpose: not cut off as trickles during the test.
      BODY_MIN_RATE_GRACE_S: '300',
    },
  });
  a = await app.createUser('load-a');
  b = await app.createUser('load-b');
}, 120_000);
afterAll(() => app?.close());

const BUSY = { success: false, error: 'Server busy, retry later' };

interface Held {
  /** Resolves once the first part of the body has been handed to the socket. */
  started: Promise<void>;
  response: Promise<{ status: number; body: string }>;
  /** The socket closed (by either side). */
  closed: Promise<void>;
  finish(): void;
}

/** A PUT whose body is sent in two parts: the second only on finish(). */
function heldUpload(token: string, sessionId: string, body: object, declaredExtra = 0): Held {
  return heldUploadTo(app, token, sessionId, body, undefined, declaredExtra);
}

/** The same to any app; the second part is the last `tail` bytes (default: half the body). */
function heldUploadTo(to: TestApp, token: string, sessionId: string, body: object, tail?: number, declaredExtra = 0): Held {
  const payload = Buffer.from(JSON.stringify(body));
  const req = http.request(new URL(`/api/v1/projects/held/sessions/${sessionId}`, to.url), {
    method: 'PUT',
    agent: false,
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', 'Content-Length': String(payload.length + declaredExtra) },
  });
  req.on('error', () => undefined);
  const response = new Promise<{ status: number; body: string }>((resolve) => {
    req.on('response', (res) => {
      let text = '';
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      res.on('error', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
  });
  const closed = new Promise<void>((resolve) => req.on('socket', (s) => s.once('close', () => resolve())));
  const half = tail === undefined ? Math.floor(payload.length / 2) : payload.length - tail;
  const started = new Promise<void>((resolve) => req.write(payload.subarray(0, half), () => resolve()));
  return { started, response, closed, finish: () => req.end(payload.subarray(half)) };
}

async function until(cond: () => boolean | Promise<boolean>, what: string): Promise<void> {
  const end = Date.now() + 60_000;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

test('over the per-user upload cap: 503 busy with Retry-After, nothing written; the held upload still lands', async () => {
  const first = crypto.randomUUID();
  const held = heldUpload(a.token, first, { name: 'held', markdown: '# held ' + 'x'.repeat(20_000) });
  await held.started;
  // The held upload is admitted once the server has its headers: poll until a second one is refused.
  let second = '';
  let refused: Awaited<ReturnType<TestApp['request']>> | null = null;
  await until(async () => {
    second = crypto.randomUUID();
    const r = await app.request('PUT', `/api/v1/projects/held/sessions/${second}`, { token: a.token, body: { name: 'second', markdown: '# 2' } });
    if (r.status === 503) refused = r;
    else expect(r.status).toBe(201); // admitted before the held one arrived: fine, try again with a new one
    return r.status === 503;
  }, 'the busy refusal');
  expect(refused!.body).toEqual(BUSY);
  expect(refused!.headers['retry-after']).toMatch(/^\d+$/);
  expect(refused!.headers.connection).toBe('close');
  expect((await app.request('HEAD', `/api/v1/projects/held/sessions/${second}`, { token: a.token })).status).toBe(404);
  // Another user is not held back by a's cap.
  const other = await app.request('PUT', `/api/v1/projects/held-b/sessions/${crypto.randomUUID()}`, { token: b.token, body: { name: 'b', markdown: '# b' } });
  expect(other.status).toBe(201);

  held.finish();
  expect((await held.response).status).toBe(201);
  expect((await app.request('HEAD', `/api/v1/projects/held/sessions/${first}`, { token: a.token })).status).toBe(200);
}, 120_000);

describe('over the bytes a user may hold (a capacity of 1 MiB, so half is 512 KiB)', () => {
  let small: TestApp;
  let c: TestUser;
  let d: TestUser;
  beforeAll(async () => {
    small = await startTestApp({
      rateLimit: false,
      env: {
        WORKERS_ENABLED: 'false',
        MAX_BODY_BYTES: String(256 * 1024),
        UPLOAD_BYTES_IN_FLIGHT: String(1024 * 1024),
        UPLOAD_QUEUE_WAIT_MS: '1000',
        BODY_MIN_RATE_GRACE_S: '300',
      },
    });
    c = await small.createUser('load-c');
    d = await small.createUser('load-d');
  }, 120_000);
  afterAll(() => small?.close());

  test("the user's next upload waits, then 503 busy, nothing written; another user's upload lands", async () => {
    const metric = async (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec((await small.request('GET', '/metrics')).text)?.[1]);
    // Three 180 KB bodies, all sent but for their last byte: more than c's half of the capacity.
    const held = [0, 1, 2].map((i) => heldUploadTo(small, c.token, crypto.randomUUID(), { name: `big-${i}`, markdown: 'y'.repeat(180_000) }, 1));
    await until(async () => (await metric('uploads_paused')) >= 1, "c's uploads held back");
    const id = crypto.randomUUID();
    const r = await small.request('PUT', `/api/v1/projects/held/sessions/${id}`, { token: c.token, body: { name: 'more', markdown: 'z'.repeat(100_000) } });
    expect(r.status).toBe(503);
    expect(r.body).toEqual(BUSY);
    expect(r.headers['retry-after']).toMatch(/^\d+$/);
    expect((await small.request('HEAD', `/api/v1/projects/held/sessions/${id}`, { token: c.token })).status).toBe(404);
    const other = await small.request('PUT', `/api/v1/projects/held-d/sessions/${crypto.randomUUID()}`, {
      token: d.token,
      body: { name: 'd', markdown: 'd'.repeat(100_000) },
    });
    expect(other.status).toBe(201);
    held.forEach((h) => h.finish());
    expect((await Promise.all(held.map((h) => h.response))).map((x) => x.status)).toEqual([201, 201, 201]);
  }, 120_000);
});

test('a request refused before its body is read does not keep the socket while the body trickles', async () => {
  // Declares far more than it sends: without the close, the socket would stay open as long as the client likes.
  const held = heldUpload('not-a-valid-token', crypto.randomUUID(), { name: 'x', markdown: 'x'.repeat(10_000) }, 500_000);
  await held.started;
  const res = await held.response;
  expect(res.status).toBe(401);
  await held.closed; // the server closed it (the test would time out otherwise)
}, 120_000);
