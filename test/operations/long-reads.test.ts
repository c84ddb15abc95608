/**
 * Long reads (docs/operations.md, "Long reads"): downloads and exports that stream hold no
 * database connection while they wait for their reader, one user has at most a few at once, and a
 * reader that takes nothing is cut off. The held downloads here are real non-reading clients: the
 * response is never read, so the client's socket stops reading and the server's writes back up
 * (the content is many MiB, more than the sockets' buffers hold).
 */
import crypto from 'node:crypto';
import http from 'node:http';
import type net from 'node:net';
import { startTestApp, type TestApp, type TestResponse, type TestUser } from '../support/app';

const BIG = `# big\n\n${'x'.repeat(1023)}\n`.repeat(12 * 1024);

interface Held {
  status: number;
  /** Content-Length of the answer. */
  total: number;
  socket: net.Socket;
  /** Resolves when the connection closes, by either side. */
  closed: Promise<void>;
  /** Reads on to the end (or until the connection closes): the bytes received. */
  readAll(): Promise<number>;
  close(): void;
}

/** A GET whose answer nobody reads: resolves with its headers, the body left in the pipes. */
function hold(app: TestApp, user: TestUser, path: string, accept = '*/*'): Promise<Held> {
  return new Promise((resolve, reject) => {
    const req = http.get(new URL(path, app.url), { headers: { Authorization: `Bearer ${user.token}`, Accept: accept }, agent: false }, (res) => {
      const socket = res.socket;
      const closed = new Promise<void>((done) => socket.once('close', () => done()));
      let n = 0;
      resolve({
        status: res.statusCode ?? 0,
        total: Number(res.headers['content-length']),
        socket,
        closed,
        readAll: () =>
          new Promise<number>((done) => {
            res.on('data', (c: Buffer) => (n += c.length));
            res.once('end', () => done(n));
            res.once('error', () => done(n));
            res.once('close', () => done(n));
            res.resume();
          }),
        close: () => socket.destroy(),
      });
    });
    req.on('error', reject);
  });
}

const markdownOf = (projectId: string, sid: string) => `/api/v1/projects/${projectId}/sessions/${sid}`;

async function bigSession(app: TestApp, user: TestUser, projectId: string, withRaw = false): Promise<string> {
  const sid = crypto.randomUUID();
  await app.upload(user, projectId, sid, { name: 'big', markdown: BIG, ...(withRaw ? { rawData: BIG.replace(/x/g, 'r') } : {}) });
  return sid;
}

async function closeAll(held: Held[]): Promise<void> {
  for (const h of held) h.close();
  await Promise.all(held.map((h) => h.closed));
}

describe('21 idle downloads of one user', () => {
  let app: TestApp;
  beforeAll(async () => {
    // Every one of the 21 admitted and none cut off while the test runs: what must not hold the pool is the waiting itself.
    app = await startTestApp({ rateLimit: false, env: { WORKERS_ENABLED: 'false', LONG_READS_PER_USER: '50', LONG_READ_IDLE_S: '600' } });
  }, 120_000);
  afterAll(() => app?.close());

  test("hold no database connection: another user's reads and writes answer, /readyz says ready, and the downloads then finish", async () => {
    const a = await app.createUser('long-a');
    const b = await app.createUser('long-b');
    const sid = await bigSession(app, a, 'long-a', true);
    const url = markdownOf('long-a', sid);
    const held: Held[] = [];
    try {
      for (let i = 0; i < 7; i++) {
        held.push(await hold(app, a, '/api/v1/export'));
        held.push(await hold(app, a, url, 'text/markdown'));
        held.push(await hold(app, a, `${url}/raw`));
      }
      expect(held.map((h) => h.status)).toEqual(Array(21).fill(200));

      expect((await app.request('GET', '/readyz')).status).toBe(200);
      const put = await app.put(b, 'long-b', crypto.randomUUID(), { name: 'written meanwhile', markdown: '# meanwhile\n' });
      expect(put.status).toBe(201);
      const list = await app.request('GET', '/api/v1/projects/long-b/sessions', { token: b.token });
      expect(list.status).toBe(200);
      expect(list.body.data.sessions.map((s: { name: string }) => s.name)).toEqual(['written meanwhile']);
      const gql = await app.gql(b, '{ projects { id } }');
      expect(gql.status).toBe(200);
      expect(gql.body.errors).toBeUndefined();
      // The other user's own large download streams to the end meanwhile.
      const bSid = await bigSession(app, b, 'long-b');
      const bRead = await app.request('GET', markdownOf('long-b', bSid), { token: b.token, headers: { Accept: 'text/markdown' } });
      expect(bRead.status).toBe(200);
      expect(bRead.raw.length).toBe(Buffer.byteLength(BIG));

      // The 21 were really waiting for their reader: none had received its whole answer.
      for (const h of held) expect(h.socket.bytesRead).toBeLessThan(h.total);
      // Read on: every one finishes, whole.
      const got = await Promise.all(held.map((h) => h.readAll()));
      expect(got).toEqual(held.map((h) => h.total));
    } finally {
      await closeAll(held);
    }
  }, 240_000);
});

