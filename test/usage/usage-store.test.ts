/**
 * What a session cost, stored: usage read from the raw log at each write (REST upload, a large
 * upload prepared on a worker thread, an archive import), replacing the session's rows and its
 * cost; and `usage recompute`, which reads the stored logs again in batches (the admin CLI's
 * command with the content in a bucket).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { readUsage, SHIPPED_PRICES, type SessionUsage } from '../../src/domain/usage';
import { priceTableOf } from '../../src/domain/usage/prices';
import { recomputeUsage } from '../../src/services/usage';
import { SID, startTestApp, type TestApp, type TestUser } from '../support/app';
import { runCli } from '../support/cli';
import { createTestDatabase } from '../support/db';
import { trackDir, untrackDir } from '../support/processes';
import { bucketFor, createBucket, s3Env, startS3rver, type TestS3 } from '../support/s3';
import { FIXTURES as FIXTURE_ROOT } from '../support/paths';

const FIXTURES = path.join(FIXTURE_ROOT, 'usage');
const CLAUDE = fs.readFileSync(path.join(FIXTURES, 'claude/projects/-work-demo/3f1c2a9e-6b1d-4c55-9a57-1d2e8f0a4b61.jsonl'), 'utf8');
const CODEX = fs.readFileSync(path.join(FIXTURES, 'codex/rollout-2026-11-20T11-00-00-0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b.jsonl'), 'utf8');
const UNKNOWN = `${JSON.stringify({
  type: 'assistant',
  requestId: 'req_1',
  message: { id: 'msg_1', model: 'acme-model-9', usage: { input_tokens: 10, output_tokens: 5 } },
})}\n`;

let app: TestApp;
let a: TestUser;

beforeAll(async () => {
  // Two threads: bodies from 1 MiB up are prepared (and their usage read) on one of them.
  app = await startTestApp({ env: { OFFLOAD_THREADS: '1' } });
  a = await app.createUser('usage');
});
afterAll(() => app?.close());

interface Row {
  model: string;
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  costUsd: number | null;
}

const rowsOf = (projectId: string, sessionId: string) =>
  app.deps.db.writes.query<Row>(
    'SELECT model, inputTokens, outputTokens, cacheReadTokens, cacheWriteTokens, costUsd FROM session_usage WHERE projectId = ? AND sessionId = ? ORDER BY model',
    projectId,
    sessionId,
  );
const costOf = async (projectId: string, sessionId: string) =>
  (await app.deps.db.writes.query<{ costUsd: number | null }>('SELECT costUsd FROM sessions WHERE projectId = ? AND id = ?', projectId, sessionId))[0]?.costUsd;

/** The rows a log's usage should be stored as. */
const expected = (u: SessionUsage | null) =>
  (u?.byModel ?? []).map((m) => ({
    model: m.model,
    inputTokens: m.inputTokens,
    outputTokens: m.outputTokens,
    cacheReadTokens: m.cacheReadTokens,
    cacheWriteTokens: m.cacheWriteTokens,
    costUsd: m.costUsd,
  }));

