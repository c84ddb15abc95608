/**
 * Large inputs are handled off the event loop: a session upload from 1 MiB up is
 * parsed, validated, redacted and hashed on a worker thread, other large bodies are parsed there,
 * and the search worker builds a large session's index documents there. Each path must give
 * exactly what the inline path gives: same stored bytes, same findings, same 4xx messages, same
 * Idempotency-Key behaviour, same index documents.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { usageOfRaw } from '../../src/domain/upload';
import * as records from '../../src/domain/usage/records';
import { SHIPPED_PRICES } from '../../src/domain/usage';
import { AppError } from '../../src/errors';
import { createOffload, inlineOffload, OFFLOAD_MIN_BYTES, ownedBuffer, release } from '../../src/offload';
import { toDocuments } from '../../src/domain/search-documents';
import { startTestApp, type TestApp, type TestUser } from '../support/app';
import { newSessionId, startSearchHarness, type SearchHarness } from '../support/meili-harness';

jest.setTimeout(120_000);

const CLAUDE_LOG = path.join(__dirname, '../fixtures/usage/claude/projects/-work-demo/3f1c2a9e-6b1d-4c55-9a57-1d2e8f0a4b61.jsonl');

// Fixed filler (random base64 could hold a run the redactor rightly masks).
const line = (i: number) => `step ${i}: the parser reads the config and the tests pass again, quokka${i % 50}\n`;
const filler = (bytes: number) => {
  const out: string[] = [];
  let n = 0;
  for (let i = 0; n < bytes; i++) {
    const l = line(i);
    out.push(l);
    n += l.length;
  }
  return out.join('');
};
const GITHUB_PAT = 'ghp_' + 'R8xk2LmQ9pT4vW7nY3bZ6cF1hJ5sD0gA2eK8';
const big = `# Big session\n\nMy token is ${GITHUB_PAT} please keep it.\n\n${filler(OFFLOAD_MIN_BYTES * 3)}`;

describe('the pool gives what the inline path gives', () => {
  const pool = createOffload({ threads: 1 });
  afterAll(() => pool.close());

  const body = Buffer.from(JSON.stringify({ name: 'big', markdown: big, rawData: `{"k":"${GITHUB_PAT}"}\n`, startedAt: '2026-01-02T03:04:05Z' }));

  test('prepareUploadJson: same redacted bytes, findings and digests; Buffers and Dates come back as such', async () => {
    const inline = await inlineOffload.prepareUploadJson(Buffer.from(body), 'on');
    const threaded = await pool.prepareUploadJson(Buffer.from(body), 'on');
    expect(Buffer.isBuffer(threaded.upload.markdown)).toBe(true);
    expect(Buffer.isBuffer(threaded.upload.rawData)).toBe(true);
    expect(threaded.upload.startedAt).toBeInstanceOf(Date);
    expect(threaded.upload.markdown.equals(inline.upload.markdown)).toBe(true);
    expect(threaded.upload.markdown.includes(GITHUB_PAT)).toBe(false);
    expect(threaded.upload.markdown.length).toBe(Buffer.byteLength(big));
    expect(threaded.findings).toEqual(inline.findings);
    expect(threaded.findings).toMatchObject({ 'github-token': 2 });
    expect(threaded.contentDigest).toBe(inline.contentDigest);
  });

  test('bytes in pieces of their own move to the thread (not copied) and give the same result', async () => {
    const inline = await inlineOffload.prepareUploadJson(Buffer.from(body), 'on');
    const pieces: Buffer[] = [];
    for (let at = 0; at < body.length; at += 300_000) {
      const part = body.subarray(at, at + 300_000);
      const own = ownedBuffer(part.length);
      part.copy(own);
      pieces.push(own);
    }
    const threaded = await pool.prepareUploadJson(pieces, 'on');
    expect(threaded.upload.markdown.equals(inline.upload.markdown)).toBe(true);
    expect(threaded.contentDigest).toBe(inline.contentDigest);
    // Moved: the pieces' memory now belongs to the thread.
    expect(pieces.every((p) => p.length === 0)).toBe(true);
    // A view into memory it does not own alone is copied, never moved (it would take the rest
    // of that memory with it).
    const host = Buffer.alloc(body.length + 10);
    body.copy(host, 5);
    const view = host.subarray(5, 5 + body.length);
    expect(await pool.parseJson([view])).toMatchObject({ name: 'big' });
    expect(view.length).toBe(body.length);
  });

  test('release frees buffers of their own and those moved back from the thread, and leaves any other alone', async () => {
    const threaded = await pool.prepareUploadJson(Buffer.from(body), 'on');
    const own = ownedBuffer(1000);
    const shared = Buffer.from('pooled bytes');
    const host = Buffer.alloc(100);
    const view = host.subarray(10, 20);
    release(threaded.upload.markdown, own, shared, view, null, undefined);
    expect(threaded.upload.markdown.length).toBe(0);
    expect(threaded.upload.markdown.buffer.byteLength).toBe(0);
    expect(own.length).toBe(0);
    expect(shared.toString()).toBe('pooled bytes');
    expect(view.length).toBe(10);
    expect(host.length).toBe(100);
    // Twice is harmless.
    release(own);
    expect(own.length).toBe(0);
  });

  test('a client mistake crosses the thread as the same AppError', async () => {
    const bad = Buffer.concat([Buffer.from('{"name": "x", "markdown": "'), Buffer.alloc(OFFLOAD_MIN_BYTES, 'a'), Buffer.from('"')]);
    await expect(pool.prepareUploadJson(bad, 'on')).rejects.toMatchObject({ code: 'VALIDATION_ERROR', message: 'Invalid JSON in request body' });
    const noName = Buffer.from(JSON.stringify({ markdown: big }));
    const err = await pool.prepareUploadJson(noName, 'on').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect(err).toMatchObject({ code: 'VALIDATION_ERROR', message: 'Missing required field: name' });
  });

  test("a small upload is prepared inline, its raw log's usage read on a thread, with the same result", async () => {
    const raw = fs.readFileSync(CLAUDE_LOG);
    const small = Buffer.from(JSON.stringify({ name: 'small', markdown: '# Small', rawData: raw.toString('utf8') }));
    const parts = () => ({ json: { name: 'small', metadata: {} } as never, markdown: Buffer.from('# Small'), raw: Buffer.from(raw), sessionData: null });
    const expected = usageOfRaw(raw, SHIPPED_PRICES);
    expect(expected?.totalTokens).toBeGreaterThan(0);
    // Every line of the log passes the main thread's copy of this function when read here; the
    // pool's threads load their own.
    const reader = jest.spyOn(records, 'claudeEntry');
    try {
      const threaded = [
        await pool.prepareUploadJson(Buffer.from(small), 'on', SHIPPED_PRICES),
        await pool.prepareUpload(JSON.parse(small.toString('utf8')), 'on', SHIPPED_PRICES),
        await pool.prepareImport(parts(), 'on', SHIPPED_PRICES),
      ];
      for (const p of threaded) expect(p.usage).toEqual(expected);
      expect(await pool.usage(Buffer.alloc(0), SHIPPED_PRICES)).toBeNull();
      expect(reader).not.toHaveBeenCalled();
      // Inline (OFFLOAD_THREADS=0) it is read here: the spy sees it.
      expect((await inlineOffload.prepareUploadJson(Buffer.from(small), 'on', SHIPPED_PRICES)).usage).toEqual(expected);
      expect(reader).toHaveBeenCalled();
    } finally {
      reader.mockRestore();
    }
  });

  test("an archive's bad session crosses as the same VALIDATION_ERROR; a fault keeps its own name, on the thread and inline", async () => {
    const json = { name: 'x', userTitle: null, metadata: {}, tags: [], startedAt: null, endedAt: null } as never;
    const parts = () => ({ json, markdown: Buffer.concat([Buffer.from(big), Buffer.from([0xff])]), raw: Buffer.alloc(0), sessionData: null });
    for (const runner of [pool, inlineOffload]) {
      const mistake = await runner.prepareImport(parts(), 'on').catch((e: unknown) => e);
      expect(mistake).toBeInstanceOf(AppError);
      expect(mistake).toMatchObject({ code: 'VALIDATION_ERROR', message: 'markdown.md is not valid UTF-8' });
      // A fault of the service, provoked: no session.json at all (the import never sends one so).
      const fault = await runner.prepareImport({ ...parts(), markdown: Buffer.from(big), json: null as never }, 'on').catch((e: unknown) => e);
      expect(fault).toBeInstanceOf(Error);
      expect(fault).not.toBeInstanceOf(AppError);
      expect(fault).toMatchObject({ name: 'TypeError' });
    }
  });

  test('documents: the same documents as toDocuments, minus those the index already has', async () => {
    const row = {
      projectId: 'p',
      id: newSessionId(),
      userId: 'u',
      name: 'big',
      createdAt: new Date('2026-01-01T00:00:00Z'),
      clientName: null,
      agentName: null,
      deviceId: null,
      metadataJson: '{"llmModels":[],"tags":[],"gitBranches":[]}',
      hasGitBranches: false,
      contentDigest: 'd',
    };
    const expected = toDocuments(row, big, 7);
    expect(expected.length).toBeGreaterThan(100);
    const have = new Map(expected.slice(0, 10).map((d) => [d.id, d.hash]));
    const built = await pool.documents({ row, markdown: Buffer.from(big), syncedAt: 7, have, force: false, batchBytes: 256 * 1024 });
    expect(built.ids).toEqual(expected.map((d) => d.id));
    expect(built.batches.length).toBeGreaterThan(1);
    const pushed = built.batches.flatMap((b) => JSON.parse(Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('utf8')));
    expect(built.count).toBe(pushed.length);
    expect(pushed).toEqual(JSON.parse(JSON.stringify(expected.slice(10))));
  });
});

describe('HTTP: large bodies', () => {
  let app: TestApp;
  let user: TestUser;
  beforeAll(async () => {
    app = await startTestApp();
    user = await app.createUser('offload');
  });
  afterAll(() => app?.close());

  test('a large upload is stored redacted, whole, with its findings', async () => {
    const sid = crypto.randomUUID();
    const put = await app.request('PUT', `/api/v1/projects/offload/sessions/${sid}`, { token: user.token, body: { name: 'big', markdown: big } });
    expect(put.status).toBe(201);
    const md = await app.request('GET', `/api/v1/projects/offload/sessions/${sid}`, { token: user.token, headers: { Accept: 'text/markdown' } });
    expect(md.status).toBe(200);
    expect(Buffer.byteLength(md.text)).toBe(Buffer.byteLength(big));
    expect(md.text).not.toContain(GITHUB_PAT);
    expect(md.text.slice(-200)).toBe(big.slice(-200));
    const json = await app.request('GET', `/api/v1/projects/offload/sessions/${sid}`, { token: user.token });
    expect(json.body.data.session.redactions).toEqual([{ rule: 'github-token', count: 1 }]);
    // The identical re-upload is a no-op (same tag), as for a small one.
    const again = await app.request('PUT', `/api/v1/projects/offload/sessions/${sid}`, { token: user.token, body: { name: 'big', markdown: big } });
    expect(again.status).toBe(200);
    expect(again.headers.etag).toBe(put.headers.etag);
  });

  test('client mistakes in large bodies: the same 400s as in small ones', async () => {
    const sid = crypto.randomUUID();
    const path = `/api/v1/projects/offload/sessions/${sid}`;
    const broken = Buffer.from(JSON.stringify({ name: 'x', markdown: big }).slice(0, -2));
    const a = await app.request('PUT', path, { token: user.token, body: broken, headers: { 'Content-Type': 'application/json' } });
    expect(a).toMatchObject({ status: 400, body: { success: false, error: 'Invalid JSON in request body' } });
    const b = await app.request('PUT', path, { token: user.token, body: { markdown: big } });
    expect(b).toMatchObject({ status: 400, body: { success: false, error: 'Missing required field: name' } });
    // Another route's large body is parsed on a thread too, then validated by its route.
    const c = await app.request('POST', '/api/v1/keys', { token: user.token, body: { name: big } });
    expect(c.status).toBe(400);
    expect(c.body.success).toBe(false);
    const d = await app.request('POST', '/api/v1/keys', { token: user.token, body: broken, headers: { 'Content-Type': 'application/json' } });
    expect(d).toMatchObject({ status: 400, body: { success: false, error: 'Invalid JSON in request body' } });
    expect((await app.request('GET', path, { token: user.token })).status).toBe(404);
  });

  test('Idempotency-Key on a large upload: the repeat is replayed, another body with the key → 422', async () => {
    const sid = crypto.randomUUID();
    const path = `/api/v1/projects/offload/sessions/${sid}`;
    const headers = { 'Idempotency-Key': `k-${sid}` };
    const first = await app.request('PUT', path, { token: user.token, body: { name: 'big', markdown: big }, headers });
    expect(first.status).toBe(201);
    const again = await app.request('PUT', path, { token: user.token, body: { name: 'big', markdown: big }, headers });
    expect(again.status).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    const other = await app.request('PUT', path, { token: user.token, body: { name: 'big2', markdown: big }, headers });
    expect(other.status).toBe(422);
  });
});

describe('search: a large session is indexed through the pool', () => {
  let h: SearchHarness;
  const pool = createOffload({ threads: 1 });
  beforeAll(async () => {
    h = await startSearchHarness({ offload: pool });
  });
  afterAll(async () => {
    await h?.close();
    await pool.close();
  });

  test('its words are found, and its fragments are those toDocuments makes', async () => {
    const ctx = await h.user();
    const sid = newSessionId();
    const markdown = `${big}\nthe closing word is zanzibarquill\n`;
    await h.put(ctx, 'offload-search', sid, { name: 'big', markdown });
    await h.settle();
    const found = await h.find(ctx, 'zanzibarquill');
    expect(found.results.map((r) => r.sessionId)).toEqual([sid]);
    const frags = await h.fragments('offload-search', sid);
    expect(frags.length).toBeGreaterThan(100);
    expect(frags.some((f) => f.hash === 'tombstone')).toBe(false);
  });
});