describe('at most 4 long reads per user', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ rateLimit: false, env: { WORKERS_ENABLED: 'false', LONG_READ_IDLE_S: '600' } });
  }, 120_000);
  afterAll(() => app?.close());

  test('the fifth → 429 with Retry-After; small reads and other users are not counted; a closed one frees its place', async () => {
    const a = await app.createUser('four-a');
    const b = await app.createUser('four-b');
    const url = markdownOf('four-a', await bigSession(app, a, 'four-a'));
    const small = crypto.randomUUID();
    await app.upload(a, 'four-a', small, { name: 'small', markdown: '# small\n' });
    const held: Held[] = [];
    try {
      for (let i = 0; i < 4; i++) held.push(await hold(app, a, url, 'text/markdown'));
      expect(held.map((h) => h.status)).toEqual([200, 200, 200, 200]);

      for (const path of [url, '/api/v1/export']) {
        const fifth = await app.request('GET', path, { token: a.token, headers: { Accept: 'text/markdown' } });
        expect(fifth.status).toBe(429);
        expect(fifth.body).toEqual({
          success: false,
          error: 'Too many downloads at once: at most 4 downloads and exports per user at a time. Finish one, then retry.',
        });
        expect(Number(fifth.headers['retry-after'])).toBeGreaterThan(0);
      }
      // A session that fits in one chunk is answered at once: no long read.
      expect((await app.request('GET', markdownOf('four-a', small), { token: a.token })).status).toBe(200);
      // Another user's download is theirs to count.
      const other = await hold(app, b, markdownOf('four-b', await bigSession(app, b, 'four-b')), 'text/markdown');
      held.push(other);
      expect(other.status).toBe(200);

      // One of the four goes away: its place is free again (once the server has seen it close).
      held[0].close();
      await held[0].closed;
      let status = 0;
      for (let tries = 0; tries < 100 && status !== 200; tries++) {
        const next = await hold(app, a, url, 'text/markdown');
        held.push(next);
        status = next.status;
        if (status !== 200) await new Promise((r) => setTimeout(r, 100));
      }
      expect(status).toBe(200);
    } finally {
      await closeAll(held);
    }
  }, 240_000);
});

describe('an idle reader', () => {
  let app: TestApp;
  beforeAll(async () => {
    // One long read per user: the next one is admitted once the idle one has been cut off.
    app = await startTestApp({ rateLimit: false, env: { WORKERS_ENABLED: 'false', LONG_READS_PER_USER: '1', LONG_READ_IDLE_S: '2' } });
  }, 120_000);
  afterAll(() => app?.close());

  /**
   * Asks for `path` until the user's one long read is free again (429 before), reading the answer
   * to its end: the idle one was cut off by the server, and an answer that is read is not.
   */
  async function admittedOnceCut(a: TestUser, path: string, accept: string): Promise<TestResponse> {
    for (;;) {
      const r = await app.request('GET', path, { token: a.token, headers: { Accept: accept } });
      if (r.status !== 429) return r;
      await new Promise((done) => setTimeout(done, 250));
    }
  }

  test('is cut off after LONG_READ_IDLE_S, download and export alike; a reader that reads is not', async () => {
    const a = await app.createUser('idle-a');
    const url = markdownOf('idle-a', await bigSession(app, a, 'idle-a'));
    for (const [path, accept] of [
      [url, 'text/markdown'],
      ['/api/v1/export', 'application/x-tar'],
    ]) {
      const idle = await hold(app, a, path, accept);
      try {
        expect(idle.status).toBe(200);
        const next = await admittedOnceCut(a, path, accept);
        expect(next.status).toBe(200);
        expect(next.raw.length).toBe(Number(next.headers['content-length']));
        // A paused client only learns of the cut when it reads: what the pipes held, then the end, short.
        expect(await idle.readAll()).toBeLessThan(idle.total);
      } finally {
        idle.close();
      }
    }
  }, 240_000);
});