describe('at upload', () => {
  test('a Claude Code log: its models and cost as the reader counts them; each new upload replaces them', async () => {
    const want = await readUsage(CLAUDE, SHIPPED_PRICES);
    expect(want?.byModel.length).toBeGreaterThan(1);
    await app.upload(a, 'usage-up', SID(1), { name: 's', markdown: '# m', rawData: CLAUDE });
    expect(await rowsOf('usage-up', SID(1))).toEqual(expected(want));
    expect(await costOf('usage-up', SID(1))).toBeCloseTo(want!.costUsd!, 10);

    // Another log replaces the rows (no Claude model is left).
    const codex = await readUsage(CODEX, SHIPPED_PRICES);
    await app.upload(a, 'usage-up', SID(1), { name: 's', markdown: '# m', rawData: CODEX });
    expect(await rowsOf('usage-up', SID(1))).toEqual(expected(codex));
    expect((await rowsOf('usage-up', SID(1))).some((r) => r.model.startsWith('claude'))).toBe(false);

    // A log without usage: no rows, no cost.
    await app.upload(a, 'usage-up', SID(1), { name: 's', markdown: '# m', rawData: 'plain text\n' });
    expect(await rowsOf('usage-up', SID(1))).toEqual([]);
    expect(await costOf('usage-up', SID(1))).toBeNull();
  });

  test('a model without a price: its tokens are stored, its cost and the session’s are null', async () => {
    await app.upload(a, 'usage-up', SID(2), { name: 's', markdown: '# m', rawData: CLAUDE + UNKNOWN });
    const rows = await rowsOf('usage-up', SID(2));
    expect(rows.find((r) => r.model === 'acme-model-9')).toEqual({
      model: 'acme-model-9',
      inputTokens: 10,
      outputTokens: 5,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
      costUsd: null,
    });
    expect(rows.filter((r) => r.costUsd !== null).length).toBeGreaterThan(0);
    expect(await costOf('usage-up', SID(2))).toBeNull();
  });

  test('a large upload (prepared on a worker thread) stores the same usage', async () => {
    const filler = `${JSON.stringify({ type: 'user', message: { content: 'x'.repeat(1000) } })}\n`.repeat(1200);
    const raw = filler + CLAUDE + filler;
    expect(Buffer.byteLength(raw)).toBeGreaterThan(1024 * 1024);
    await app.upload(a, 'usage-up', SID(3), { name: 's', markdown: '# m', rawData: raw });
    expect(await rowsOf('usage-up', SID(3))).toEqual(expected(await readUsage(CLAUDE, SHIPPED_PRICES)));
  });

  test('deleting the session deletes its rows', async () => {
    await app.upload(a, 'usage-del', SID(4), { name: 's', markdown: '# m', rawData: CODEX });
    expect((await rowsOf('usage-del', SID(4))).length).toBeGreaterThan(0);
    expect((await app.request('DELETE', `/api/v1/projects/usage-del/sessions/${SID(4)}`, { token: a.token })).status).toBeLessThan(300);
    expect(await rowsOf('usage-del', SID(4))).toEqual([]);
  });

  test('an archive import stores the usage of the imported logs', async () => {
    const u = await app.createUser('usage-import');
    await app.upload(u, 'usage-imp', SID(5), { name: 's', markdown: '# m', rawData: CLAUDE });
    const archive = (await app.request('GET', '/api/v1/export', { token: u.token })).raw;
    expect((await app.request('DELETE', '/api/v1/projects/usage-imp', { token: u.token })).status).toBeLessThan(300);
    expect(await rowsOf('usage-imp', SID(5))).toEqual([]);
    const res = await app.request('POST', '/api/v1/import', { token: u.token, body: archive, headers: { 'Content-Type': 'application/x-tar' } });
    expect(res.status).toBe(200);
    expect(await rowsOf('usage-imp', SID(5))).toEqual(expected(await readUsage(CLAUDE, SHIPPED_PRICES)));
  });
});

describe('usage recompute', () => {
  test('reads every stored log again in batches, at the prices given; goes on after a given session', async () => {
    const u = await app.createUser('usage-recompute');
    for (let i = 0; i < 5; i++) await app.upload(u, 'usage-rc', SID(10 + i), { name: 's', markdown: '# m', rawData: i % 2 ? CODEX : CLAUDE });
    // As if stored before usage was read: no rows, no cost.
    await app.deps.db.writes.execute("DELETE FROM session_usage WHERE projectId = 'usage-rc'");
    await app.deps.db.writes.execute("UPDATE sessions SET costUsd = NULL WHERE projectId = 'usage-rc'");

    // New prices: every Claude Sonnet token costs 1 USD per million, other models have none.
    const prices = priceTableOf({ models: { 'claude-sonnet-4-5': { input: 1, output: 1, cacheRead: 1, cacheWrite: 1 } } });
    const batches: number[] = [];
    const done = await recomputeUsage(app.deps, { prices, batch: 2, onBatch: (p) => batches.push(p.sessions) });
    // Every session of the instance, two per batch.
    const total = (await app.deps.db.writes.query<{ n: number }>('SELECT COUNT(*) AS n FROM sessions'))[0].n;
    expect(done.sessions).toBe(total);
    expect(batches[0]).toBe(2);
    expect(batches.at(-1)).toBe(total);

    const want = await readUsage(CLAUDE, prices);
    expect(await rowsOf('usage-rc', SID(10))).toEqual(expected(want));
    const sonnet = want!.byModel.find((m) => m.model.startsWith('claude-sonnet-4-5'))!;
    expect(sonnet.costUsd).toBeCloseTo((sonnet.inputTokens + sonnet.outputTokens + sonnet.cacheReadTokens + sonnet.cacheWriteTokens) / 1e6, 12);
    // A model the new table does not price: cost null, the session's too.
    expect(await costOf('usage-rc', SID(10))).toBeNull();
    expect(await rowsOf('usage-rc', SID(11))).toEqual(expected(await readUsage(CODEX, prices)));

    // Started after a session: only the ones after it.
    await app.deps.db.writes.execute("DELETE FROM session_usage WHERE projectId = 'usage-rc'");
    const rest = await recomputeUsage(app.deps, { prices: SHIPPED_PRICES, after: { projectId: 'usage-rc', sessionId: SID(12) } });
    expect(await rowsOf('usage-rc', SID(12))).toEqual([]);
    expect(await rowsOf('usage-rc', SID(13))).toEqual(expected(await readUsage(CODEX, SHIPPED_PRICES)));
    expect(rest.sessions).toBeLessThan(total);
  });
});

