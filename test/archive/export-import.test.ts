/**
 * Export and import (docs/export-import.md): the deterministic tar,
 * the byte-identical round trip into an empty server, verification against the manifest, conflicts,
 * foreign-owned projects and bad input.
 */
import crypto from 'node:crypto';
import http from 'node:http';
import { createUser } from '../../src/services/users';
import { operatorCtx } from '../../src/services/context';
import { startTestApp, type TestApp, type TestUser } from '../support/app';
import { readTar, seedCorpus, sha256, writeTar, type TarEntry } from '../support/archive';
import { eventually } from '../support/eventually';
import { engineUrlOf } from '../support/meili-harness';
import { Meilisearch } from 'meilisearch';
import { createNodeHttpClient } from '../../src/search/engine/http-client';
import { recentUidOf } from '../../src/search/engine/index-settings';
import { ownedProjectFilter } from '../../src/search/engine/filter';
import type { Search } from '../../src/search';

let a: TestApp;
let b: TestApp;
let ada: TestUser;
let adaOnB: TestUser;
let bob: TestUser;
const P1 = `exp-${crypto.randomUUID().slice(0, 8)}`;
const P2 = `Exp.${crypto.randomUUID().slice(0, 8)}`;
let ids1: string[];
let ids2: string[];

const tarHeaders = { 'Content-Type': 'application/x-tar' };

