/**
 * Imports are bounded and honest (docs/export-import.md): the answer's error list is capped with a
 * count, an oversized manifest is refused before it is read, every text an import writes is
 * redacted (POST /import and import-remote), import-remote takes only ids an upload would take and
 * follows no redirect to another host, and a session the service fails to write is reported as
 * its fault (a database trigger refuses it: a real fault, provoked) with `success: false`.
 */
import crypto from 'node:crypto';
import http from 'node:http';
import { buildCorpus } from '../../scripts/gen-redact-corpus';
import { MANIFEST_MAX_BYTES } from '../../src/domain/archive';
import { startTestApp, type TestApp, type TestUser } from '../support/app';
import { buildArchive, sha256, writeTar } from '../support/archive';
import { runCli } from '../support/cli';

jest.setTimeout(180_000);

const secret = buildCorpus().positives.find((p) => p.format === 'github-pat')!.secret;
const tarHeaders = { 'Content-Type': 'application/x-tar' };
const uuid = () => crypto.randomUUID();

let app: TestApp;
let ada: TestUser;

beforeAll(async () => {
  app = await startTestApp({ rateLimit: false });
  ada = await app.createUser('Ada');
});
afterAll(() => app?.close());

const importAs = (user: TestUser, body: Buffer) => app.request('POST', '/api/v1/import', { token: user.token, body, headers: tarHeaders });
const rows = <T>(sql: string, ...args: unknown[]) => app.deps.db.reads.query<T>(sql, ...args);

describe('bounded answers', () => {
  test('an archive of many unlisted entries: at most 100 errors, with the count of all', async () => {
    const manifest = { files: [], format: 'session-archive-export', projects: 0, sessions: 0, version: 1 };
    const junk = Array.from({ length: 450 }, (_, i) => ({ name: `projects/p/${'x'.repeat(80)}-${i}`, data: Buffer.from('x') }));
    const res = await importAs(ada, await writeTar([{ name: 'manifest.json', data: Buffer.from(JSON.stringify(manifest)) }, ...junk]));
    expect(res.status).toBe(200);
    expect(res.body.success).toBe(false);
    expect(res.body.data.errors).toHaveLength(100);
    expect(res.body.data.errorCount).toBe(450);
    expect(res.raw.length).toBeLessThan(1024 * 1024);
  });

  test('a manifest listing many sessions that never come: each counted as failed, the list still capped', async () => {
    const n = 20_000;
    const files = Array.from({ length: n }, () => ({ path: `projects/many/sessions/${uuid()}/markdown.md`, sha256: '0'.repeat(64), size: 1 }));
    files.sort((a, b) => (a.path < b.path ? -1 : 1));
    const manifest = Buffer.from(JSON.stringify({ files, format: 'session-archive-export', projects: 1, sessions: n, version: 1 }, null, 2));
    expect(manifest.length).toBeGreaterThan(2_000_000);
    const res = await importAs(ada, await writeTar([{ name: 'manifest.json', data: manifest }]));
    expect(res.status).toBe(200);
    expect(res.body.success).toBe(false);
    expect(res.body.data).toMatchObject({ imported: 0, skipped: 0, failed: n, errorCount: n });
    expect(res.body.data.errors).toHaveLength(100);
    expect(res.raw.length).toBeLessThan(64 * 1024);
  });

  test('a manifest larger than the bound is refused (413) before it is read', async () => {
    // Only the header: it declares a manifest over the bound; the rest never needs to come.
    const tar = await writeTar([{ name: 'manifest.json', data: Buffer.alloc(1) }]);
    const header = Buffer.from(tar.subarray(0, 512));
    header.write(`${(MANIFEST_MAX_BYTES + 1).toString(8).padStart(11, '0')}\0`, 124, 12, 'ascii');
    header.fill(' ', 148, 156);
    let sum = 0;
    for (const b of header) sum += b;
    header.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 8, 'ascii');
    const res = await importAs(ada, Buffer.concat([header, Buffer.alloc(4096)]));
    expect(res.status).toBe(413);
    expect(res.body.error).toMatch(/manifest.json is larger than 64 MiB/);
  });
});

