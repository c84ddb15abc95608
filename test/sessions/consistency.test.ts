import http from 'node:http';
import * as contentVersions from '../../src/data/content-versions';
import { SID, startTestApp, type TestApp, type TestResponse, type TestUser } from '../support/app';

/**
 * Everything one response says about a session comes from one committed version,
 * whatever runs concurrently; markdown and raw data stream with backpressure.
 */
let app: TestApp;
let a: TestUser;

const MiB = 1024 * 1024;

beforeAll(async () => {
  // No search worker: nothing here searches, and indexing the 32 MiB session would only slow the run.
  app = await startTestApp({ rateLimit: false, env: { WORKERS_ENABLED: 'false' } });
  a = await app.createUser('consistency');
}, 120_000);
afterAll(async () => {
  if (process.env.DEBUG_CONS) console.log('before close', app.deps.db.readPool.activeConnections(), app.deps.db.pool.activeConnections());
  await app?.close();
}, 120_000);

/** Version i: every part names i and has a size of its own (several 1 MiB chunks). */
function version(i: number) {
  const markdown = `# v${i}\n` + String.fromCharCode(0x61 + i).repeat(MiB + i * 300_000) + `\nend v${i}`;
  const rawData = `raw v${i}:` + String.fromCharCode(0x41 + i).repeat(MiB / 2 + i * 200_000) + `:v${i}`;
  return { name: `v${i}`, markdown, rawData, metadata: { tags: [`t${i}`] } };
}

/** The version a piece of content belongs to, or -1 when it is not exactly one of them. */
function versionOfMarkdown(md: string): number {
  const m = /^# v(\d+)\n/.exec(md);
  if (!m) return -1;
  return md === version(Number(m[1])).markdown ? Number(m[1]) : -1;
}
function versionOfRaw(raw: string): number {
  const m = /^raw v(\d+):/.exec(raw);
  if (!m) return -1;
  return raw === version(Number(m[1])).rawData ? Number(m[1]) : -1;
}

test('racing uploads: every read path answers with one committed version', async () => {
  const url = `/api/v1/projects/consistent/sessions/${SID(1)}`;
  const N = 6;
  const etagOf = new Map<string, number>();
  const put = async (i: number) => {
    const r = await app.request('PUT', url, { token: a.token, body: version(i) });
    expect([200, 201]).toContain(r.status);
    etagOf.set(r.body.data.etag, i);
  };
  await put(0);

  let writing = true;
  const writers = (async () => {
    for (let round = 0; round < 3; round++) await Promise.all(Array.from({ length: N }, (_, i) => put((i + round) % N)));
    writing = false;
  })();

  /** Each read returns [what it says the version is by name/etag, by content] pairs to compare later. */
  type Seen = { path: string; claims: Array<number | string> };
  const seen: Seen[] = [];
  const readers = {
    json: async () => {
      const r = await app.request('GET', url, { token: a.token });
      const s = r.body.data.session;
      seen.push({
        path: 'json',
        claims: [
          Number(s.name.slice(1)),
          versionOfMarkdown(s.markdownContent),
          Number(s.metadata.tags[0].slice(1)),
          s.etag,
          s.markdownSize === Buffer.byteLength(version(Number(s.name.slice(1))).markdown) ? 'size ok' : 'size bad',
        ],
      });
    },
    markdown: async () => {
      const r = await app.request('GET', url, { token: a.token, headers: { Accept: 'text/markdown' } });
      const v = versionOfMarkdown(r.text);
      seen.push({ path: 'markdown', claims: [v, r.headers.etag as string, Number(r.headers['x-markdown-size']) === r.raw.length ? 'size ok' : 'size bad'] });
    },
    raw: async () => {
      const r = await app.request('GET', `${url}/raw`, { token: a.token });
      const v = versionOfRaw(r.text);
      seen.push({ path: 'raw', claims: [v, r.headers.etag as string, Number(r.headers['x-raw-data-size']) === r.raw.length ? 'size ok' : 'size bad'] });
    },
    head: async () => {
      const r = await app.request('HEAD', url, { token: a.token });
      seen.push({
        path: 'head',
        claims: [r.headers.etag as string, `md ${String(r.headers['x-markdown-size'])}`, `raw ${String(r.headers['x-raw-data-size'])}`],
      });
    },
    graphql: async () => {
      const r = await app.request('POST', '/api/v1/graphql', {
        token: a.token,
        body: { query: `{ session(id: "${SID(1)}", projectId: "consistent") { name etag markdownSize markdownContent } }` },
      });
      const s = r.body.data.session;
      seen.push({
        path: 'graphql',
        claims: [
          Number(s.name.slice(1)),
          versionOfMarkdown(s.markdownContent),
          s.etag,
          s.markdownSize === Buffer.byteLength(s.markdownContent) ? 'size ok' : 'size bad',
        ],
      });
    },
  };
  const readLoops = Object.values(readers).map(async (read) => {
    do await read();
    while (writing);
  });
  await Promise.all([writers, ...readLoops]);

  // Every etag a reader saw names the same version as the content it came with.
  const sizes = (i: number) => [`md ${Buffer.byteLength(version(i).markdown)}`, `raw ${Buffer.byteLength(version(i).rawData)}`];
  for (const s of seen) {
    const versions = s.claims.map((c) => {
      if (typeof c === 'number') return c;
      if (c === 'size ok') return 'ok';
      if (c === 'size bad') return 'bad size';
      if (c.startsWith('md ') || c.startsWith('raw ')) return [...etagOf.values()].find((i) => sizes(i).includes(c)) ?? `unknown ${c}`;
      return etagOf.has(c) ? etagOf.get(c)! : `unknown etag ${c}`;
    });
    const numbers = versions.filter((v) => typeof v === 'number');
    expect({ path: s.path, versions: new Set(numbers).size === 1 && !versions.some((v) => typeof v === 'string' && v !== 'ok') }).toEqual({
      path: s.path,
      versions: true,
    });
    expect(numbers[0]).toBeGreaterThanOrEqual(0);
  }
  expect(new Set(seen.map((s) => s.path)).size).toBe(5);
}, 300_000);