describe('usage recompute (admin CLI), content in a bucket', () => {
  let s3: TestS3;
  let s3App: TestApp;
  let dir: string;
  const JWT_SECRET = 'test-secret-that-is-long-enough';

  beforeAll(async () => {
    s3 = await startS3rver();
    const db = await createTestDatabase('sa_usage');
    const bucket = bucketFor(db.name);
    await createBucket(s3.endpoint, bucket);
    s3App = await startTestApp({ db, rateLimit: false, env: { ...s3Env(s3.endpoint, bucket), WORKERS_ENABLED: 'false' } });
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sa-usage-cli-'));
    trackDir(dir);
  }, 120_000);
  afterAll(async () => {
    await s3App?.close();
    await s3App?.db.drop();
    await s3?.close();
    if (dir) {
      fs.rmSync(dir, { recursive: true, force: true });
      untrackDir(dir);
    }
  }, 120_000);

  test('reads the logs from the bucket at PRICES_FILE’s prices, a line per batch; --after goes on from a session; bad options → exit 2', async () => {
    const u = await s3App.createUser('usage-cli');
    for (let i = 0; i < 3; i++) await s3App.upload(u, 'usage-cli', SID(20 + i), { name: 's', markdown: '# m', rawData: CLAUDE });
    const objects = await s3App.deps.db.writes.query<{ n: number }>("SELECT COUNT(*) AS n FROM session_objects WHERE projectId = 'usage-cli' AND part = 'raw'");
    expect(objects[0].n).toBe(3);
    await s3App.deps.db.writes.execute('DELETE FROM session_usage');

    const pricesFile = path.join(dir, 'prices.json');
    const table = { source: 'test table', date: '2026-11-28', models: { 'claude-sonnet-4-5': { input: 2, output: 2, cacheRead: 2, cacheWrite: 2 } } };
    fs.writeFileSync(pricesFile, JSON.stringify(table));
    const env = { JWT_SECRET, NAMESPACE: s3App.db.name, ...s3App.storeEnv, PRICES_FILE: pricesFile };
    const run = await runCli(['usage', 'recompute', '--batch', '2'], { databaseUrl: s3App.db.url, env });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const lines = run.stdout.trim().split('\n');
    expect(lines[0]).toBe(`usage recompute: 2 sessions, 2 with usage, last usage-cli/${SID(21)}`);
    expect(lines.at(-1)).toBe('usage recompute complete: 3 sessions read, 3 with usage (prices: test table, 2026-11-28)');
    const want = expected(await readUsage(CLAUDE, priceTableOf(table)));
    for (let i = 0; i < 3; i++) expect(await s3RowsOf(SID(20 + i))).toEqual(want);

    await s3App.deps.db.writes.execute('DELETE FROM session_usage');
    const after = await runCli(['usage', 'recompute', '--after', `usage-cli/${SID(21)}`], { databaseUrl: s3App.db.url, env });
    expect(after.code).toBe(0);
    expect(after.stdout).toContain('usage recompute complete: 1 sessions read');
    expect(await s3RowsOf(SID(21))).toEqual([]);
    expect(await s3RowsOf(SID(22))).toEqual(want);

    for (const bad of [['--batch', '0'], ['--batch', 'x'], ['--after', 'nosession'], ['extra']]) {
      const r = await runCli(['usage', 'recompute', ...bad], { databaseUrl: s3App.db.url, env });
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/--batch|--after|usage: usage recompute/);
    }
  }, 240_000);

  const s3RowsOf = (sessionId: string) =>
    s3App.deps.db.writes.query<Row>(
      'SELECT model, inputTokens, outputTokens, cacheReadTokens, cacheWriteTokens, costUsd FROM session_usage WHERE projectId = ? AND sessionId = ? ORDER BY model',
      'usage-cli',
      sessionId,
    );
});