async function metric(name: string): Promise<number> {
  const r = await app.request('GET', '/metrics');
  const m = new RegExp(`^${name} (\\S+)$`, 'm').exec(r.text);
  if (!m) throw new Error(`no metric ${name}`);
  return Number(m[1]);
}

async function until(cond: () => Promise<boolean>, what: string): Promise<void> {
  const end = Date.now() + 60_000;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

test("an import's bytes count against upload admission while it holds them, and are given back", async () => {
  const archive = await buildArchive([{ id: `adm-${uuid().slice(0, 8)}`, sessions: [{ id: uuid(), markdown: `# big\n${'m'.repeat(4 * 1024 * 1024)}` }] }]);
  const sent = archive.subarray(0, archive.length - 256 * 1024);
  const req = http.request(`${app.url}/api/v1/import`, {
    method: 'POST',
    agent: false,
    headers: { Authorization: `Bearer ${ada.token}`, ...tarHeaders, 'Content-Length': String(archive.length) },
  });
  req.on('error', () => undefined);
  req.write(sent);
  try {
    // Half a session's markdown has arrived and is held: admission counts it.
    await until(async () => (await metric('upload_bytes_held')) >= 2 * 1024 * 1024, 'the import to hold its bytes');
  } finally {
    req.destroy();
  }
  await until(async () => (await metric('upload_bytes_held')) === 0, 'the bytes given back');
});

describe('every text an import writes is redacted', () => {
  const sessionRow = async (id: string) =>
    (
      await rows<{ name: string; userTitle: string | null; redactionsJson: string }>('SELECT name, userTitle, redactionsJson FROM sessions WHERE id = ?', id)
    )[0];
  const projectName = async (id: string) => (await rows<{ name: string }>('SELECT name FROM projects WHERE id = ?', id))[0]?.name;
  const labels = async (id: string) => (await rows<{ value: string }>('SELECT value FROM session_labels WHERE sessionId = ?', id)).map((r) => r.value);

  async function expectMasked(projectId: string, sessionId: string) {
    expect(await projectName(projectId)).toMatch(/^Project \[REDACTED/);
    const row = await sessionRow(sessionId);
    expect(row.userTitle).toMatch(/^title \[REDACTED/);
    expect(row.name).toMatch(/^name \[REDACTED/);
    expect(JSON.stringify(row)).not.toContain(secret);
    expect(JSON.stringify(await labels(sessionId))).not.toContain(secret);
    expect(JSON.parse(row.redactionsJson).length).toBeGreaterThan(0);
  }

  test('POST /import: project name, title, name and tags', async () => {
    const projectId = `red-${uuid().slice(0, 8)}`;
    const id = uuid();
    const archive = await buildArchive([
      {
        id: projectId,
        json: { name: `Project ${secret}` },
        sessions: [{ id, json: { name: `name ${secret}`, userTitle: `title ${secret}`, tags: [`tag ${secret}`] } }],
      },
    ]);
    const res = await importAs(ada, archive);
    expect(res.body).toMatchObject({ success: true, data: { imported: 1 } });
    await expectMasked(projectId, id);
  });

  test('import-remote: the same, and ids an upload would refuse or a redirect to another port are not followed', async () => {
    const projectId = `rem-${uuid().slice(0, 8)}`;
    const good = uuid();
    const redirected = uuid();
    const elsewhere: string[] = [];
    const other = http.createServer((req, res) => {
      elsewhere.push(`${req.method} ${req.url} ${req.headers.authorization ?? ''}`);
      res.end('{}');
    });
    const session = (id: string) => ({
      id,
      name: `name ${secret}`,
      userTitle: `title ${secret}`,
      markdownSize: 4,
      createdAt: '2025-01-01T00:00:00.000Z',
      updatedAt: '2025-01-01T00:00:00.000Z',
      metadata: { tags: [`tag ${secret}`] },
    });
    const source = http.createServer((req, res) => {
      const url = req.url ?? '';
      const json = (data: unknown) => {
        res.setHeader('Content-Type', 'application/json');
        res.end(JSON.stringify({ success: true, data }));
      };
      if (url === '/api/v1/projects')
        return json({
          projects: [
            { id: projectId, name: `Project ${secret}` },
            { id: 'bad id/../x', name: 'bad' },
          ],
        });
      if (url === `/api/v1/projects/${projectId}/sessions`) return json({ sessions: [session(good), { ...session('bad id/../x') }, session(redirected)] });
      if (url === `/api/v1/projects/${projectId}/sessions/${good}`) return json({ session: { ...session(good), markdownContent: '# hi' } });
      if (url === `/api/v1/projects/${projectId}/sessions/${redirected}`) {
        res.statusCode = 302;
        res.setHeader('Location', `http://127.0.0.1:${(other.address() as { port: number }).port}/steal`);
        return res.end();
      }
      res.statusCode = 404;
      res.end(JSON.stringify({ success: false, error: 'Not found' }));
    });
    await Promise.all([new Promise<void>((r) => source.listen(0, '127.0.0.1', r)), new Promise<void>((r) => other.listen(0, '127.0.0.1', r))]);
    try {
      const from = `http://127.0.0.1:${(source.address() as { port: number }).port}`;
      const r = await runCli(['import-remote', '--from', from, '--token', 'source-token', '--email', ada.email], {
        databaseUrl: app.db.url,
        env: app.storeEnv,
      });
      expect(r.code).toBe(1);
      expect(r.stdout).toMatch(/copied 1 session/);
      expect(r.stdout).toMatch(/could not copy: project "bad id\/\.\.\/x": not a valid project id/);
      expect(r.stdout).toMatch(new RegExp(`could not copy: ${projectId}/"bad id/\\.\\./x": not a valid session id`));
      expect(r.stdout).toMatch(new RegExp(`could not copy: ${projectId}/"${redirected}": the source redirects to another host`));
      expect(elsewhere).toEqual([]);
      expect(r.stdout + r.stderr).not.toContain(secret);
      await expectMasked(projectId, good);
      expect(await rows('SELECT id FROM projects WHERE id = ?', 'bad id/../x')).toEqual([]);
      expect(await rows('SELECT id FROM sessions WHERE id NOT REGEXP ?', '^[0-9a-f-]{36}$')).toEqual([]);
    } finally {
      await new Promise((r) => source.close(r));
      await new Promise((r) => other.close(r));
    }
  });
});

test('a session the service fails to write: success false, counts, and the real cause named with the session', async () => {
  const projectId = `fault-${uuid().slice(0, 8)}`;
  const ids = [uuid(), uuid(), uuid()].sort();
  const refused = ids[1];
  // A real fault of the database, provoked for one session: a trigger that refuses its row.
  await app.deps.db.writes.execute(
    `CREATE TRIGGER refuse_one BEFORE INSERT ON sessions FOR EACH ROW
       IF NEW.id = '${refused}' THEN SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'disk quota exceeded (provoked)'; END IF`,
  );
  try {
    const res = await importAs(ada, await buildArchive([{ id: projectId, sessions: ids.map((id) => ({ id })) }]));
    expect(res.status).toBe(200);
    expect(res.body.success).toBe(false);
    expect(res.body.data).toMatchObject({ imported: 2, skipped: 0, failed: 1, errorCount: 1, sessions: { created: 2, updated: 0, skipped: 0 } });
    const [e] = res.body.data.errors;
    expect(e.path).toBe(`projects/${projectId}/sessions/${refused}/`);
    expect(e.error).toMatch(/the service could not write it: the database refused the write \(disk quota exceeded \(provoked\)\)/);
    expect(e.error).not.toMatch(/archive|damaged|INSERT/i);
    expect((await rows<{ id: string }>('SELECT id FROM sessions WHERE projectId = ? ORDER BY id', projectId)).map((r) => r.id)).toEqual([ids[0], ids[2]]);
  } finally {
    await app.deps.db.writes.execute('DROP TRIGGER IF EXISTS refuse_one');
  }
});

test('the archive builder makes archives the import takes whole', async () => {
  const archive = await buildArchive([{ id: `ok-${uuid().slice(0, 8)}`, sessions: [{ id: uuid() }] }]);
  expect(sha256(archive)).toMatch(/^[0-9a-f]{64}$/);
  const res = await importAs(ada, archive);
  expect(res.body).toMatchObject({ success: true, data: { imported: 1, failed: 0, errorCount: 0, errors: [] } });
});
