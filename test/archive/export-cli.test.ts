/**
 * The admin CLI's export, import and import-remote (docs/export-import.md): the same archive as GET /export, a non-zero exit when entries were reported, a
 * progress bar in a pseudo-terminal and plain lines otherwise, and a copy between two running
 * instances that resumes (a second run copies nothing), several sessions at a time from a source
 * that is slow to answer, its lines still in the source's order.
 */
import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { createUser } from '../../src/services/users';
import { operatorCtx } from '../../src/services/context';
import { startTestApp, type TestApp, type TestUser } from '../support/app';
import { readTar, seedCorpus, sha256, writeTar } from '../support/archive';
import { CLI_MAIN, cliEnv, runCli, TSX, type CliResult } from '../support/cli';
import { ROOT } from '../support/paths';

let a: TestApp;
let b: TestApp;
let ada: TestUser;
let carolEmail: string;
let dir: string;
const P1 = `cli-${crypto.randomUUID().slice(0, 8)}`;
const P2 = `cli2-${crypto.randomUUID().slice(0, 8)}`;
let ids1: string[];

const cli = (app: TestApp, ...args: string[]) => runCli(args, { databaseUrl: app.db.url, env: app.storeEnv, timeoutMs: 180_000 });

/** The CLI in a pseudo-terminal (util-linux `script`): what a person at a terminal sees. */
function cliInTerminal(app: TestApp, ...args: string[]): Promise<CliResult> {
  const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
  const command = [TSX, CLI_MAIN, ...args].map(quote).join(' ');
  return new Promise((resolve) => {
    execFile(
      'script',
      ['-qec', command, '/dev/null'],
      { cwd: ROOT, env: cliEnv(app.db.url, { ...app.storeEnv, TERM: 'xterm', COLUMNS: '160' }), timeout: 180_000 },
      (err, stdout, stderr) => {
        resolve({ code: err ? 1 : 0, stdout: String(stdout), stderr: String(stderr) });
      },
    );
  });
}

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sa-export-cli-'));
  a = await startTestApp({ rateLimit: false });
  b = await startTestApp({ rateLimit: false });
  ada = await a.createUser('Ada');
  ids1 = await seedCorpus(a, ada, P1);
  await seedCorpus(a, ada, P2);
  carolEmail = `carol-${crypto.randomUUID().slice(0, 8)}@example.test`;
  await createUser(operatorCtx(b.deps.db), carolEmail, 'Carol');
}, 120_000);

