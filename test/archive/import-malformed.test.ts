/**
 * A malformed import is the client's mistake, said as such (docs/export-import.md): a body that is
 * not a tar (gzip, damaged, cut), a manifest that is not JSON or not UTF-8 or has values of the
 * wrong types → 400 (or 415 for a compressed body) in the documented envelope, nothing written,
 * never a 5xx and never a stack. A session whose content or session.json is bad is reported with
 * the same words whether it was prepared on the event loop (small) or on a worker thread (1 MiB
 * and more), never as a fault of the service. The report follows the archive's order, whichever
 * session's check ends first.
 */
import crypto from 'node:crypto';
import zlib from 'node:zlib';
import { startTestApp, type TestApp, type TestUser } from '../support/app';
import { buildArchive, sha256, writeTar, type ArchiveSession } from '../support/archive';

jest.setTimeout(180_000);

const tarHeaders = { 'Content-Type': 'application/x-tar' };
const uuid = () => crypto.randomUUID();
const MiB = 1024 * 1024;

let app: TestApp;
let ada: TestUser;

beforeAll(async () => {
  app = await startTestApp({ rateLimit: false });
  ada = await app.createUser('Ada');
});
afterAll(() => app?.close());

const importAs = (body: Buffer, headers: Record<string, string> = {}) =>
  app.request('POST', '/api/v1/import', { token: ada.token, body, headers: { ...tarHeaders, ...headers } });
const sessionCount = async () => Number((await app.deps.db.reads.query<{ n: number }>('SELECT COUNT(*) AS n FROM sessions'))[0].n);

/** The documented error envelope: exactly `{success: false, error}`, a message and no stack. */
function expectEnvelope(res: { status: number; body: unknown; text: string }, status: number, message: RegExp): void {
  expect(res.status).toBe(status);
  expect(Object.keys(res.body as object).sort()).toEqual(['error', 'success']);
  expect(res.body).toMatchObject({ success: false, error: expect.stringMatching(message) });
  expect(res.text).not.toMatch(/\n\s+at |node_modules|\.ts:\d+|Error:/);
}

/** An archive of these files (Buffers, any bytes), with a correct manifest listing all of them. */
async function archiveOf(files: Array<{ name: string; data: Buffer }>): Promise<Buffer> {
  files.sort((a, b) => (a.name < b.name ? -1 : 1));
  const manifest = {
    files: files.map((f) => ({ path: f.name, sha256: sha256(f.data), size: f.data.length })),
    format: 'session-archive-export',
    projects: 1,
    sessions: 1,
    version: 1,
  };
  return writeTar([{ name: 'manifest.json', data: Buffer.from(JSON.stringify(manifest)) }, ...files]);
}

const sessionJson = (extra: Record<string, unknown> = {}) =>
  Buffer.from(
    JSON.stringify({
      name: 'imported',
      userTitle: null,
      metadata: {},
      tags: [],
      startedAt: '2025-01-02T03:04:05.000Z',
      endedAt: '2025-01-02T03:04:05.000Z',
      createdAt: '2025-01-02T03:04:05.000Z',
      updatedAt: '2025-01-02T03:04:05.000Z',
      etag: '',
      uploadedBy: null,
      redactions: [],
      ...extra,
    }),
  );

