/**
 * A session's content as rows: every part its own chunks of at most 1 MiB, numbered from 0 (small
 * parts share one INSERT, which must not mix them up), and a rewrite that shrinks a part leaves
 * none of its former chunks behind. Read back byte for byte.
 */
import { SID, startTestApp, type TestApp, type TestUser } from '../support/app';

let app: TestApp;
let a: TestUser;
const MiB = 1024 * 1024;

beforeAll(async () => {
  app = await startTestApp({ rateLimit: false, env: { WORKERS_ENABLED: 'false' } });
  a = await app.createUser('content-rows');
}, 120_000);
afterAll(() => app?.close());

const rowsOf = async (sessionId: string) =>
  (
    await app.deps.db.writes.query<{ part: string; seq: number; bytes: unknown }>(
      'SELECT part, seq, LENGTH(data) AS bytes FROM session_chunks WHERE projectId = ? AND sessionId = ? ORDER BY part, seq',
      'rows',
      sessionId,
    )
  ).map((r) => `${r.part}/${r.seq}:${Number(r.bytes)}`);

const contentOf = async (sessionId: string) => {
  const url = `/api/v1/projects/rows/sessions/${sessionId}`;
  const md = await app.request('GET', url, { token: a.token, headers: { Accept: 'text/markdown' } });
  const raw = await app.request('GET', `${url}/raw`, { token: a.token });
  return { markdown: md.text, rawData: raw.text };
};

test('small parts: one chunk each, numbered 0, each with its own bytes', async () => {
  const body = { name: 's', markdown: '# small\nmarkdown', rawData: 'raw!' };
  expect((await app.put(a, 'rows', SID(1), body)).status).toBeLessThan(300);
  const rows = await rowsOf(SID(1));
  expect(rows).toContain(`markdown/0:${body.markdown.length}`);
  expect(rows).toContain(`raw/0:${body.rawData.length}`);
  expect(rows.filter((r) => /^(markdown|raw)\//.test(r))).toHaveLength(2);
  expect(await contentOf(SID(1))).toEqual({ markdown: body.markdown, rawData: body.rawData });
});

test('large parts in 1 MiB chunks; a rewrite that shrinks them leaves no chunk of the former version', async () => {
  const big = { name: 'b', markdown: 'm'.repeat(2 * MiB + 10), rawData: 'r'.repeat(MiB + 1) };
  expect((await app.put(a, 'rows', SID(2), big)).status).toBeLessThan(300);
  const rows = await rowsOf(SID(2));
  expect(rows.filter((r) => /^(markdown|raw)\//.test(r))).toEqual([`markdown/0:${MiB}`, `markdown/1:${MiB}`, 'markdown/2:10', `raw/0:${MiB}`, 'raw/1:1']);
  expect(await contentOf(SID(2))).toEqual({ markdown: big.markdown, rawData: big.rawData });

  const small = { name: 'b', markdown: '# now small', rawData: 'r' };
  expect((await app.put(a, 'rows', SID(2), small)).status).toBeLessThan(300);
  expect((await rowsOf(SID(2))).filter((r) => /^(markdown|raw)\//.test(r))).toEqual([`markdown/0:${small.markdown.length}`, 'raw/0:1']);
  expect(await contentOf(SID(2))).toEqual({ markdown: small.markdown, rawData: small.rawData });
});