async function exportOf(app: TestApp, user: TestUser, query = ''): Promise<Buffer> {
  const res = await app.request('GET', `/api/v1/export${query}`, { token: user.token });
  expect(res.status).toBe(200);
  expect(res.headers['content-type']).toBe('application/x-tar');
  expect(res.headers['content-disposition']).toMatch(/^attachment; filename="/);
  expect(Number(res.headers['content-length'])).toBe(res.raw.length);
  return res.raw;
}

async function importInto(app: TestApp, user: TestUser, archive: Buffer, onConflict?: string) {
  return app.request('POST', `/api/v1/import${onConflict ? `?onConflict=${onConflict}` : ''}`, { token: user.token, body: archive, headers: tarHeaders });
}

/** The documents of `projectId` in the app's recent index (where an upload goes first), once the outbox is applied. */
async function recentDocuments(app: TestApp, user: TestUser, projectId: string): Promise<string[]> {
  const search = app.deps.search as unknown as Search;
  await eventually('the outbox applied', async () => (await search.backlog()) === 0, 60_000);
  const { config } = app.deps;
  const httpClient = createNodeHttpClient();
  try {
    // The run's engines (MEILI_URL…), else the app's embedded ones.
    const embedded = search.recentEmbedded ?? search.embedded;
    const recent = new Meilisearch({
      host: config.meiliUrls.length ? (config.meiliRecentUrl ?? engineUrlOf(config, user.id)) : embedded!.url!,
      apiKey: config.meiliUrls.length ? (config.meiliMasterKey ?? undefined) : embedded!.masterKey,
      httpClient,
    });
    const docs = await recent.index(recentUidOf(search.indexUid)).getDocuments<{ sessionId: string }>({
      filter: ownedProjectFilter(user.id, projectId),
      fields: ['sessionId'],
      limit: 1000,
    });
    return docs.results.map((d) => d.sessionId);
  } finally {
    httpClient.destroy();
  }
}

async function sessionView(app: TestApp, user: TestUser, projectId: string, id: string) {
  const json = await app.request('GET', `/api/v1/projects/${projectId}/sessions/${id}`, { token: user.token });
  const raw = await app.request('GET', `/api/v1/projects/${projectId}/sessions/${id}/raw`, { token: user.token });
  const data = await app.request('GET', `/api/v1/projects/${projectId}/sessions/${id}`, {
    token: user.token,
    headers: { Accept: 'application/vnd.specstory.session-data+json' },
  });
  // User ids differ between servers (the same person has an account on each): compared by name.
  const session = json.body?.data?.session;
  if (session?.uploadedBy) session.uploadedBy = { name: session.uploadedBy.name };
  if (session?.project?.owner) session.project.owner = { type: session.project.owner.type, name: session.project.owner.name };
  return { json: json.body, etag: json.headers.etag, raw: raw.raw.toString('base64'), data: data.status === 200 ? data.raw.toString('base64') : data.status };
}

beforeAll(async () => {
  a = await startTestApp({ rateLimit: false });
  b = await startTestApp({ rateLimit: false });
  ada = await a.createUser('Ada');
  // The same person on the second server: same email and name.
  const u = await createUser(operatorCtx(b.deps.db), ada.email, 'Ada');
  adaOnB = { id: u.id, email: u.email, ...(await b.newKey(u)) };
  bob = await b.createUser('Bob');
  ids1 = await seedCorpus(a, ada, P1);
  ids2 = await seedCorpus(a, ada, P2);
}, 120_000);

afterAll(async () => {
  await a?.close();
  await b?.close();
});

describe('the archive', () => {
  let archive: Buffer;
  let entries: TarEntry[];
  beforeAll(async () => {
    archive = await exportOf(a, ada);
    entries = await readTar(archive);
  });

  test('manifest first, then every entry sorted by path, with fixed modes and owners', () => {
    expect(entries[0].name).toBe('manifest.json');
    const rest = entries.slice(1).map((e) => e.name);
    expect(rest).toEqual([...rest].sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y))));
    for (const e of entries) {
      expect([e.uid, e.gid, e.uname, e.gname]).toEqual([0, 0, '', '']);
      expect(e.mode).toBe(e.type === 'directory' ? 0o755 : 0o644);
    }
    // Both projects, each with its project.json and its three sessions.
    expect(rest).toContain(`projects/${P1}/project.json`);
    expect(rest).toContain(`projects/${P2}/sessions/${ids2[0]}/session-data.json`);
    expect(rest).toContain(`projects/${P1}/sessions/${ids1[2]}/raw`);
    expect(rest).not.toContain(`projects/${P1}/sessions/${ids1[1]}/raw`);
  });

  test('the manifest lists every file with its size and sha256; JSON has sorted keys', () => {
    const manifest = JSON.parse(entries[0].data.toString('utf8'));
    expect(Object.keys(manifest)).toEqual(['files', 'format', 'projects', 'sessions', 'version']);
    expect(manifest).toMatchObject({ format: 'session-archive-export', version: 1, projects: 2, sessions: 6 });
    const files = entries.filter((e) => e.type === 'file' && e.name !== 'manifest.json');
    expect(manifest.files.map((f: { path: string }) => f.path)).toEqual(files.map((f) => f.name));
    for (const f of files) {
      const listed = manifest.files.find((m: { path: string }) => m.path === f.name);
      expect(listed).toEqual({ path: f.name, sha256: sha256(f.data), size: f.data.length });
    }
    const sj = JSON.parse(entries.find((e) => e.name === `projects/${P1}/sessions/${ids1[0]}/session.json`)!.data.toString('utf8'));
    expect(Object.keys(sj)).toEqual([...Object.keys(sj)].sort());
    expect(sj).toMatchObject({ tags: ['Résumé', 'two words'], userTitle: 'My own title ✍', uploadedBy: ada.email, startedAt: '2024-01-02T03:04:05.678Z' });
    expect(sj.metadata).toMatchObject({ machineName: 'ada-laptop', title: 'A “title”', summary: 'line1\nline2', gitBranches: ['main', 'feat/ü'] });
    const pj = JSON.parse(entries.find((e) => e.name === `projects/${P1}/project.json`)!.data.toString('utf8'));
    expect(pj).toMatchObject({ name: `Project ${P1} ✨`, icon: 'Code2', color: 'blue', owner: { type: 'user', name: 'Ada', email: ada.email } });
  });

  test('stored bytes exactly: CRLF, no trailing newline, raw data that is not JSON', () => {
    const md = entries.find((e) => e.name === `projects/${P1}/sessions/${ids1[0]}/markdown.md`)!;
    expect(md.data.toString('utf8')).toBe('# 見出し\r\n\r\n_**User**_\r\nemoji 🚀🧪 and CRLF\r\n\r\n---\r\n\r\n_**Agent**_\r\nno trailing newline');
    const raw = entries.find((e) => e.name === `projects/${P1}/sessions/${ids1[0]}/raw`)!;
    expect(raw.data.toString('utf8')).toBe('not json at all { [ \u0000 \u00e9\r\nline two');
  });

  test('times come from the data, never the clock: the same data exports to the same bytes', async () => {
    const sj = entries.find((e) => e.name === `projects/${P1}/sessions/${ids1[0]}/session.json`)!;
    const updatedAt = new Date(JSON.parse(sj.data.toString('utf8')).updatedAt);
    expect(sj.mtime.getTime()).toBe(Math.floor(updatedAt.getTime() / 1000) * 1000);
    await new Promise((r) => setTimeout(r, 1100));
    expect(sha256(await exportOf(a, ada))).toBe(sha256(archive));
  });

  test('?projectId= exports those projects only; another account’s is 403, an unknown one 404', async () => {
    const one = await readTar(await exportOf(a, ada, `?projectId=${P2}`));
    expect(one.some((e) => e.name.startsWith(`projects/${P1}/`))).toBe(false);
    expect(JSON.parse(one[0].data.toString('utf8')).sessions).toBe(3);
    const other = await a.createUser('Eve');
    expect((await a.request('GET', `/api/v1/export?projectId=${P1}`, { token: other.token })).status).toBe(403);
    expect((await a.request('GET', `/api/v1/export?projectId=nope-${P1}`, { token: ada.token })).status).toBe(404);
  });

  test('round trip: import into an empty server, export again: byte-identical; every session reads back identically', async () => {
    const res = await importInto(b, adaOnB, archive);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      success: true,
      data: { projects: { created: 2, existing: 0 }, sessions: { created: 6, updated: 0, skipped: 0 }, errors: [], failed: 0, errorCount: 0 },
    });
    const again = await exportOf(b, adaOnB);
    expect(sha256(again)).toBe(sha256(archive));
    for (const [p, ids] of [
      [P1, ids1],
      [P2, ids2],
    ] as const) {
      for (const id of ids) expect(await sessionView(b, adaOnB, p, id)).toEqual(await sessionView(a, ada, p, id));
    }
    // Search covers imported sessions (through the outbox, like uploads).
    await eventually(
      'imported sessions found by search',
      async () => {
        const r = await b.request('POST', '/api/v1/graphql', {
          token: adaOnB.token,
          body: { query: 'query($q: String!) { searchSessions(query: $q) { total } }', variables: { q: 'trailing' } },
        });
        return (r.body?.data?.searchSessions?.total ?? 0) >= 2;
      },
      60_000,
    );
    // Straight into the main index, as a rebuild's sessions go (the bulk path), not through the
    // recent index an upload goes to first.
    expect(await recentDocuments(b, adaOnB, P1)).toEqual([]);
  });

  test('a second import skips what exists; newer and overwrite replace', async () => {
    const skip = await importInto(b, adaOnB, archive);
    expect(skip.body).toMatchObject({
      success: true,
      data: { projects: { created: 0, existing: 2 }, sessions: { created: 0, updated: 0, skipped: 6 }, errors: [], failed: 0, errorCount: 0 },
    });
    // Change one session on b; `newer` keeps it (b's is newer), `overwrite` puts the archive's back.
    const id = ids1[1];
    const patched = await b.request('PATCH', `/api/v1/projects/${P1}/sessions/${id}`, { token: adaOnB.token, body: { userTitle: 'changed on b' } });
    expect(patched.status).toBe(200);
    const newer = await importInto(b, adaOnB, archive, 'newer');
    expect(newer.body.data.sessions).toEqual({ created: 0, updated: 0, skipped: 6 });
    expect((await sessionView(b, adaOnB, P1, id)).json.data.session.userTitle).toBe('changed on b');
    // The change went to the recent index; the import's version replaces it there too.
    expect(await recentDocuments(b, adaOnB, P1)).toEqual([id]);
    const over = await importInto(b, adaOnB, archive, 'overwrite');
    expect(over.body.data.sessions).toEqual({ created: 0, updated: 1, skipped: 5 });
    expect(await recentDocuments(b, adaOnB, P1)).toEqual([]);
    expect(await sessionView(b, adaOnB, P1, id)).toEqual(await sessionView(a, ada, P1, id));
    // `newer` replaces when the archive's is later: export b's changed copy... and import it on a.
    await b.request('PATCH', `/api/v1/projects/${P1}/sessions/${id}`, { token: adaOnB.token, body: { userTitle: 'newer on b' } });
    const fromB = await exportOf(b, adaOnB, `?projectId=${P1}`);
    const onA = await importInto(a, ada, fromB, 'newer');
    expect(onA.body.data.sessions).toEqual({ created: 0, updated: 1, skipped: 2 });
    expect((await sessionView(a, ada, P1, id)).json.data.session.userTitle).toBe('newer on b');
    expect(await sessionView(a, ada, P1, id)).toEqual(await sessionView(b, adaOnB, P1, id));
    expect((await importInto(a, ada, archive, 'bogus')).status).toBe(400);
  });

  test('a project id owned by another account is reported, not overwritten', async () => {
    // Bob (on b) takes nothing of Ada's: every session of her projects is reported.
    const res = await importInto(b, bob, archive, 'overwrite');
    expect(res.status).toBe(200);
    expect(res.body.data.projects).toEqual({ created: 0, existing: 0 });
    expect(res.body.data.sessions).toEqual({ created: 0, updated: 0, skipped: 0 });
    expect(res.body.data.errors).toContainEqual({ path: `projects/${P1}/project.json`, error: `Project ${P1} belongs to another account: not imported` });
    expect(res.body.data.errors.filter((e: { path: string }) => /sessions\/[^/]+\/$/.test(e.path))).toHaveLength(6);
    expect((await b.request('GET', `/api/v1/projects/${P1}/sessions`, { token: bob.token })).status).toBe(403);
  });

  describe('damaged archives: the session concerned is reported and nothing of it is written', () => {
    let fresh: TestUser;
    beforeEach(async () => {
      fresh = await b.createUser('Fresh');
    });
    const renamed = (e: TarEntry[], from: string, to: string) => e.map((x) => ({ ...x, name: x.name.split(from).join(to) }));
    // The archive for another set of project ids (so that a fresh user owns them on b).
    async function variant(mutate: (e: TarEntry[]) => TarEntry[]) {
      const suffix = crypto.randomUUID().slice(0, 6);
      let e = renamed(renamed(entries, P1, `${P1}-${suffix}`), P2, `${P2}-${suffix}`);
      const manifest = JSON.parse(e[0].data.toString('utf8'));
      manifest.files = manifest.files.map((f: { path: string }) => ({
        ...f,
        path: f.path.split(P1).join(`${P1}-${suffix}`).split(P2).join(`${P2}-${suffix}`),
      }));
      e[0] = { ...e[0], data: Buffer.from(JSON.stringify(manifest)) };
      e = mutate(e);
      return {
        tar: await writeTar(e.map((x) => ({ name: x.name, data: x.data, type: x.type as 'file' | 'directory' }))),
        p1: `${P1}-${suffix}`,
        p2: `${P2}-${suffix}`,
      };
    }

    test('a tampered file (same size, other bytes)', async () => {
      const { tar, p1 } = await variant((e) =>
        e.map((x) => (x.name.endsWith(`${ids1[0]}/markdown.md`) ? { ...x, data: Buffer.from(x.data.toString('latin1').replace('#', '!'), 'latin1') } : x)),
      );
      const res = await importInto(b, fresh, tar);
      expect(res.status).toBe(200);
      expect(res.body.data.sessions.created).toBe(5);
      expect(res.body.data.errors).toEqual([
        { path: `projects/${p1}/sessions/${ids1[0]}/markdown.md`, error: 'sha256 does not match the manifest: session not imported' },
      ]);
      expect((await b.request('GET', `/api/v1/projects/${p1}/sessions/${ids1[0]}`, { token: fresh.token })).status).toBe(404);
    });

    test('a file of another size, a file not in the manifest, a session file missing', async () => {
      const { tar, p1, p2 } = await variant((e) => [
        ...e
          .filter((x) => !x.name.endsWith(`${ids2[0]}/session-data.json`))
          .map((x) => (x.name.endsWith(`${ids1[2]}/raw`) ? { ...x, data: Buffer.concat([x.data, Buffer.from('!')]) } : x)),
        { ...e[1], name: 'projects/zzz/evil.sh', type: 'file', data: Buffer.from('#!/bin/sh') },
      ]);
      const res = await importInto(b, fresh, tar);
      expect(res.status).toBe(200);
      expect(res.body.data.sessions.created).toBe(4);
      const errors = res.body.data.errors.map((x: { path: string }) => x.path).sort();
      expect(errors).toEqual([`projects/${p1}/sessions/${ids1[2]}/raw`, `projects/${p2}/sessions/${ids2[0]}/session-data.json`, 'projects/zzz/evil.sh'].sort());
    });

    test('a truncated archive: what arrived whole is imported, the rest reported', async () => {
      const { tar, p2 } = await variant((e) => e);
      const cut = tar.subarray(0, Math.floor(tar.length * 0.7));
      const res = await importInto(b, fresh, cut);
      expect(res.status).toBe(200);
      const { created } = res.body.data.sessions;
      expect(created).toBeGreaterThan(0);
      expect(created).toBeLessThan(6);
      expect(res.body.data.errors.length).toBeGreaterThanOrEqual(6 - created);
      // Nothing half-written: every session is either whole or absent.
      for (const id of ids2) {
        const r = await b.request('GET', `/api/v1/projects/${p2}/sessions/${id}`, { token: fresh.token });
        expect([200, 403, 404]).toContain(r.status);
        if (r.status === 200) expect(r.body.data.session.markdownContent).toBe((await sessionView(a, ada, P2, id)).json.data.session.markdownContent);
      }
    });
  });

  describe('bad input: 400/413 with a clear message, nothing written', () => {
    const count = async (app: TestApp) => (await app.deps.db.reads.query<{ n: number }>('SELECT COUNT(*) AS n FROM sessions'))[0].n;
    test.each([
      ['not a tar', Buffer.from('{"hello": "world"}'.repeat(100)), /Not a tar archive/],
      ['an empty body', Buffer.alloc(0), /Empty body/],
    ])('%s', async (_what, body, message) => {
      const before = await count(b);
      const res = await importInto(b, bob, body);
      expect(res.status).toBe(400);
      expect(res.body.error).toMatch(message);
      expect(await count(b)).toBe(before);
    });

    test('a manifest of another format, another version, a path outside projects/, not first', async () => {
      const before = await count(b);
      const cases: Array<[unknown, RegExp]> = [
        [{ format: 'other', version: 1, projects: 0, sessions: 0, files: [] }, /format is "other"/],
        [{ format: 'session-archive-export', version: 2, projects: 0, sessions: 0, files: [] }, /Unsupported archive version 2/],
        [
          { format: 'session-archive-export', version: 1, projects: 0, sessions: 0, files: [{ path: '../etc/passwd', size: 1, sha256: '0'.repeat(64) }] },
          /Invalid path in manifest/,
        ],
      ];
      for (const [manifest, message] of cases) {
        const tar = await writeTar([
          { name: 'manifest.json', data: Buffer.from(JSON.stringify(manifest)) },
          ...entries.slice(1).map((e) => ({ name: e.name, data: e.data, type: e.type as 'file' })),
        ]);
        const res = await importInto(b, bob, tar);
        expect(res.status).toBe(400);
        expect(res.body.error).toMatch(message);
      }
      const swapped = await writeTar([{ name: 'projects/x/project.json', data: Buffer.from('{}') }]);
      const res = await importInto(b, bob, swapped);
      expect(res.status).toBe(400);
      expect(res.body.error).toMatch(/first entry must be manifest.json/);
      expect(await count(b)).toBe(before);
    });

    test('over MAX_IMPORT_BYTES → 413, by its length or by its manifest', async () => {
      const small = await startTestApp({ rateLimit: false, env: { MAX_IMPORT_BYTES: '20000' } });
      try {
        const u = await small.createUser('Small');
        const res = await small.request('POST', '/api/v1/import', { token: u.token, body: Buffer.alloc(30000), headers: tarHeaders });
        expect(res.status).toBe(413);
        expect(res.body.error).toMatch(/MAX_IMPORT_BYTES/);
        // A manifest that lists more than the limit: refused before anything is written.
        const big = {
          format: 'session-archive-export',
          version: 1,
          projects: 1,
          sessions: 1,
          files: [{ path: `projects/p/sessions/${crypto.randomUUID()}/markdown.md`, size: 50000, sha256: '0'.repeat(64) }],
        };
        const tar = await writeTar([{ name: 'manifest.json', data: Buffer.from(JSON.stringify(big)) }]);
        const r2 = await small.request('POST', '/api/v1/import', { token: u.token, body: tar, headers: tarHeaders });
        expect(r2.status).toBe(413);
        expect(await count(small)).toBe(0);
      } finally {
        await small.close();
      }
    });
  });
});

