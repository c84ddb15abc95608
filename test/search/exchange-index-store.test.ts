/**
 * The exchange index of large markdown is computed where the upload is prepared and stored with
 * the markdown (src/domain/exchanges.ts STORED_INDEX_FROM), so that opening such a session never
 * reads or scans its whole markdown: written and removed with the markdown, of the redacted text,
 * and what the paged read serves.
 */
import { createHash } from 'node:crypto';
import { bucket, EXCHANGES_PART, readStoredExchangeIndex } from '../../src/data/content';
import { decodeStoredIndex, ExchangeScanner, STORED_INDEX_FROM } from '../../src/domain/exchanges';
import { rescanSessions } from '../../src/services/rescan';
import { operatorCtx } from '../../src/services/context';
import { SID, startTestApp, type TestApp, type TestUser } from '../support/app';

let app: TestApp;
let user: TestUser;
const SECRET_BODY = `${'A1b2C3d4E5'.repeat(3)}x9Y8z7`;
const TOKEN = `ghp_${SECRET_BODY}`;

/** Over STORED_INDEX_FROM: 300 exchanges of ~4 KB; the second one's title holds a secret. */
function largeMarkdown(): string {
  const out = ['# A large session\n\n'];
  for (let i = 1; i <= 300; i++) {
    const title = i === 2 ? `Use token ${TOKEN} for the push` : `Question ${i} about the retry loop`;
    out.push(`_**User**_\n\n${title}\n\n---\n\n_**Agent (model claude-sonnet-4)**_\n\n${'The loop waits before it tries again.\n'.repeat(100)}\n---\n\n`);
  }
  return out.join('');
}

const put = (n: number, markdown: string) =>
  app.request('PUT', `/api/v1/projects/idx/sessions/${SID(n)}`, { token: user.token, body: { name: `s${n}`, markdown } });
const page = (n: number, q = '') => app.request('GET', `/api/v1/projects/idx/sessions/${SID(n)}/exchanges${q}`, { token: user.token });
const stored = (n: number) => readStoredExchangeIndex(app.deps.db.reads, 'idx', SID(n));
/**
 * Replaces the stored index of a session in whichever store holds it: its chunk row
 * (CONTENT_STORE=db), or the object its session_objects row names (s3), rewritten in place.
 */
async function replaceStored(n: number, data: Buffer): Promise<void> {
  const key = ['idx', SID(n), EXCHANGES_PART];
  const [object] = await app.deps.db.writes.query<{ objectKey: string }>(
    'SELECT objectKey FROM session_objects WHERE projectId = ? AND sessionId = ? AND part = ?',
    ...key,
  );
  if (object) {
    await app.deps.withContent!(() => bucket().put(object.objectKey, data));
    const sha256 = createHash('sha256').update(data).digest('hex');
    await app.deps.db.writes.execute(
      'UPDATE session_objects SET size = ?, sha256 = ? WHERE projectId = ? AND sessionId = ? AND part = ?',
      data.length,
      sha256,
      ...key,
    );
    return;
  }
  expect(await app.deps.db.writes.execute('UPDATE session_chunks SET data = ? WHERE projectId = ? AND sessionId = ? AND part = ?', data, ...key)).toBe(1);
}
const scanned = (markdown: Buffer) => {
  const s = new ExchangeScanner();
  s.feed(markdown);
  return s.finish();
};

beforeAll(async () => {
  app = await startTestApp();
  user = await app.createUser('exchange-index');
});
afterAll(async () => {
  await app?.close();
});

