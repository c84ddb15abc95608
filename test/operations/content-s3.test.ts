/**
 * CONTENT_STORE=s3 against a real S3-protocol server (s3rver, started here on a free port with a
 * temporary directory): content written as objects, read back through REST and GraphQL (whole,
 * streamed, by range), replaced atomically under concurrent reads, a crash between the object
 * write and the commit reclaimed by the sweep, `content migrate` db → s3 → db resumed after an
 * interruption, multipart above 8 MiB, and a missing bucket refused at start.
 */
import fs from 'node:fs';
import path from 'node:path';
import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { loadConfig } from '../../src/config';
import { stageContent, writeContent } from '../../src/data/content-writes';
import { contentStore, openContentStore } from '../../src/data/content-store';
import { migrateContent } from '../../src/data/content-store/migrate';
import { MULTIPART_BYTES, type ObjectStore } from '../../src/data/content-store/s3';
import { sweepObjects } from '../../src/data/content-store/sweep';
import { inTransaction } from '../../src/data/transaction';
import { SID, startTestApp, type TestApp, type TestUser } from '../support/app';
import { runCli } from '../support/cli';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { testDataDir } from '../support/meili-engine';
import { JWT_SECRET, ServerProcess } from '../support/server-process';
import { bucketFor, createBucket, s3Env, S3RVER_KEY, startS3rver, type TestS3 } from '../support/s3';

const MiB = 1024 * 1024;

let s3: TestS3;
let client: S3Client;
let app: TestApp;
let user: TestUser;
let bucket: string;

/** Keys and sizes of the objects under a prefix. */
async function listed(prefix = ''): Promise<Array<{ key: string; size: number }>> {
  const out: Array<{ key: string; size: number }> = [];
  let token: string | undefined;
  do {
    const page = await client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token }));
    for (const o of page.Contents ?? []) out.push({ key: o.Key!, size: Number(o.Size) });
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  return out;
}

const sessionUrl = (project: string, n: number) => `/api/v1/projects/${project}/sessions/${SID(n)}`;

async function put(project: string, n: number, body: Record<string, unknown>): Promise<string> {
  const r = await app.request('PUT', sessionUrl(project, n), { token: user.token, body: { name: `s${n}`, ...body } });
  expect([200, 201]).toContain(r.status);
  return r.body.data.etag as string;
}

function chunkRows(projectId: string, n: number) {
  return app.deps.db.reads.query<{ part: string; bytes: number }>(
    'SELECT part, LENGTH(data) AS bytes FROM session_chunks WHERE projectId = ? AND sessionId = ? ORDER BY part, seq',
    projectId,
    SID(n),
  );
}
function objectRows(projectId: string, n: number) {
  return app.deps.db.reads.query<{ part: string; objectKey: string; size: number }>(
    'SELECT part, objectKey, size FROM session_objects WHERE projectId = ? AND sessionId = ? ORDER BY part',
    projectId,
    SID(n),
  );
}

