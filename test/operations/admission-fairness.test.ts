import crypto from 'node:crypto';
import http from 'node:http';
import { startTestApp, type TestApp, type TestUser } from '../support/app';

/**
 * Fair admission: capacity is counted in body bytes received (not declared), a request over
 * capacity waits in a queue before any busy refusal, one user holds at most half the shared
 * capacity, and a body that trickles is cut off and frees what it held.
 */

const KiB = 1024;
const MiB = 1024 * KiB;

interface Open {
  response: Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }>;
  /** The server answered (whatever the status). */
  answered(): boolean;
  /** The connection is gone (either side). */
  closed(): boolean;
  write(bytes: Buffer | string): void;
  end(bytes?: Buffer | string): void;
  destroy(): void;
}

/** A PUT of a session that declares `declared` bytes and sends `first` of them now; the rest is up to the test. */
function openUpload(app: TestApp, token: string, path: string, declared: number, first: Buffer | string): Open {
  let answered = false;
  let closed = false;
  const req = http.request(new URL(path, app.url), {
    method: 'PUT',
    agent: false,
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', 'Content-Length': String(declared) },
  });
  req.on('error', () => undefined);
  req.on('socket', (s) => s.once('close', () => (closed = true)));
  const response = new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }>((resolve) => {
    req.on('response', (res) => {
      answered = true;
      let text = '';
      res.on('data', (c) => (text += c));
      const done = () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text });
      res.on('end', done);
      res.on('error', done);
      res.on('close', done);
    });
    req.on('close', () => resolve({ status: 0, headers: {}, body: '' }));
  });
  req.write(first);
  return {
    response,
    answered: () => answered,
    closed: () => closed,
    write: (bytes) => {
      if (!req.destroyed) req.write(bytes);
    },
    end: (bytes) => req.end(bytes),
    destroy: () => req.destroy(),
  };
}

/** A session upload body of about `size` bytes, cut in two: all but the last `tail` bytes, and those. */
function sessionBody(size: number, tail = 0): { whole: Buffer; head: Buffer; rest: Buffer } {
  const whole = Buffer.from(JSON.stringify({ name: 'fair', markdown: '# fair\n' + 'm'.repeat(Math.max(0, size - 40)) }));
  return { whole, head: whole.subarray(0, whole.length - tail), rest: whole.subarray(whole.length - tail) };
}

async function metric(app: TestApp, name: string): Promise<number> {
  const r = await app.request('GET', '/metrics');
  const m = new RegExp(`^${name} (\\S+)$`, 'm').exec(r.text);
  if (!m) throw new Error(`no metric ${name}`);
  return Number(m[1]);
}