test('a client that stops reading pauses the export; reading on finishes it', async () => {
  const user = await a.createUser('Slow');
  const big = 'x'.repeat(1000) + '\n';
  const markdown = `# big\n\n${big.repeat(24_000)}`; // ~24 MB
  const put = await a.request('PUT', `/api/v1/projects/slow-${user.id.slice(0, 8)}/sessions/${crypto.randomUUID()}`, {
    token: user.token,
    body: { name: 'big', markdown },
  });
  expect(put.status).toBe(201);
  const { received, total, afterResume } = await new Promise<{ received: number; total: number; afterResume: number }>((resolve, reject) => {
    const req = http.get(`${a.url}/api/v1/export`, { headers: { Authorization: `Bearer ${user.token}` }, agent: false }, (res) => {
      const total = Number(res.headers['content-length']);
      let n = 0;
      let once = false;
      res.on('data', (c: Buffer) => {
        n += c.length;
        if (n >= 64 * 1024 && !once) {
          once = true;
          res.pause();
          // Paused: the server waits; only what the socket buffers hold arrives meanwhile.
          setTimeout(() => {
            const received = n;
            res.resume();
            res.on('end', () => resolve({ received, total, afterResume: n }));
          }, 1500);
        }
      });
      res.on('error', reject);
    });
    req.on('error', reject);
  });
  expect(total).toBeGreaterThan(24_000_000);
  expect(received).toBeLessThan(total / 2);
  expect(afterResume).toBe(total);
}, 120_000);