beforeAll(async () => {
  s3 = await startS3rver();
  client = new S3Client({
    endpoint: s3.endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: S3RVER_KEY, secretAccessKey: S3RVER_KEY },
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
  const db = await createTestDatabase('sa_s3');
  bucket = bucketFor(db.name);
  await createBucket(s3.endpoint, bucket);
  app = await startTestApp({ db, rateLimit: false, env: { ...s3Env(s3.endpoint, bucket), WORKERS_ENABLED: 'false' } });
  user = await app.createUser('s3');
}, 120_000);

afterAll(async () => {
  await app?.close();
  await app?.db.drop();
  client?.destroy();
  await s3?.close();
}, 120_000);

describe('configuration', () => {
  const base = { DATABASE_URL: 'mysql://root@127.0.0.1:3306/x', JWT_SECRET: 'test-secret-that-is-long-enough' };

  test('db is the default; s3 needs a bucket; the S3 settings are validated', () => {
    expect(loadConfig(base)).toMatchObject({ contentStore: 'db', s3: null });
    expect(() => loadConfig({ ...base, CONTENT_STORE: 's3' })).toThrow(/CONTENT_STORE=s3 needs S3_BUCKET/);
    expect(() => loadConfig({ ...base, CONTENT_STORE: 'files' })).toThrow(/CONTENT_STORE must be db or s3/);
    expect(() => loadConfig({ ...base, CONTENT_STORE: 's3', S3_BUCKET: 'b', S3_FORCE_PATH_STYLE: 'yes' })).toThrow(
      /S3_BUCKET must be a bucket name[\s\S]*S3_FORCE_PATH_STYLE must be true or false/,
    );
    expect(() => loadConfig({ ...base, S3_BUCKET: 'bucket-1', S3_CHECKSUMS: 'never' })).toThrow(/S3_CHECKSUMS must be when_supported or when_required/);
    expect(() => loadConfig({ ...base, S3_BUCKET: 'bucket-1', S3_ACCESS_KEY_ID: 'k' })).toThrow(/S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY go together/);
    expect(() => loadConfig({ ...base, S3_ENDPOINT: 'http://127.0.0.1:9000' })).toThrow(/S3_ENDPOINT needs S3_BUCKET/);
    expect(loadConfig({ ...base, ...s3Env('http://127.0.0.1:9000', 'bucket-1') })).toMatchObject({
      contentStore: 's3',
      s3: { endpoint: 'http://127.0.0.1:9000', bucket: 'bucket-1', region: 'us-east-1', forcePathStyle: true, checksums: 'when_required' },
    });
    expect(loadConfig({ ...base, S3_BUCKET: 'bucket-1' }).s3).toMatchObject({
      endpoint: null,
      forcePathStyle: false,
      checksums: 'when_supported',
      accessKeyId: null,
    });
  });

  test('a missing bucket is a clear start-up error, and the service does not start', async () => {
    const missing = { ...s3Env(s3.endpoint, 'no-such-bucket'), NAMESPACE: 'x' };
    await expect(openContentStore({ contentStore: 's3', s3: loadConfig({ ...base, ...missing }).s3, namespace: 'x' })).rejects.toThrow(
      `S3 bucket "no-such-bucket" at ${s3.endpoint} does not exist`,
    );
    // The real server process: exits with the message before listening.
    // Under the run's DATA_DIR (removed by the global teardown, whatever happens here).
    const dataDir = path.join(testDataDir(), `s3-missing-bucket-${process.pid}`);
    let started: ServerProcess | null = null;
    try {
      started = await ServerProcess.start(app.db.url, dataDir, missing);
    } catch (err) {
      expect(String((err as Error).message)).toMatch(/server exited early[\s\S]*S3 bucket "no-such-bucket" at .* does not exist: create it first/);
    } finally {
      await started?.stop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
    expect(started).toBeNull();
  }, 90_000);
});

describe('reads and writes on s3', () => {
  const md = '# Title\n\n## User\n\nhello there\n\n## Assistant\n\nhi! ' + 'é'.repeat(2000) + '\n';
  const raw = JSON.stringify({ events: Array.from({ length: 200 }, (_, i) => ({ i, text: `event ${i}` })) });

  test('an upload is stored as objects (the database keeps sizes and digests), and reads return it through REST and GraphQL', async () => {
    const etag = await put('reads', 1, { markdown: md, rawData: raw });
    const objs = await objectRows('reads', 1);
    expect(objs.map((o) => o.part).sort()).toEqual(expect.arrayContaining(['markdown', 'raw']));
    expect(Number(objs.find((o) => o.part === 'markdown')!.size)).toBe(Buffer.byteLength(md));
    // No content bytes in chunk rows.
    expect((await chunkRows('reads', 1)).filter((r) => Number(r.bytes) > 0)).toEqual([]);
    const keys = (await listed()).map((o) => o.key);
    for (const o of objs) expect(keys).toContain(o.objectKey);
    expect(objs.every((o) => o.objectKey.startsWith(`${app.db.name}/content/${SID(1)}/`))).toBe(true);

    const json = await app.request('GET', sessionUrl('reads', 1), { token: user.token });
    expect(json.status).toBe(200);
    expect(json.body.data.session.markdownContent).toBe(md);
    expect(json.headers.etag).toBe(etag);
    const text = await app.request('GET', sessionUrl('reads', 1), { token: user.token, headers: { Accept: 'text/markdown' } });
    expect(text.text).toBe(md);
    expect(Number(text.headers['content-length'])).toBe(Buffer.byteLength(md));
    const rawRes = await app.request('GET', `${sessionUrl('reads', 1)}/raw`, { token: user.token });
    expect(rawRes.text).toBe(raw);
    const head = await app.request('HEAD', sessionUrl('reads', 1), { token: user.token });
    expect(head.status).toBe(200);
    expect(head.headers.etag).toBe(etag);
    expect(Number(head.headers['content-length'])).toBe(Buffer.byteLength(md));
    const again = await app.request('GET', sessionUrl('reads', 1), { token: user.token, headers: { 'If-None-Match': etag } });
    expect(again.status).toBe(304);

    const gql = await app.request('POST', '/api/v1/graphql', {
      token: user.token,
      body: { query: `query { session(projectId: "reads", id: "${SID(1)}") { etag markdownSize markdownContent } }` },
    });
    expect(gql.status).toBe(200);
    expect(gql.body.errors).toBeUndefined();
    expect(gql.body.data.session).toEqual({ etag, markdownSize: Buffer.byteLength(md), markdownContent: md });
  });

  test('the paged reader reads exchanges by range from the object, with the exchange index stored as an object too', async () => {
    const out = ['# Paged\n\n'];
    for (let i = 1; i <= 300; i++) {
      out.push(`_**User**_\n\nQuestion ${i} about the loop\n\n---\n\n_**Agent (model claude-sonnet-4)**_\n\n${`Answer ${i} waits.\n`.repeat(200)}\n---\n\n`);
    }
    await put('reads', 2, { markdown: out.join('') });
    expect((await objectRows('reads', 2)).map((o) => o.part)).toEqual(expect.arrayContaining(['exchidx', 'markdown']));
    const page = await app.request('GET', `${sessionUrl('reads', 2)}/exchanges?offset=10&limit=3&content=true`, { token: user.token });
    expect(page.status).toBe(200);
    // The title line is the file's header, part of exchange 1: Question i is exchange i.
    expect(page.body.data.total).toBe(300);
    const texts = JSON.stringify(page.body.data.exchanges);
    expect(texts).toContain('Question 11 about');
    expect(texts).toContain('Answer 13 waits.');
    expect(texts).not.toContain('Question 14 about');
    expect(texts).not.toContain('Answer 10 waits.');
    const gql = await app.request('POST', '/api/v1/graphql', {
      token: user.token,
      body: { query: `{ session(id: "${SID(2)}", projectId: "reads") { exchanges(offset: 200, limit: 2) { total exchanges { number markdown } } } }` },
    });
    expect(gql.body.errors).toBeUndefined();
    const ex = gql.body.data.session.exchanges;
    expect(ex.total).toBe(300);
    expect(ex.exchanges.map((e: { number: number }) => e.number)).toEqual([201, 202]);
    expect(ex.exchanges[0].markdown).toContain('Question 201 about');
    expect(ex.exchanges[1].markdown).toContain('Answer 202 waits.');
  });

  test('a part above 8 MiB is written as a multipart upload and read back whole', async () => {
    const big = '# Big\n' + 'abcdefghij'.repeat((MULTIPART_BYTES * 2 + 1234) / 10);
    await put('big', 3, { markdown: big });
    const [o] = (await objectRows('big', 3)).filter((r) => r.part === 'markdown');
    expect(Number(o.size)).toBe(Buffer.byteLength(big));
    expect((await listed(o.objectKey))[0].size).toBe(Buffer.byteLength(big));
    const r = await app.request('GET', sessionUrl('big', 3), { token: user.token, headers: { Accept: 'text/markdown' } });
    expect(r.status).toBe(200);
    expect(r.raw.length).toBe(Buffer.byteLength(big));
    expect(r.text === big).toBe(true);
  }, 120_000);

  test('exports carry the content stored as objects', async () => {
    const r = await app.request('GET', '/api/v1/export', { token: user.token });
    expect(r.status).toBe(200);
    // The markdown of session 1 is somewhere in the tar, whole.
    expect(r.raw.includes(Buffer.from(md))).toBe(true);
  }, 120_000);
});

describe('atomic replace', () => {
  const MD = (i: number) => `# v${i}\n` + String.fromCharCode(0x61 + i).repeat(MiB + i * 300_000) + `\nend v${i}`;
  const versionOf = (text: string) => {
    const m = /^# v(\d+)\n/.exec(text);
    return m && text === MD(Number(m[1])) ? Number(m[1]) : -1;
  };

  test('concurrent reads see the old or the new version, never a mix, and the matching etag', async () => {
    const etags = new Map<string, number>();
    etags.set(await put('atomic', 4, { markdown: MD(0) }), 0);
    let writing = true;
    const writer = (async () => {
      for (let i = 1; i <= 5; i++) etags.set(await put('atomic', 4, { markdown: MD(i) }), i);
      writing = false;
    })();
    const seen: number[] = [];
    const reader = async () => {
      while (writing) {
        const r = await app.request('GET', sessionUrl('atomic', 4), { token: user.token, headers: { Accept: 'text/markdown' } });
        expect(r.status).toBe(200);
        const v = versionOf(r.text);
        expect(v).toBeGreaterThanOrEqual(0);
        // The etag is of the same version as the body (put() records it after the write returns: a read may come first).
        const known = etags.get(String(r.headers.etag));
        if (known !== undefined) expect(known).toBe(v);
        seen.push(v);
      }
    };
    await Promise.all([writer, reader(), reader(), reader()]);
    expect(seen.length).toBeGreaterThan(0);
    const last = await app.request('GET', sessionUrl('atomic', 4), { token: user.token, headers: { Accept: 'text/markdown' } });
    expect(versionOf(last.text)).toBe(5);
  }, 120_000);

  test('replaced objects stay for readers through the grace period; the sweep deletes them after it', async () => {
    const named = new Set((await app.deps.db.reads.query<{ objectKey: string }>('SELECT objectKey FROM session_objects')).map((r) => r.objectKey));
    const before = await listed(`${app.db.name}/content/${SID(4)}/`);
    const replaced = before.filter((o) => !named.has(o.key));
    expect(replaced.length).toBeGreaterThanOrEqual(5);
    // Default grace (an hour): recorded, nothing deleted.
    const kept = await sweepObjects(app.deps.db.writes, contentStore());
    expect(kept.deleted).toBe(0);
    expect((await listed(`${app.db.name}/content/${SID(4)}/`)).length).toBe(before.length);
    // Grace over (0 here): the replaced versions go, the current one stays and reads.
    const swept = await sweepObjects(app.deps.db.writes, contentStore(), { graceMs: 0 });
    expect(swept.deleted).toBeGreaterThanOrEqual(replaced.length);
    const after = (await listed(`${app.db.name}/content/${SID(4)}/`)).map((o) => o.key);
    expect(after.sort()).toEqual(
      before
        .filter((o) => named.has(o.key))
        .map((o) => o.key)
        .sort(),
    );
    const r = await app.request('GET', sessionUrl('atomic', 4), { token: user.token, headers: { Accept: 'text/markdown' } });
    expect(versionOf(r.text)).toBe(5);
  }, 120_000);
});

describe('a crash between the object write and the commit', () => {
  test('leaves no visible change, and the sweep reclaims the objects written', async () => {
    const etag = await put('crash', 5, { markdown: '# before the crash\n', rawData: 'raw before' });
    const prefix = `${app.db.name}/content/${SID(5)}/`;
    const before = (await listed(prefix)).map((o) => o.key).sort();
    // The new objects are uploaded, then the write transaction fails before its commit.
    const staged = await stageContent(SID(5), {
      markdown: Buffer.from('# after the crash\n'),
      raw: Buffer.from('raw after'),
      session: Buffer.from('{"s":1}'),
    });
    await expect(
      inTransaction(app.deps.db, async (tx) => {
        await writeContent(tx, 'crash', staged);
        throw new Error('commit failed');
      }),
    ).rejects.toThrow('commit failed');
    const during = (await listed(prefix)).map((o) => o.key);
    expect(during.length).toBe(before.length + 3);
    // Nothing visible changed.
    const r = await app.request('GET', sessionUrl('crash', 5), { token: user.token, headers: { Accept: 'text/markdown' } });
    expect(r.text).toBe('# before the crash\n');
    expect(r.headers.etag).toBe(etag);
    expect((await app.request('GET', `${sessionUrl('crash', 5)}/raw`, { token: user.token })).text).toBe('raw before');
    // Objects younger than the grace period are left alone (their transaction might still commit).
    expect((await sweepObjects(app.deps.db.writes, contentStore(), { graceMs: 60_000 })).deleted).toBe(0);
    expect((await listed(prefix)).length).toBe(during.length);
    // Past it, the leak is reclaimed, and only the leak.
    await sweepObjects(app.deps.db.writes, contentStore(), { graceMs: 0 });
    expect((await listed(prefix)).map((o) => o.key).sort()).toEqual(before);
    expect((await app.request('GET', sessionUrl('crash', 5), { token: user.token, headers: { Accept: 'text/markdown' } })).text).toBe('# before the crash\n');
    expect(await app.deps.db.reads.query('SELECT * FROM unreferenced_objects')).toEqual([]);
  }, 60_000);

  test('a deleted session leaves its objects to the sweep', async () => {
    await put('gone', 6, { markdown: '# to be deleted\n' });
    const prefix = `${app.db.name}/content/${SID(6)}/`;
    expect((await listed(prefix)).length).toBeGreaterThan(0);
    expect((await app.request('DELETE', sessionUrl('gone', 6), { token: user.token })).status).toBe(200);
    await sweepObjects(app.deps.db.writes, contentStore(), { graceMs: 0 });
    expect(await listed(prefix)).toEqual([]);
  });
});

describe('objects are uploaded before the write transaction', () => {
  /** Holds the next object upload until `release()`; `uploading` resolves when it has begun. */
  function holdNextUpload(): { uploading: Promise<void>; release(): void; restore(): void } {
    const objects = contentStore().objects as ObjectStore & { put: ObjectStore['put'] };
    const real = objects.put.bind(objects);
    let begun!: () => void;
    let release!: () => void;
    const uploading = new Promise<void>((r) => (begun = r));
    const released = new Promise<void>((r) => (release = r));
    objects.put = async (key, body) => {
      objects.put = real;
      begun();
      await released;
      return real(key, body);
    };
    return { uploading, release, restore: () => void (objects.put = real) };
  }
  /** Locks the rows an upload locks, failing at once (NOWAIT) when a transaction holds them. */
  const lockNow = (project: string, n: number) =>
    inTransaction(app.deps.db, async (tx) => {
      await tx.query('SELECT id FROM projects WHERE id = ? FOR UPDATE NOWAIT', project);
      return tx.query<{ id: string }>('SELECT id FROM sessions WHERE projectId = ? AND id = ? FOR UPDATE NOWAIT', project, SID(n));
    });

  test('no lock is held while the objects of an upload travel: the session is written meanwhile, and the upload then completes', async () => {
    await put('slow', 7, { markdown: '# v1\n' });
    const hold = holdNextUpload();
    try {
      const upload = app.request('PUT', sessionUrl('slow', 7), { token: user.token, body: { name: 's7', markdown: '# v2\n' } });
      await hold.uploading;
      expect(await lockNow('slow', 7)).toHaveLength(1);
      const renamed = await app.request('PATCH', sessionUrl('slow', 7), { token: user.token, body: { userTitle: 'renamed meanwhile' } });
      expect(renamed.status).toBe(200);
      hold.release();
      expect((await upload).status).toBe(200);
    } finally {
      hold.restore();
      hold.release();
    }
    const r = await app.request('GET', sessionUrl('slow', 7), { token: user.token });
    expect(r.body.data.session.markdownContent).toBe('# v2\n');
    expect(r.body.data.session.userTitle).toBe('renamed meanwhile');
    const named = (await objectRows('slow', 7)).map((o) => o.objectKey);
    expect(named.length).toBeGreaterThan(0);
    for (const key of named) expect((await listed(key)).map((o) => o.key)).toEqual([key]);
  });

  test('new or changed content is staged before the first transaction, which then commits; unchanged content stages nothing', async () => {
    const prefix = `${app.db.name}/content/${SID(9)}/`;
    // Counts the transactions rolled back (inTransaction takes a connection of its own for each).
    const pool = app.deps.db.pool;
    const real = pool.getConnection.bind(pool);
    const counted = new WeakSet<object>();
    let rollbacks = 0;
    pool.getConnection = async () => {
      const conn = await real();
      if (!counted.has(conn)) {
        counted.add(conn);
        const rollback = conn.rollback.bind(conn);
        conn.rollback = () => {
          rollbacks++;
          return rollback();
        };
      }
      return conn;
    };
    let keys: string[];
    try {
      await put('once', 9, { markdown: '# v1\n' });
      await put('once', 9, { markdown: '# v2, changed\n', rawData: 'raw v2' });
      expect(rollbacks).toBe(0);
      keys = (await listed(prefix)).map((o) => o.key).sort();
      // The same content again: no object is uploaded, and nothing is rolled back either.
      await put('once', 9, { markdown: '# v2, changed\n', rawData: 'raw v2' });
      expect(rollbacks).toBe(0);
    } finally {
      pool.getConnection = real;
    }
    expect((await listed(prefix)).map((o) => o.key).sort()).toEqual(keys);
    const named = (await objectRows('once', 9)).map((o) => o.objectKey);
    expect(named.length).toBeGreaterThan(0);
    for (const key of named) expect(keys).toContain(key);
    const r = await app.request('GET', sessionUrl('once', 9), { token: user.token });
    expect(r.body.data.session.markdownContent).toBe('# v2, changed\n');
  });

  test('an upload whose transaction then fails leaves its objects unnamed, and the sweep reclaims them', async () => {
    const etag = await put('slow', 8, { markdown: '# v1\n' });
    const prefix = `${app.db.name}/content/${SID(8)}/`;
    const before = (await listed(prefix)).map((o) => o.key).sort();
    const hold = holdNextUpload();
    let upload;
    try {
      const pending = app.request('PUT', sessionUrl('slow', 8), { token: user.token, body: { name: 's8', markdown: '# v2\n' }, headers: { 'If-Match': etag } });
      await hold.uploading;
      // Deleted while the new version uploads: the upload's transaction then finds no session to match.
      expect((await app.request('DELETE', sessionUrl('slow', 8), { token: user.token })).status).toBe(200);
      hold.release();
      upload = await pending;
    } finally {
      hold.restore();
      hold.release();
    }
    expect(upload.status).toBe(412);
    expect(await objectRows('slow', 8)).toEqual([]);
    const left = (await listed(prefix)).map((o) => o.key);
    expect(left.filter((k) => !before.includes(k)).length).toBeGreaterThan(0);
    await sweepObjects(app.deps.db.writes, contentStore(), { graceMs: 0 });
    expect(await listed(prefix)).toEqual([]);
  });
});

describe('content migrate', () => {
  let dbApp: TestApp;
  let db: TestDatabase;
  let owner: TestUser;
  const N = 7;
  const body = (i: number) => ({
    name: `m${i}`,
    markdown: `# migrate ${i}\n\n## User\n\nq${i}\n\n## Assistant\n\n${'m'.repeat(i * 700_000)}\n`,
    rawData: i % 2 ? `raw ${i}` : '',
  });

  beforeAll(async () => {
    db = await createTestDatabase('sa_s3m');
    // The database store, with a bucket configured (what the migration moves to).
    dbApp = await startTestApp({ db, rateLimit: false, env: { ...s3Env(s3.endpoint, bucket, 'db'), WORKERS_ENABLED: 'false' } });
    owner = await dbApp.createUser('migrate');
    for (let i = 0; i < N; i++) {
      const r = await dbApp.request('PUT', `/api/v1/projects/mig/sessions/${SID(100 + i)}`, { token: owner.token, body: body(i) });
      expect(r.status).toBe(201);
    }
  }, 120_000);
  afterAll(async () => {
    await dbApp?.close();
    await db?.drop();
  });

  async function readAll(): Promise<void> {
    for (let i = 0; i < N; i++) {
      const url = `/api/v1/projects/mig/sessions/${SID(100 + i)}`;
      const md = await dbApp.request('GET', url, { token: owner.token, headers: { Accept: 'text/markdown' } });
      expect(md.text).toBe(body(i).markdown);
      expect((await dbApp.request('GET', `${url}/raw`, { token: owner.token })).text).toBe(body(i).rawData);
    }
  }
  const count = async (table: string) => Number((await dbApp.deps.db.reads.query<{ n: number }>(`SELECT COUNT(*) AS n FROM ${table}`))[0].n);

  const cli = (...args: string[]) =>
    runCli(args, { databaseUrl: db.url, env: { JWT_SECRET, NAMESPACE: db.name, ...s3Env(s3.endpoint, bucket, 'db') }, timeoutMs: 120_000 });

  test('db → s3, interrupted and resumed, then s3 → db: every read the same throughout, nothing left behind', async () => {
    await readAll();
    const prefix = `${db.name}/content/`;
    expect(await listed(prefix)).toEqual([]);
    // Interrupted after three sessions (a failure in the middle of the run).
    let seen = 0;
    await expect(
      migrateContent(dbApp.deps.db, contentStore(), 's3', (p) => {
        if (p.done === 3 && ++seen === 1) throw new Error('interrupted');
      }),
    ).rejects.toThrow('interrupted');
    const partly = await count('session_objects');
    expect(partly).toBeGreaterThan(0);
    await readAll();
    // Resumed through the CLI: the rest moves, with progress lines.
    const run = await cli('content', 'migrate', '--to', 's3');
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/content migrate --to s3: \d+\/\d+ sessions/);
    expect(run.stdout).toContain('content migrate complete: 4 sessions moved to bucket');
    expect(run.stdout).toContain('note: CONTENT_STORE is db');
    // Every non-empty part is an object now; the chunk rows left are empty parts.
    expect(Number((await dbApp.deps.db.reads.query<{ n: number }>('SELECT COUNT(*) AS n FROM session_chunks WHERE LENGTH(data) > 0'))[0].n)).toBe(0);
    expect(await count('session_objects')).toBeGreaterThan(partly);
    await readAll();
    const paged = await dbApp.request('GET', `/api/v1/projects/mig/sessions/${SID(103)}/exchanges?content=true`, { token: owner.token });
    expect(paged.status).toBe(200);
    expect(JSON.stringify(paged.body.data)).toContain('q3');
    // Run again: nothing to move.
    expect((await cli('content', 'migrate', '--to', 's3')).stdout).toContain('content migrate complete: 0 sessions moved');

    // And back.
    const back = await cli('content', 'migrate', '--to', 'db');
    expect(back.code).toBe(0);
    expect(back.stdout).toContain(`content migrate complete: ${N} sessions moved to the database`);
    expect(await count('session_objects')).toBe(0);
    await readAll();
    // The objects are the sweep's now.
    const sweep = await cli('content', 'sweep', '--grace-minutes', '0');
    expect(sweep.code).toBe(0);
    expect(sweep.stdout).toMatch(/content sweep: \d+ objects listed, \d+ unreferenced deleted/);
    expect(await listed(prefix)).toEqual([]);
    await readAll();
  }, 180_000);

  test('usage errors', async () => {
    const r = await cli('content', 'migrate', '--to', 'disk');
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('usage: content migrate --to s3|db');
  }, 60_000);
});