afterAll(async () => {
  await a?.close();
  await b?.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

test('export --out FILE writes the same archive as GET /export, with plain progress lines off a terminal', async () => {
  const file = path.join(dir, 'ada.tar');
  const r = await cli(a, 'export', '--email', ada.email, '--out', file);
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  expect(r.stdout).toMatch(/^export: 6\/6 sessions, .* of .*, .*\/s, .* left$/m);
  expect(r.stdout).toMatch(new RegExp(`exported 2 projects, 6 sessions of ${ada.email.replace(/[.+]/g, '\\$&')} \\(.*\\) to `));
  expect(r.stdout).not.toMatch(/\u001b\[/);
  const viaRest = await a.request('GET', '/api/v1/export', { token: ada.token });
  expect(sha256(fs.readFileSync(file))).toBe(sha256(viaRest.raw));
  expect(fs.existsSync(`${file}.partial`)).toBe(false);

  const one = path.join(dir, 'p1.tar');
  expect((await cli(a, 'export', '--email', ada.email, '--project', P1, '--out', one)).code).toBe(0);
  const entries = await readTar(fs.readFileSync(one));
  expect(JSON.parse(entries[0].data.toString('utf8')).projects).toBe(1);
  expect((await cli(a, 'export', '--email', 'nobody@example.test', '--out', one)).code).toBe(2);
}, 300_000);

test('in a terminal: a progress bar with sessions, bytes, rate and time left', async () => {
  const file = path.join(dir, 'tty.tar');
  const r = await cliInTerminal(a, 'export', '--email', ada.email, '--out', file);
  expect(r.code).toBe(0);
  const screen = r.stdout;
  expect(screen).toMatch(/export \|[█░]+\| 100% \| 6\/6 sessions \| [\d.]+ [KM]?B\/[\d.]+ [KM]?B \| [\d.]+ [KM]?B\/s \| ETA/);
  expect(screen).toMatch(/exported 2 projects, 6 sessions/);
  expect(sha256(fs.readFileSync(file))).toBe(sha256(fs.readFileSync(path.join(dir, 'ada.tar'))));
}, 300_000);

test('import-remote copies from a running server through its REST API, and a second run copies nothing', async () => {
  const first = await cli(b, 'import-remote', '--from', a.url, '--token', ada.token, '--email', carolEmail, '--project', P1);
  expect(first.stderr).toBe('');
  expect(first.code).toBe(0);
  expect(first.stdout).toMatch(/copied 3 sessions \(0 already here\), 1 new project/);
  // Every session reads back as on the source: content, raw data, session data, times, title, tags, metadata, tag.
  const carolKey = await b.newKey({ id: (await b.deps.db.reads.query<{ id: string }>('SELECT id FROM users WHERE email = ?', carolEmail))[0].id });
  for (const id of ids1) {
    for (const [accept, suffix] of [
      ['application/json', ''],
      ['application/vnd.specstory.session-data+json', ''],
      ['application/octet-stream', '/raw'],
    ]) {
      const src = await a.request('GET', `/api/v1/projects/${P1}/sessions/${id}${suffix}`, { token: ada.token, headers: { Accept: accept } });
      const dst = await b.request('GET', `/api/v1/projects/${P1}/sessions/${id}${suffix}`, { token: carolKey.token, headers: { Accept: accept } });
      expect(dst.status).toBe(src.status);
      expect(dst.headers.etag).toBe(src.headers.etag);
      if (accept === 'application/json') {
        // Who uploaded it and who owns the project are accounts of each server; the rest must match.
        expect(withoutAccountIds(dst.body)).toEqual(withoutAccountIds(src.body));
      } else {
        expect(dst.raw.equals(src.raw)).toBe(true);
      }
    }
  }
  const again = await cli(b, 'import-remote', '--from', a.url, '--token', ada.token, '--email', carolEmail, '--project', P1);
  expect(again.code).toBe(0);
  expect(again.stdout).toMatch(/copied 0 sessions \(3 already here\), 0 new projects/);

  const missing = await cli(b, 'import-remote', '--from', a.url, '--token', ada.token, '--email', carolEmail, '--project', 'no-such-project');
  expect(missing.code).toBe(1);
  expect(missing.stdout).toMatch(/could not copy: project no-such-project: not found on the source/);
}, 300_000);

test('import-remote does not overwrite the sessions of a project on legal hold: it reports them, and the copies stay as they were', async () => {
  const carol = (await b.deps.db.reads.query<{ id: string }>('SELECT id FROM users WHERE email = ?', carolEmail))[0];
  const carolKey = await b.newKey(carol);
  const admin = await createUser(operatorCtx(b.deps.db), `root-${crypto.randomUUID().slice(0, 8)}@example.test`, 'Root', { role: 'admin' });
  const rootKey = await b.newKey(admin);
  const copy = () => b.request('GET', `/api/v1/projects/${P1}/sessions/${ids1[0]}`, { token: carolKey.token });
  const before = await copy();
  // Changed at the source: the next run would overwrite the copy.
  const renamed = await a.request('PATCH', `/api/v1/projects/${P1}/sessions/${ids1[0]}`, { token: ada.token, body: { userTitle: 'Renamed at the source' } });
  expect(renamed.status).toBe(200);
  const hold = (legalHold: boolean) => b.request('PATCH', `/api/v1/projects/${P1}`, { token: rootKey.token, body: { legalHold } });
  expect((await hold(true)).status).toBe(200);
  const held = await cli(b, 'import-remote', '--from', a.url, '--token', ada.token, '--email', carolEmail, '--project', P1);
  expect(held.code).toBe(1);
  expect(held.stdout).toMatch(/Project is on legal hold/);
  const after = await copy();
  expect([after.headers.etag, after.body.data.session.userTitle]).toEqual([before.headers.etag, before.body.data.session.userTitle]);
  expect((await hold(false)).status).toBe(200);
  const lifted = await cli(b, 'import-remote', '--from', a.url, '--token', ada.token, '--email', carolEmail, '--project', P1);
  expect(lifted.code).toBe(0);
  expect(lifted.stdout).toMatch(/copied 1 session/);
  expect((await copy()).body.data.session.userTitle).toBe('Renamed at the source');
}, 300_000);

test('import-remote copies --concurrency sessions at a time from a slow source; what it prints keeps the source order', async () => {
  const projectId = `slow-${crypto.randomUUID().slice(0, 8)}`;
  const ids: string[] = Array.from({ length: 8 }, () => crypto.randomUUID()).sort();
  // Sessions 2 and 6 say they have raw data the source does not serve: one line each.
  const rawless = new Set([ids[2], ids[6]]);
  const session = (id: string) => ({
    id,
    name: `s-${id.slice(0, 8)}`,
    markdownSize: 9,
    rawDataSize: rawless.has(id) ? 5 : 0,
    updatedAt: '2026-01-01T00:00:00.000Z',
  });
  let inFlight = 0;
  let most = 0;
  const held: Array<() => void> = [];
  // A session's JSON is answered once `want` of them are asked at the same time, or after 2 s:
  // a copy one at a time is never seen with more than one in flight.
  let want = 4;
  const source = http.createServer((req, res) => {
    const url = req.url ?? '';
    const json = (data: unknown) => {
      res.setHeader('Content-Type', 'application/json');
      res.end(JSON.stringify({ success: true, data }));
    };
    if (url === '/api/v1/projects') return json({ projects: [{ id: projectId, name: 'Slow' }] });
    if (url === `/api/v1/projects/${projectId}/sessions`) return json({ sessions: ids.map(session) });
    const m = url.match(/^\/api\/v1\/projects\/[^/]+\/sessions\/([0-9a-f-]{36})$/);
    if (m) {
      inFlight++;
      most = Math.max(most, inFlight);
      const answer = () => {
        inFlight--;
        json({ session: { ...session(m[1]), markdownContent: '# copied\n' } });
      };
      held.push(answer);
      const release = () => held.splice(0).forEach((f) => f());
      if (held.length >= want) release();
      else setTimeout(() => held.includes(answer) && (held.splice(held.indexOf(answer), 1), answer()), 2000);
      return;
    }
    res.statusCode = 404;
    res.end(JSON.stringify({ success: false, error: 'Not found' }));
  });
  await new Promise<void>((r) => source.listen(0, '127.0.0.1', r));
  try {
    const from = `http://127.0.0.1:${(source.address() as { port: number }).port}`;
    const bad = await cli(b, 'import-remote', '--from', from, '--token', 't', '--email', carolEmail, '--concurrency', '0');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--concurrency must be an integer from 1 to 16');

    const r = await cli(b, 'import-remote', '--from', from, '--token', 't', '--email', carolEmail, '--project', projectId, '--concurrency', '4');
    expect(r.code).toBe(0);
    expect(most).toBe(4);
    expect(r.stdout).toContain('copied 8 sessions (0 already here), 1 new project');
    const notCopied = r.stdout.split('\n').filter((l) => l.startsWith('not copied: '));
    expect(notCopied).toEqual([ids[2], ids[6]].map((id) => `not copied: ${projectId}/"${id}": raw data not copied (the source does not serve it: 404)`));
    const copied = await b.deps.db.reads.query<{ id: string }>('SELECT id FROM sessions WHERE projectId = ? ORDER BY id', projectId);
    expect(copied.map((x) => x.id)).toEqual(ids);

    // One at a time, when asked: never two in flight (each of the two new sessions waits out its 2 s).
    most = 0;
    want = 2;
    ids.push(crypto.randomUUID(), crypto.randomUUID());
    const serial = await cli(b, 'import-remote', '--from', from, '--token', 't', '--email', carolEmail, '--project', projectId, '--concurrency', '1');
    expect(serial.code).toBe(0);
    expect(serial.stdout).toContain('copied 2 sessions (8 already here), 0 new projects');
    expect(most).toBe(1);
  } finally {
    held.splice(0).forEach((f) => f());
    await new Promise((r) => source.close(r));
  }
});

test('import FILE: the summary, and a non-zero exit when entries were reported', async () => {
  const file = path.join(dir, 'ada.tar');
  const r = await cli(b, 'import', file, '--email', carolEmail);
  expect(r.code).toBe(0);
  // P1 came by import-remote already: its sessions are skipped; P2 is new.
  expect(r.stdout).toMatch(/projects: 1 created, 1 existing; sessions: 3 created, 0 updated, 3 skipped, 0 not imported; 0 errors/);

  const entries = await readTar(fs.readFileSync(file));
  const tampered = path.join(dir, 'tampered.tar');
  fs.writeFileSync(
    tampered,
    await writeTar(
      entries.map((e) => ({
        name: e.name,
        type: e.type as 'file',
        data: e.name.endsWith(`${ids1[1]}/markdown.md`) ? Buffer.from(e.data.toString('utf8').toUpperCase()) : e.data,
      })),
    ),
  );
  const bad = await cli(b, 'import', tampered, '--email', carolEmail, '--on-conflict', 'overwrite');
  expect(bad.code).toBe(1);
  expect(bad.stdout).toMatch(new RegExp(`error: projects/${P1}/sessions/${ids1[1]}/markdown.md: sha256 does not match the manifest`));
  expect(bad.stderr).toMatch(/import finished with 1 error/);
  expect((await cli(b, 'import', file, '--email', carolEmail, '--on-conflict', 'sideways')).code).toBe(2);
}, 300_000);

/** A session's JSON without its accounts (uploader, project owner): the copy belongs to the importing account. */
function withoutAccountIds(body: unknown): unknown {
  return JSON.parse(JSON.stringify(body), (key, value: unknown) => (key === 'owner' || key === 'uploadedBy' ? undefined : value));
}