/** Reads the markdown of `url` by hand: pauses after the first bytes until told to go on. */
function pausedRead(url: string) {
  let received = 0;
  let resolveFirst: () => void;
  const first = new Promise<void>((r) => (resolveFirst = r));
  let res!: http.IncomingMessage;
  const req = http.get(new URL(url, app.url), { headers: { Authorization: `Bearer ${a.token}`, Accept: 'text/markdown' }, agent: false }, (r) => {
    res = r;
    r.once('data', (c: Buffer) => {
      received += c.length;
      r.pause();
      resolveFirst();
    });
  });
  req.on('error', () => undefined);
  return {
    first,
    req,
    async rest(): Promise<{ status: number; length: number }> {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      await new Promise<void>((r, j) => {
        res.on('end', r);
        res.on('error', j);
        res.resume();
      });
      return { status: res.statusCode ?? 0, length: received + chunks.reduce((n, c) => n + c.length, 0) };
    },
  };
}

async function until(cond: () => boolean | Promise<boolean>, what: string, timeoutMs = 60_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('large reads stream', () => {
  const url = `/api/v1/projects/streaming/sessions/${SID(2)}`;
  const size = 32 * MiB;
  let yielded = 0;

  beforeAll(async () => {
    const markdown = 'x'.repeat(size - 2) + '\n.';
    const r = await app.request('PUT', url, { token: a.token, body: { name: 'big', markdown } });
    expect(r.status).toBe(201);
    // Count the chunks read from storage (the real store, only counted).
    const real = contentVersions.keptUpChunks;
    jest.spyOn(contentVersions, 'keptUpChunks').mockImplementation(async function* (...args) {
      for await (const c of real(...args)) {
        yielded++;
        yield c;
      }
    });
  }, 120_000);
  afterAll(() => jest.restoreAllMocks());

  test('a client that stops reading stops the reading from storage (backpressure), then gets every byte', async () => {
    yielded = 0;
    const read = pausedRead(url);
    await read.first;
    // Wait until the server has stopped reading ahead: the count stays put across several polls.
    let last = -1;
    let stable = 0;
    await until(() => {
      stable = yielded === last ? stable + 1 : 0;
      last = yielded;
      if (process.env.DEBUG_CONS) console.log('yielded', yielded, app.deps.db.readPool.activeConnections());
      return stable >= 10;
    }, 'the reads to stop');
    expect(yielded).toBeLessThan(size / MiB - 8);
    const got = await read.rest();
    expect(got).toEqual({ status: 200, length: size });
    expect(yielded).toBe(size / MiB);
  }, 120_000);

  test('a client that stops reading mid-stream holds no read connection; one that goes away ends the read', async () => {
    // Reads hold connections of the read pool, or of the replica's with TEST_REPLICA=1.
    const active = () => app.deps.db.readPool.activeConnections() + (app.deps.db.replica?.pool.activeConnections() ?? 0);
    const read = pausedRead(url);
    await read.first;
    await until(() => active() === 0, 'no read connection held while the answer waits for its reader');
    read.req.destroy();
    // The service still answers reads afterwards.
    const r: TestResponse = await app.request('HEAD', url, { token: a.token });
    expect(r.status).toBe(200);
    expect(Number(r.headers['content-length'])).toBe(size);
  }, 120_000);
});