describe('a body or manifest that is not what an import takes → 4xx, nothing written', () => {
  const manifestTar = (text: string | Buffer) => writeTar([{ name: 'manifest.json', data: Buffer.isBuffer(text) ? text : Buffer.from(text) }]);
  const valid = () => buildArchive([{ id: `mal-${uuid().slice(0, 8)}`, sessions: [{ id: uuid() }] }]);
  const head = { format: 'session-archive-export', version: 1, projects: 0, sessions: 0 };
  const file = { path: `projects/p/sessions/${uuid()}/markdown.md`, size: 1, sha256: '0'.repeat(64) };

  test.each<[string, () => Promise<Buffer>, RegExp]>([
    ['a gzipped tar sent as a tar', async () => zlib.gzipSync(await valid()), /Not a tar archive/],
    ['gzip bytes that are not even whole', async () => zlib.gzipSync(await valid()).subarray(0, 100), /Not a tar archive/],
    ['random bytes', () => Promise.resolve(crypto.randomBytes(4096)), /Not a tar archive/],
    ['a tar cut inside its first header', async () => (await valid()).subarray(0, 300), /Not a tar archive|truncated|Empty body/],
    ['a tar cut inside its manifest', async () => (await valid()).subarray(0, 600), /manifest.json is truncated/],
    ['a manifest that is not JSON', () => manifestTar('{"files": [ {"path": '), /manifest.json is not valid JSON/],
    ['a manifest with text after it', () => manifestTar('{"files": []} {}'), /manifest.json is not valid JSON/],
    ['a manifest that is not UTF-8', () => manifestTar(Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d])), /not valid UTF-8/],
    ['a manifest that is an array', () => manifestTar('[]'), /not valid JSON|not a valid manifest|not an object/],
    ['files is not an array', () => manifestTar(JSON.stringify({ ...head, files: 'x' })), /not a valid manifest: files/],
    ['projects is a string', () => manifestTar(JSON.stringify({ ...head, projects: '1', files: [] })), /not a valid manifest: projects/],
    ['a file whose size is a string', () => manifestTar(JSON.stringify({ ...head, files: [{ ...file, size: '1' }] })), /files\.0\.size/],
    ['a file whose size is negative', () => manifestTar(JSON.stringify({ ...head, files: [{ ...file, size: -1 }] })), /files\.0\.size/],
    ['a file whose sha256 is short', () => manifestTar(JSON.stringify({ ...head, files: [{ ...file, sha256: 'abc' }] })), /files\.0\.sha256/],
    ['a file that is null', () => manifestTar(JSON.stringify({ ...head, files: [null] })), /files\.0/],
    ['a path that is not a string', () => manifestTar(JSON.stringify({ ...head, files: [{ ...file, path: 7 }] })), /files\.0\.path/],
    ['a manifest nested too deep', () => manifestTar(`${'['.repeat(100)}${']'.repeat(100)}`), /not valid JSON/],
  ])('%s', async (_what, body, message) => {
    const before = await sessionCount();
    expectEnvelope(await importAs(await body()), 400, message);
    expect(await sessionCount()).toBe(before);
  });

  test('a compressed body (Content-Encoding) → 415', async () => {
    expectEnvelope(await importAs(zlib.gzipSync(await valid()), { 'Content-Encoding': 'gzip' }), 415, /Unsupported content encoding/);
  });

  test('a manifest over the bound → 413 in the envelope', async () => {
    // Only the header, declaring a manifest of 64 MiB + 1 byte: it is refused from the header.
    const tar = await manifestTar('x');
    const header = Buffer.from(tar.subarray(0, 512));
    header.write(`${(64 * MiB + 1).toString(8).padStart(11, '0')}\0`, 124, 12, 'ascii');
    header.fill(' ', 148, 156);
    let sum = 0;
    for (const b of header) sum += b;
    header.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 8, 'ascii');
    expectEnvelope(await importAs(Buffer.concat([header, Buffer.alloc(4096)])), 413, /manifest.json is larger than 64 MiB/);
  });
});

