/**
 * The REST JSON form of a session streams its markdown (large reads stream): the
 * envelope and metadata first, then the markdown escaped as bytes, slice by slice. The answer is
 * byte for byte what JSON.stringify makes of the same object, and it is one version even when the
 * session is re-uploaded while the answer is being read (then cut short if it cannot finish).
 */
import crypto from 'node:crypto';
import http from 'node:http';
import { escapeJsonStringBytes } from '../../src/domain/json-escape';
import { startTestApp, type TestApp, type TestUser } from '../support/app';

const MiB = 1024 * 1024;
/** Every character JSON escapes, quotes and backslashes, multi-byte text, U+2028/9, DEL, a BOM. */
const TRICKY = `${Array.from({ length: 32 }, (_v, i) => String.fromCharCode(i)).join('')}"\\/ é ü € 中文 😀🧪 \u2028\u2029 \u007f \ufeff <script>&amp;`;

describe('escapeJsonStringBytes', () => {
  const viaStringify = (s: string) => Buffer.from(JSON.stringify(s).slice(1, -1), 'utf8');

  test('the bytes JSON.stringify writes, whatever the text', () => {
    for (const s of ['', 'plain ascii', TRICKY, TRICKY.repeat(50), '\n'.repeat(1000), '"'.repeat(7) + '\\'.repeat(9)]) {
      expect(escapeJsonStringBytes(Buffer.from(s, 'utf8')).equals(viaStringify(s))).toBe(true);
    }
  });

  test('a chunk boundary anywhere, even inside a character, changes nothing', () => {
    const bytes = Buffer.from(TRICKY, 'utf8');
    for (let cut = 0; cut <= bytes.length; cut++) {
      const joined = Buffer.concat([escapeJsonStringBytes(bytes.subarray(0, cut)), escapeJsonStringBytes(bytes.subarray(cut))]);
      expect(joined.equals(viaStringify(TRICKY))).toBe(true);
    }
  });

  test('nothing to escape: the same buffer, no copy', () => {
    const b = Buffer.from('nothing to escape here, not even ünïcödé', 'utf8');
    expect(escapeJsonStringBytes(b)).toBe(b);
  });
});