test('large markdown: the index is stored with it, of the redacted text, equal to a scan of what is stored', async () => {
  const md = largeMarkdown();
  expect(Buffer.byteLength(md)).toBeGreaterThan(STORED_INDEX_FROM);
  expect((await put(1, md)).status).toBe(201);
  const bytes = await stored(1);
  expect(bytes).not.toBeNull();
  expect(bytes!.toString('utf8')).not.toContain(SECRET_BODY);
  const storedMd = Buffer.from(
    (await app.request('GET', `/api/v1/projects/idx/sessions/${SID(1)}`, { token: user.token, headers: { Accept: 'text/markdown' } })).text,
    'utf8',
  );
  expect(storedMd.length).toBe(Buffer.byteLength(md));
  expect(decodeStoredIndex(bytes!, storedMd.length)).toEqual(scanned(storedMd));
  expect(decodeStoredIndex(bytes!, storedMd.length)!.entries[1].title).toMatch(/^Use token \[REDACTED:/);
});

test('the paged read serves the stored index (it is not scanned again)', async () => {
  expect((await put(2, largeMarkdown())).status).toBe(201);
  // Before any read of this version: mark one title in the stored index.
  const bytes = (await stored(2))!;
  const json = JSON.parse(bytes.toString('utf8'));
  json.e[1][2] = 'Title from the stored index';
  await replaceStored(2, Buffer.from(JSON.stringify(json)));
  const r = await page(2, '?limit=3&content=false');
  expect(r.status).toBe(200);
  expect(r.body.data.exchanges[1]).toMatchObject({ number: 2, title: 'Title from the stored index' });
  expect(r.body.data.total).toBe(json.e.length);
});

test('markdown of many one-line turns stores none (its index would outweigh an eighth of it): it is scanned at open', async () => {
  const md = `${'_**User**_\n\nx\n\n'.repeat(90_000)}`;
  expect(Buffer.byteLength(md)).toBeGreaterThan(STORED_INDEX_FROM);
  expect((await put(8, md)).status).toBe(201);
  expect(await stored(8)).toBeNull();
  const r = await page(8, '?offset=89998&content=false');
  expect(r.status).toBe(200);
  expect(r.body.data).toMatchObject({ total: 90_000, nextOffset: null });
  expect(r.body.data.exchanges.map((e: { title: string }) => e.title)).toEqual(['x', 'x']);
});

test('a stored index that does not fit the markdown is ignored: the markdown is scanned', async () => {
  const md = largeMarkdown();
  expect((await put(3, md)).status).toBe(201);
  await replaceStored(3, Buffer.from('{"v":1,"size":5,"e":[[0,5,"x",0]]}'));
  const r = await page(3, '?limit=3&content=false');
  expect(r.status).toBe(200);
  expect(r.body.data.total).toBe(scanned(Buffer.from(md)).entries.length);
  expect(r.body.data.exchanges[0].title).toBe('Question 1 about the retry loop');
});

test('an index stored in format 1 (the header counted as an exchange of its own) is ignored: the markdown is scanned', async () => {
  const md = largeMarkdown();
  expect((await put(9, md)).status).toBe(201);
  const json = JSON.parse((await stored(9))!.toString('utf8'));
  expect(json.v).toBe(2);
  json.v = 1;
  json.e[0][2] = 'Title from the old index';
  await replaceStored(9, Buffer.from(JSON.stringify(json)));
  const r = await page(9, '?limit=2&content=false');
  expect(r.status).toBe(200);
  expect(r.body.data.exchanges[0]).toMatchObject({ number: 1, title: 'Question 1 about the retry loop' });
});

test('small markdown has none; replacing large markdown with small removes it; deleting the session removes it', async () => {
  expect((await put(4, '_**User**_\n\nhello\n')).status).toBe(201);
  expect(await stored(4)).toBeNull();
  expect((await put(5, largeMarkdown())).status).toBe(201);
  expect(await stored(5)).not.toBeNull();
  expect((await put(5, '_**User**_\n\nnow small\n')).status).toBe(200);
  expect(await stored(5)).toBeNull();
  const r = await page(5);
  expect(r.body.data.exchanges.map((e: { title: string }) => e.title)).toEqual(['now small']);
  expect((await put(6, largeMarkdown())).status).toBe(201);
  expect((await app.request('DELETE', `/api/v1/projects/idx/sessions/${SID(6)}`, { token: user.token })).status).toBe(200);
  expect(await stored(6)).toBeNull();
});

test('REDACT_SECRETS=report keeps the secret in titles as in the content; redact rescan stores the index of the masked markdown', async () => {
  const report = await startTestApp({ env: { REDACT_SECRETS: 'report' } });
  try {
    const u = await report.createUser('exchange-index-report');
    const md = largeMarkdown();
    expect((await report.request('PUT', `/api/v1/projects/idx/sessions/${SID(7)}`, { token: u.token, body: { name: 's7', markdown: md } })).status).toBe(201);
    const before = await readStoredExchangeIndex(report.deps.db.reads, 'idx', SID(7));
    // (a title drops markdown marks: `ghp_…` reads `ghp…`)
    expect(before!.toString('utf8')).toContain(SECRET_BODY);
    await rescanSessions(operatorCtx(report.deps.db), 'on', { dryRun: false });
    const after = await readStoredExchangeIndex(report.deps.db.reads, 'idx', SID(7));
    expect(after!.toString('utf8')).not.toContain(SECRET_BODY);
    const masked = Buffer.from(
      (await report.request('GET', `/api/v1/projects/idx/sessions/${SID(7)}`, { token: u.token, headers: { Accept: 'text/markdown' } })).text,
      'utf8',
    );
    expect(masked.toString('utf8')).not.toContain(SECRET_BODY);
    expect(decodeStoredIndex(after!, masked.length)).toEqual(scanned(masked));
  } finally {
    await report.close();
  }
});
