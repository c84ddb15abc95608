import http from 'node:http';
import zlib from 'node:zlib';
import { SID, startTestApp, type TestApp, type TestUser } from '../support/app';

let app: TestApp;
let small: TestApp;
let a: TestUser;
let s: TestUser;

const url = (p: string, id: string) => `/api/v1/projects/${p}/sessions/${id}`;
const MiB = 1024 * 1024;

beforeAll(async () => {
  app = await startTestApp();
  small = await startTestApp({ env: { MAX_BODY_BYTES: String(MiB) } });
  a = await app.createUser('a');
  s = await small.createUser('s');
});
afterAll(async () => {
  await small.close();
  await app.close();
});

describe('request bodies', () => {
  test('gzip body accepted and stored byte-exact', async () => {
    const md = '# gz 😀\n' + 'line\n'.repeat(1000);
    const body = zlib.gzipSync(Buffer.from(JSON.stringify({ name: 'gz', markdown: md })));
    const r = await app.request('PUT', url('gz', SID(1)), {
      token: a.token,
      body,
      headers: { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' },
    });
    expect(r.status).toBe(201);
    const g = await app.request('GET', url('gz', SID(1)), { token: a.token, headers: { Accept: 'text/markdown' } });
    expect(g.text).toBe(md);
  });

  test('Content-Encoding: identity accepted; br → 415 Unsupported content encoding', async () => {
    const body = Buffer.from(JSON.stringify({ name: 'id', markdown: 'm' }));
    const ok = await app.request('PUT', url('enc', SID(1)), {
      token: a.token,
      body,
      headers: { 'Content-Type': 'application/json', 'Content-Encoding': 'identity' },
    });
    expect(ok.status).toBe(201);
    const br = await app.request('PUT', url('enc', SID(2)), {
      token: a.token,
      body: zlib.brotliCompressSync(body),
      headers: { 'Content-Type': 'application/json', 'Content-Encoding': 'br' },
    });
    expect(br.status).toBe(415);
    expect(br.body).toEqual({ success: false, error: 'Unsupported content encoding' });
    const deflate = await app.request('PUT', url('enc', SID(2)), {
      token: a.token,
      body: zlib.deflateSync(body),
      headers: { 'Content-Type': 'application/json', 'Content-Encoding': 'deflate' },
    });
    expect(deflate).toMatchObject({ status: 415, body: { success: false, error: 'Unsupported content encoding' } });
    expect((await app.request('GET', url('enc', SID(2)), { token: a.token })).status).toBe(404);
  });

  test('gzip header on a body that is not gzip → 400', async () => {
    const r = await app.request('PUT', url('enc', SID(3)), {
      token: a.token,
      body: '{"name":"x","markdown":"y"}',
      headers: { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' },
    });
    expect(r.status).toBe(400);
    expect(r.body.success).toBe(false);
  });

  test('body over MAX_BODY_BYTES → 413 Request body too large; just under → accepted', async () => {
    const over = { name: 'big', markdown: 'x'.repeat(MiB) };
    const r = await small.request('PUT', url('big', SID(1)), { token: s.token, body: over });
    expect(r.status).toBe(413);
    expect(r.body).toEqual({ success: false, error: 'Request body too large' });
    const under = { name: 'big', markdown: 'x'.repeat(MiB - 100) };
    expect((await small.request('PUT', url('big', SID(1)), { token: s.token, body: under })).status).toBe(201);
  });

  test('gzip of a body whose inflated size exceeds the limit → 413', async () => {
    const json = Buffer.from(JSON.stringify({ name: 'big', markdown: 'x'.repeat(2 * MiB) }));
    const r = await small.request('PUT', url('big', SID(2)), {
      token: s.token,
      body: zlib.gzipSync(json),
      headers: { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' },
    });
    expect(r.status).toBe(413);
    expect(r.body.error).toBe('Request body too large');
  });

  test('gzip bomb (100 MB of zeros) → 413 without inflating it whole', async () => {
    const bomb = zlib.gzipSync(Buffer.alloc(100 * MiB), { level: 9 });
    expect(bomb.length).toBeLessThan(200 * 1024);
    global.gc?.();
    const before = process.memoryUsage().rss;
    const r = await small.request('PUT', url('bomb', SID(1)), {
      token: s.token,
      body: bomb,
      headers: { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' },
    });
    const after = process.memoryUsage().rss;
    expect(r.status).toBe(413);
    expect(r.body.error).toBe('Request body too large');
    // Sanity: inflating 100 MB would show up in this process's memory (the app runs in-process).
    expect(after - before).toBeLessThan(80 * MiB);
    expect((await small.request('GET', '/api/v1/projects/bomb', { token: s.token })).status).toBe(404);
  });

  test('invalid JSON → 400 Invalid JSON in request body', async () => {
    const r = await app.request('PUT', url('bad', SID(1)), { token: a.token, body: '{"name": "x", markdown', headers: { 'Content-Type': 'application/json' } });
    expect(r).toMatchObject({ status: 400, body: { success: false, error: 'Invalid JSON in request body' } });
    const p = await app.request('POST', '/api/v1/projects', { token: a.token, body: '{', headers: { 'Content-Type': 'application/json' } });
    expect(p).toMatchObject({ status: 400, body: { error: 'Invalid JSON in request body' } });
  });

  test('invalid UTF-8 bytes → 400 Invalid JSON in request body', async () => {
    const body = Buffer.concat([Buffer.from('{"name":"x","markdown":"'), Buffer.from([0xff, 0xfe, 0xc3]), Buffer.from('"}')]);
    const r = await app.request('PUT', url('bad', SID(1)), { token: a.token, body, headers: { 'Content-Type': 'application/json' } });
    expect(r).toMatchObject({ status: 400, body: { success: false, error: 'Invalid JSON in request body' } });
    expect((await app.request('GET', '/api/v1/projects/bad', { token: a.token })).status).toBe(404);
  });

  test('body without Content-Type, or with text/plain → 400', async () => {
    const body = JSON.stringify({ name: 'x', markdown: 'y' });
    const none = await new Promise<{ status: number; body: any }>((resolve, reject) => {
      const u = new URL(url('ct', SID(1)), app.url);
      const req = http.request(
        u,
        { method: 'PUT', headers: { Authorization: `Bearer ${a.token}`, 'Content-Length': String(Buffer.byteLength(body)) }, agent: false },
        (res) => {
          let t = '';
          res.on('data', (c) => (t += c));
          res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(t) }));
        },
      );
      req.on('error', reject);
      req.end(body);
    });
    expect(none.status).toBe(400);
    expect(none.body.success).toBe(false);
    const text = await app.request('PUT', url('ct', SID(1)), { token: a.token, body, headers: { 'Content-Type': 'text/plain' } });
    expect(text.status).toBe(400);
    expect((await app.request('GET', '/api/v1/projects/ct', { token: a.token })).status).toBe(404);
    const charset = await app.request('PUT', url('ct', SID(1)), { token: a.token, body, headers: { 'Content-Type': 'application/json; charset=utf-8' } });
    expect(charset.status).toBe(201);
  });

  test('PUT without body → 400', async () => {
    const r = await app.request('PUT', url('nob', SID(1)), { token: a.token });
    expect(r.status).toBe(400);
    expect(r.body.success).toBe(false);
  });

  test('lone surrogate escape in JSON → 400', async () => {
    const r = await app.request('PUT', url('sur', SID(1)), {
      token: a.token,
      body: '{"name":"x","markdown":"a\\ud800b"}',
      headers: { 'Content-Type': 'application/json' },
    });
    expect(r.status).toBe(400);
  });
});

describe('byte-exact round trips', () => {
  const cases: Array<[string, string, string]> = [
    ['emoji', '😀👩‍👩‍👧‍👦 🇯🇵 \u{1F9D1}\u200D\u{1F4BB}', 'raw 😀'],
    ['CJK', '中文 日本語 한국어 — “quotes” ‘single’', '漢字\r\n'],
    ['control characters', 'a\u0000b\u0001c\u001f\t\r\n"\\\'`${}</script>\u2028\u2029\uFEFF', '\u0000\u0000"\\\\\u0007\u{10FFFF}\u{1D11E}\uFFFD'],
  ];
  test.each(cases)('%s through JSON, text/markdown and /raw', async (_n, markdown, rawData) => {
    const id = SID(cases.findIndex((c) => c[1] === markdown) + 1);
    const put = await app.request('PUT', url('rt', id), { token: a.token, body: { name: `rt ${_n}`, markdown, rawData } });
    expect(put.status).toBe(201);
    const j = await app.request('GET', url('rt', id), { token: a.token });
    expect(j.body.data.session.markdownContent).toBe(markdown);
    expect(j.body.data.session.markdownSize).toBe(Buffer.byteLength(markdown, 'utf8'));
    expect(j.body.data.session.rawDataSize).toBe(Buffer.byteLength(rawData, 'utf8'));
    const m = await app.request('GET', url('rt', id), { token: a.token, headers: { Accept: 'text/markdown' } });
    expect(m.raw.equals(Buffer.from(markdown, 'utf8'))).toBe(true);
    const r = await app.request('GET', url('rt', id) + '/raw', { token: a.token });
    expect(r.raw.equals(Buffer.from(rawData, 'utf8'))).toBe(true);
    const h = await app.request('HEAD', url('rt', id), { token: a.token });
    expect(h.headers['content-length']).toBe(String(Buffer.byteLength(markdown, 'utf8')));
  });

  test('a 5 MB markdown and 3 MB raw data (several chunks)', async () => {
    const unit = '# Heading 😀 中文\n' + 'x'.repeat(200) + '\n';
    const markdown = unit.repeat(Math.ceil((5 * MiB) / Buffer.byteLength(unit)));
    expect(Buffer.byteLength(markdown)).toBeGreaterThanOrEqual(5 * MiB);
    const rawBuf = Buffer.alloc(3 * MiB + 17);
    for (let i = 0; i < rawBuf.length; i++) rawBuf[i] = 0x20 + (i % 95);
    const rawData = rawBuf.toString('latin1');
    const put = await app.request('PUT', url('rt', SID(50)), { token: a.token, body: { name: 'big', markdown, rawData } });
    expect(put.status).toBe(201);
    const m = await app.request('GET', url('rt', SID(50)), { token: a.token, headers: { Accept: 'text/markdown' } });
    expect(m.raw.length).toBe(Buffer.byteLength(markdown));
    expect(m.raw.equals(Buffer.from(markdown))).toBe(true);
    const j = await app.request('GET', url('rt', SID(50)), { token: a.token });
    expect(j.body.data.session.markdownContent === markdown).toBe(true);
    const r = await app.request('GET', url('rt', SID(50)) + '/raw', { token: a.token });
    expect(r.raw.equals(rawBuf)).toBe(true);
    const sizes = await app.request('GET', '/api/v1/projects/rt/sessions/sizes', { token: a.token });
    expect(sizes.body.data.sessions[SID(50)]).toBe(Buffer.byteLength(markdown));
  });
});