describe('GET of a session as JSON', () => {
  let app: TestApp;
  let a: TestUser;

  beforeAll(async () => {
    app = await startTestApp({ env: { RATE_LIMIT_REST_PER_HOUR: '100000' } });
    a = await app.createUser('a');
  });
  afterAll(() => app?.close());

  /** ~`size` bytes of markdown with tricky text at and across every 1 MiB chunk boundary. */
  function markdownOf(size: number, seed: string): string {
    const parts: string[] = [`# ${seed}\n`];
    let bytes = Buffer.byteLength(parts[0]);
    const filler = `${seed} line of text with "quotes" and \\ backslashes\tand tabs\n`;
    while (bytes < size) {
      // Put the tricky text so a 4-byte emoji straddles the chunk boundary.
      const nextBoundary = (Math.floor(bytes / MiB) + 1) * MiB;
      const piece = nextBoundary - bytes < 200 && nextBoundary - bytes > 2 ? 'x'.repeat(nextBoundary - bytes - 2) + TRICKY : filler;
      parts.push(piece);
      bytes += Buffer.byteLength(piece);
    }
    return parts.join('');
  }

  test('byte-identical to JSON.stringify of the same object, markdown across chunk boundaries included', async () => {
    const sid = crypto.randomUUID();
    const markdown = markdownOf(3 * MiB, 'alpha');
    expect((await app.request('PUT', `/api/v1/projects/json-stream/sessions/${sid}`, { token: a.token, body: { name: `n ${TRICKY}`, markdown } })).status).toBe(
      201,
    );
    const r = await app.request('GET', `/api/v1/projects/json-stream/sessions/${sid}`, { token: a.token, headers: { Accept: 'application/json' } });
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('application/json; charset=utf-8');
    const parsed = JSON.parse(r.text);
    expect(parsed.data.session.markdownContent).toBe(markdown);
    expect(parsed.data.session.name).toBe(`n ${TRICKY}`);
    expect(r.raw.equals(Buffer.from(JSON.stringify(parsed), 'utf8'))).toBe(true);
    expect(Object.keys(parsed.data.session).slice(-2)).toEqual(['markdownContent', 'project']);
  }, 120_000);

  test('markdown and JSON byte for byte at every size around the one-chunk read (a chunk, a JSON slice, ±1 byte)', async () => {
    // Up to one chunk the row and the markdown come in one statement; past it, chunk by chunk.
    for (const size of [1, 256 * 1024 - 1, 256 * 1024 + 1, MiB - 1, MiB, MiB + 1]) {
      const sid = crypto.randomUUID();
      const body = size === 1 ? 'x' : TRICKY + 'm'.repeat(size - Buffer.byteLength(TRICKY) - 1) + '\n';
      expect(Buffer.byteLength(body)).toBe(size);
      const url = `/api/v1/projects/json-stream/sessions/${sid}`;
      expect((await app.request('PUT', url, { token: a.token, body: { name: `size ${size}`, markdown: body } })).status).toBe(201);
      const md = await app.request('GET', url, { token: a.token, headers: { Accept: 'text/markdown' } });
      expect(md.status).toBe(200);
      expect(md.headers['content-length']).toBe(String(Buffer.byteLength(body)));
      expect(md.raw.equals(Buffer.from(body, 'utf8'))).toBe(true);
      const json = await app.request('GET', url, { token: a.token, headers: { Accept: 'application/json' } });
      expect(json.status).toBe(200);
      const parsed = JSON.parse(json.text);
      expect(parsed.data.session.markdownContent === body).toBe(true);
      expect(json.raw.equals(Buffer.from(JSON.stringify(parsed), 'utf8'))).toBe(true);
    }
  }, 120_000);

  test('one version per read: a re-upload while the answer is being read never shows in it (the answer is the first version, whole or cut short)', async () => {
    const sid = crypto.randomUUID();
    const url = `/api/v1/projects/json-stream/sessions/${sid}`;
    const first = markdownOf(6 * MiB, 'first');
    const second = markdownOf(5 * MiB, 'second');
    const put1 = await app.request('PUT', url, { token: a.token, body: { name: 'first', markdown: first } });
    expect(put1.status).toBe(201);
    const whole = await app.request('GET', url, { token: a.token, headers: { Accept: 'application/json' } });
    expect(whole.status).toBe(200);

    // Read by hand: pause after the first bytes, re-upload, then read the rest.
    const chunks: Buffer[] = [];
    let res!: http.IncomingMessage;
    const gotFirst = new Promise<void>((resolve, reject) => {
      const req = http.get(new URL(url, app.url), { headers: { Authorization: `Bearer ${a.token}`, Accept: 'application/json' }, agent: false }, (r) => {
        res = r;
        r.once('data', (c: Buffer) => {
          chunks.push(c);
          r.pause();
          resolve();
        });
      });
      req.on('error', reject);
    });
    await gotFirst;
    const put2 = await app.request('PUT', url, { token: a.token, body: { name: 'second', markdown: second } });
    expect(put2.status).toBe(200);
    res.on('data', (c: Buffer) => chunks.push(c));
    await new Promise<void>((resolve) => {
      res.on('end', resolve);
      // Content replaced while it streams ends the answer short: the connection closes.
      res.on('error', () => resolve());
      res.on('close', () => resolve());
      res.resume();
    });
    const got = Buffer.concat(chunks);
    // The first version's bytes: all of them, or fewer (cut short), never another version's.
    expect(got.length).toBeLessThanOrEqual(whole.raw.length);
    expect(got.equals(whole.raw.subarray(0, got.length))).toBe(true);
    if (got.length === whole.raw.length) expect(JSON.parse(got.toString('utf8')).data.session.etag).toBe(put1.headers.etag);

    const now = JSON.parse((await app.request('GET', url, { token: a.token })).text).data.session;
    expect(now.name).toBe('second');
    expect(now.markdownContent === second).toBe(true);
  }, 120_000);
});