describe('a bad session: the same report on the event loop and on a worker thread', () => {
  /** One session with these files (small: prepared inline; `big`: 1 MiB and more, prepared on a worker thread). */
  async function importSession(kind: 'small' | 'big', files: (dir: string) => Array<{ name: string; data: Buffer }>) {
    const projectId = `bad-${kind}-${uuid().slice(0, 8)}`;
    const dir = `projects/${projectId}/sessions/${uuid()}/`;
    const res = await importAs(await archiveOf(files(dir)));
    expect(res.status).toBe(200);
    expect(res.body.success).toBe(false);
    expect(res.body.data).toMatchObject({ imported: 0, failed: 1, errorCount: 1 });
    expect(res.body.data.errors[0].path).toBe(dir);
    const rows = await app.deps.db.reads.query<{ n: number }>('SELECT COUNT(*) AS n FROM sessions WHERE projectId = ?', [projectId]);
    expect(Number(rows[0].n)).toBe(0);
    return res.body.data.errors[0].error as string;
  }
  const pad = (kind: 'small' | 'big') => (kind === 'big' ? 'm'.repeat(2 * MiB) : 'small');

  test.each(['small', 'big'] as const)('markdown that is not UTF-8 (%s)', async (kind) => {
    const error = await importSession(kind, (dir) => [
      { name: `${dir}markdown.md`, data: Buffer.concat([Buffer.from(`# x\n${pad(kind)}`), Buffer.from([0xff, 0xfe])]) },
      { name: `${dir}session.json`, data: sessionJson() },
    ]);
    expect(error).toBe('not imported: markdown.md is not valid UTF-8');
  });

  test.each(['small', 'big'] as const)('raw data that is not UTF-8 (%s)', async (kind) => {
    const error = await importSession(kind, (dir) => [
      { name: `${dir}markdown.md`, data: Buffer.from(`# x\n${pad(kind)}`) },
      { name: `${dir}raw`, data: Buffer.from([0xc3, 0x28]) },
      { name: `${dir}session.json`, data: sessionJson() },
    ]);
    expect(error).toBe('not imported: raw is not valid UTF-8 (raw data is stored as text)');
  });

  test.each(['small', 'big'] as const)('metadata an upload would refuse (%s)', async (kind) => {
    const metadata = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`k${i}`, 'v']));
    const error = await importSession(kind, (dir) => [
      { name: `${dir}markdown.md`, data: Buffer.from(`# x\n${pad(kind)}`) },
      { name: `${dir}session.json`, data: sessionJson({ metadata }) },
    ]);
    expect(error).toMatch(/^not imported: /);
    expect(error).not.toMatch(/service could not write it/);
  });

  test.each(['small', 'big'] as const)('a session.json of the wrong types (%s)', async (kind) => {
    const error = await importSession(kind, (dir) => [
      { name: `${dir}markdown.md`, data: Buffer.from(`# x\n${pad(kind)}`) },
      { name: `${dir}session.json`, data: sessionJson({ tags: 'one', startedAt: 12 }) },
    ]);
    expect(error).toMatch(/^not imported: session.json is invalid: /);
  });

  test('an empty markdown.md', async () => {
    const error = await importSession('small', (dir) => [
      { name: `${dir}markdown.md`, data: Buffer.alloc(0) },
      { name: `${dir}session.json`, data: sessionJson() },
    ]);
    expect(error).toBe('not imported: markdown.md is empty');
  });
});

describe('bad sessions among good ones', () => {
  const notUtf8 = (text: string) => Buffer.concat([Buffer.from(text), Buffer.from([0xff, 0xfe])]);

  // Writing several sessions at once was tried and measured slower on two cores; a later attempt
  // must keep this order.
  test('errors in archive order (a large session that fails late first); every session counted once', async () => {
    const projectId = `order-${uuid().slice(0, 8)}`;
    const id = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
    const big = 'm'.repeat(2 * MiB);
    // The failing ones: 1 (large, fails late on a worker thread), 2 (small, fails at once), 6 (session.json of the wrong types).
    const sessions: ArchiveSession[] = [
      { id: id(1), markdown: notUtf8(`# one\n${big}`) },
      { id: id(2), markdown: notUtf8('# two') },
      { id: id(3), markdown: '# three' },
      { id: id(4), markdown: `# four\n${big}` },
      { id: id(5), markdown: '# five' },
      { id: id(6), json: { tags: 'one', startedAt: 12 } },
      ...Array.from({ length: 6 }, (_, i) => ({ id: id(7 + i), markdown: `# ${7 + i}` })),
    ];
    const dir = (n: number) => `projects/${projectId}/sessions/${id(n)}/`;
    const res = await importAs(await buildArchive([{ id: projectId, sessions }]));
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ imported: 9, failed: 3, skipped: 0, errorCount: 3, projects: { created: 1, existing: 0 } });
    expect(res.body.data.errors.map((e: { path: string }) => e.path)).toEqual([dir(1), dir(2), dir(6)]);
    const rows = await app.deps.db.reads.query<{ id: string }>('SELECT id FROM sessions WHERE projectId = ? ORDER BY id', [projectId]);
    expect(rows.map((r) => r.id)).toEqual([3, 4, 5, 7, 8, 9, 10, 11, 12].map(id));
  });
});