async function until(cond: () => boolean | Promise<boolean>, what: string, ms = 60_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const sessionPath = (project: string, id = crypto.randomUUID()) => `/api/v1/projects/${project}/sessions/${id}`;

describe('default capacity', () => {
  let app: TestApp;
  let a: TestUser;
  let b: TestUser;
  beforeAll(async () => {
    // Default capacity and queue; the slow-body grace is long here so that A's trickles stay open
    // for the whole test (cutting them off is tested below).
    app = await startTestApp({
      rateLimit: false,
      env: { WORKERS_ENABLED: 'false', BODY_MIN_RATE_GRACE_S: '300', UPLOAD_QUEUE_WAIT_MS: '30000' },
    });
    a = await app.createUser('fair-a');
    b = await app.createUser('fair-b');
  }, 120_000);
  afterAll(() => app?.close());

  test("one user's 12 uploads declaring 16 MiB and trickling 1 byte every 2 s: another user's 1 KB, 1 MB and 20 MB uploads are acknowledged", async () => {
    const trickles = Array.from({ length: 12 }, () => openUpload(app, a.token, sessionPath('trickle'), 16 * MiB, '{"name":"t","markdown":"'));
    const timer = setInterval(() => trickles.forEach((t) => t.write('x')), 2000);
    try {
      await until(async () => (await metric(app, 'uploads_admitted')) >= 12, "A's 12 uploads admitted");
      for (const size of [KiB, MiB, 20 * MiB]) {
        const id = crypto.randomUUID();
        const r = await app.request('PUT', sessionPath('fair-b', id), { token: b.token, body: { name: `b-${size}`, markdown: 'b'.repeat(size) } });
        expect({ size, status: r.status }).toEqual({ size, status: 201 });
        expect((await app.request('HEAD', sessionPath('fair-b', id), { token: b.token })).status).toBe(200);
      }
      // B's uploads completed while A's trickles were still open and unanswered.
      expect(trickles.filter((t) => t.answered() || t.closed())).toHaveLength(0);
      // They hold what they sent, not what they declared.
      expect(await metric(app, 'upload_bytes_held')).toBeLessThan(MiB);
    } finally {
      clearInterval(timer);
      trickles.forEach((t) => t.destroy());
    }
    await until(async () => (await metric(app, 'uploads_admitted')) === 0, 'the trickles released');
  }, 180_000);

  test('a burst of 30 concurrent ~150 KB uploads by one user is waited for and all acknowledged', async () => {
    const ids = Array.from({ length: 30 }, () => crypto.randomUUID());
    const results = await Promise.all(
      ids.map((id, i) =>
        app.request('PUT', sessionPath('burst', id), {
          token: a.token,
          body: { name: `burst-${i}`, markdown: `# ${i}\n` + crypto.randomBytes(50_000 + i * 2000).toString('base64') },
        }),
      ),
    );
    expect(results.map((r) => r.status)).toEqual(ids.map(() => 201));
    for (const id of ids) expect((await app.request('HEAD', sessionPath('burst', id), { token: a.token })).status).toBe(200);
  }, 180_000);
});

describe('a small capacity (1 MiB, bodies up to 256 KiB)', () => {
  let app: TestApp;
  let a: TestUser;
  let b: TestUser;
  beforeAll(async () => {
    app = await startTestApp({
      rateLimit: false,
      env: {
        WORKERS_ENABLED: 'false',
        MAX_BODY_BYTES: String(256 * KiB),
        UPLOAD_BYTES_IN_FLIGHT: String(MiB),
        UPLOAD_QUEUE_WAIT_MS: '60000',
        BODY_MIN_RATE_GRACE_S: '300',
      },
    });
    a = await app.createUser('half-a');
    b = await app.createUser('half-b');
  }, 120_000);
  afterAll(() => app?.close());

  test('one user sending fast holds at most half of it; another user is not held back; every upload lands', async () => {
    // Four bodies of 180 KB, each sent but for its last byte: together more than half the capacity.
    const bodies = Array.from({ length: 4 }, () => sessionBody(180_000, 1));
    const ids = bodies.map(() => crypto.randomUUID());
    const uploads = bodies.map((body, i) => openUpload(app, a.token, sessionPath('half', ids[i]), body.whole.length, body.head));
    try {
      // Some of A's requests must wait: reading paused, or not admitted yet.
      await until(async () => (await metric(app, 'uploads_paused')) + (await metric(app, 'uploads_queued')) >= 1, "A's uploads held back");
      await until(
        async () => (await metric(app, 'uploads_paused')) + (await metric(app, 'uploads_queued')) + (await metric(app, 'uploads_admitted')) >= 4,
        'all four seen',
      );
      // Half of 1 MiB, to within one network read (at most 64 KiB) per admitted request.
      const held = await metric(app, 'upload_bytes_held');
      expect(held).toBeGreaterThan(300_000);
      expect(held).toBeLessThanOrEqual(512 * KiB + (await metric(app, 'uploads_admitted')) * 64 * KiB);

      const id = crypto.randomUUID();
      const other = await app.request('PUT', sessionPath('half-b', id), { token: b.token, body: { name: 'b', markdown: 'b'.repeat(150_000) } });
      expect(other.status).toBe(201);
      expect(uploads.filter((u) => u.answered())).toHaveLength(0);

      uploads.forEach((u, i) => u.end(bodies[i].rest));
      const statuses = (await Promise.all(uploads.map((u) => u.response))).map((r) => r.status);
      expect(statuses).toEqual([201, 201, 201, 201]);
      for (const sid of ids) expect((await app.request('HEAD', sessionPath('half', sid), { token: a.token })).status).toBe(200);
    } finally {
      uploads.forEach((u) => u.destroy());
    }
    await until(async () => (await metric(app, 'upload_bytes_held')) === 0, 'everything released');
  }, 180_000);
});

describe('trickling bodies', () => {
  let app: TestApp;
  let c: TestUser;
  beforeAll(async () => {
    // A 2-second grace instead of 10 (the rate stays the default 64 KiB/s), and one upload per user
    // at a time, so that the second upload below can only go once the trickle has been cut off.
    app = await startTestApp({
      rateLimit: false,
      env: { WORKERS_ENABLED: 'false', BODY_MIN_RATE_GRACE_S: '2', UPLOADS_PER_USER: '1', UPLOAD_QUEUE_WAIT_MS: '60000' },
    });
    c = await app.createUser('trickler');
  }, 120_000);
  afterAll(() => app?.close());

  test('a body below the minimum rate is cut off (408, connection closed, nothing stored) and frees what it held', async () => {
    const trickledId = crypto.randomUUID();
    const start = Buffer.from('{"name":"slow","markdown":"' + 's'.repeat(50_000));
    const trickle = openUpload(app, c.token, sessionPath('slow', trickledId), MiB, start);
    const timer = setInterval(() => trickle.write('s'), 300);
    try {
      await until(async () => (await metric(app, 'upload_bytes_held')) >= 50_000, 'the trickle admitted and counted');
      // The user's only slot is taken: this one waits in the queue.
      const secondId = crypto.randomUUID();
      const second = app.request('PUT', sessionPath('slow', secondId), { token: c.token, body: { name: 'next', markdown: '# next' } });

      const cut = await trickle.response;
      expect(cut.status).toBe(408);
      expect(JSON.parse(cut.body)).toEqual({ success: false, error: 'Request timeout' });
      expect(cut.headers.connection).toBe('close');
      await until(() => trickle.closed(), 'the connection closed');

      expect((await second).status).toBe(201);
      expect((await app.request('HEAD', sessionPath('slow', secondId), { token: c.token })).status).toBe(200);
      expect((await app.request('HEAD', sessionPath('slow', trickledId), { token: c.token })).status).toBe(404);
    } finally {
      clearInterval(timer);
      trickle.destroy();
    }
    await until(async () => (await metric(app, 'upload_bytes_held')) === 0, 'everything released');
  }, 120_000);
});
