/** Helpers for tests of the export archive: a corpus that stresses bytes, and a tar reader. */
import crypto from 'node:crypto';
import { Readable } from 'node:stream';
import * as tar from 'tar-stream';
import type { TestApp, TestUser } from './app';

export interface TarEntry {
  name: string;
  type: string;
  mode: number;
  uid: number;
  gid: number;
  uname: string;
  gname: string;
  mtime: Date;
  size: number;
  data: Buffer;
}

/** Every entry of a tar, in order, with its bytes. */
export async function readTar(bytes: Buffer): Promise<TarEntry[]> {
  const out: TarEntry[] = [];
  const extract = tar.extract();
  Readable.from([bytes]).pipe(extract);
  for await (const entry of extract as AsyncIterable<Readable & { header: tar.Header }>) {
    const chunks: Buffer[] = [];
    for await (const c of entry) chunks.push(c as Buffer);
    const h = entry.header;
    out.push({
      name: h.name,
      type: h.type,
      mode: h.mode,
      uid: h.uid,
      gid: h.gid,
      uname: h.uname,
      gname: h.gname,
      mtime: h.mtime,
      size: h.size,
      data: Buffer.concat(chunks),
    });
  }
  return out;
}

/** A tar made of these entries as given (tests build damaged archives with it). */
export async function writeTar(
  entries: Array<{ name: string; data?: Buffer; type?: 'file' | 'directory' | 'symlink'; mtime?: Date; size?: number }>,
): Promise<Buffer> {
  const pack = tar.pack();
  const chunks: Buffer[] = [];
  pack.on('data', (c: unknown) => void chunks.push(c as Buffer));
  const ended = new Promise<void>((r) => pack.on('end', () => r()));
  for (const e of entries) {
    await new Promise<void>((resolve, reject) => {
      const cb = (err?: Error | null) => (err ? reject(err) : resolve());
      const header = {
        name: e.name,
        type: e.type ?? 'file',
        mode: e.type === 'directory' ? 0o755 : 0o644,
        mtime: e.mtime ?? new Date(0),
        ...(e.type === 'symlink' ? { linkname: '/etc/passwd' } : {}),
      };
      if (e.type === 'directory' || e.type === 'symlink') pack.entry(header, cb);
      else pack.entry(header, e.data ?? Buffer.alloc(0), cb);
    });
  }
  pack.finalize();
  await ended;
  return Buffer.concat(chunks);
}

export const sha256 = (b: Buffer) => crypto.createHash('sha256').update(b).digest('hex');

/** The corpus: sessions whose bytes a careless exporter would change. */
export function corpus(projectId: string): Array<{ id: string; body: Record<string, unknown>; tags?: string[]; title?: string }> {
  return [
    {
      id: crypto.randomUUID(),
      body: {
        name: 'Ünïcödé — 日本語 🚀',
        markdown: '# 見出し\r\n\r\n_**User**_\r\nemoji 🚀🧪 and CRLF\r\n\r\n---\r\n\r\n_**Agent**_\r\nno trailing newline',
        rawData: 'not json at all { [ \u0000 \u00e9\r\nline two',
        sessionData: JSON.stringify({ schemaVersion: '1.0', sessionId: 'x', exchanges: [{ text: 'ça va' }] }),
        startedAt: '2024-01-02T03:04:05.678Z',
        endedAt: '2024-01-02T04:05:06.789Z',
        projectName: `Project ${projectId} ✨`,
        metadata: {
          clientName: 'specstory-cli',
          clientVersion: '1.2.3',
          agentName: 'Claude Code',
          deviceId: 'dev-1',
          llmModels: ['claude-sonnet'],
          gitBranches: ['main', 'feat/ü'],
          tags: [],
          machineName: 'ada-laptop',
          title: 'A “title”',
          summary: 'line1\nline2',
        },
      },
      tags: ['Résumé', 'two words'],
      title: 'My own title ✍',
    },
    {
      id: crypto.randomUUID(),
      body: { name: 'plain', markdown: 'only markdown\n', metadata: { tags: [] } },
    },
    {
      id: crypto.randomUUID(),
      body: { name: 'raw only', markdown: 'x', rawData: '{"type":"user"}\n{"type":"assistant"}\n', metadata: { llmModels: ['gpt-5'], extraKey: 'value' } },
    },
  ];
}

/** Uploads the corpus into `projectId` for `user`, then sets titles and tags by PATCH. */
export async function seedCorpus(app: TestApp, user: TestUser, projectId: string): Promise<string[]> {
  const ids: string[] = [];
  for (const s of corpus(projectId)) {
    const put = await app.request('PUT', `/api/v1/projects/${projectId}/sessions/${s.id}`, { token: user.token, body: s.body });
    if (put.status !== 201) throw new Error(`seed upload: ${put.status} ${put.text}`);
    if (s.tags || s.title) {
      const patch = await app.request('PATCH', `/api/v1/projects/${projectId}/sessions/${s.id}`, {
        token: user.token,
        body: { ...(s.tags ? { tags: s.tags } : {}), ...(s.title ? { userTitle: s.title } : {}) },
      });
      if (patch.status !== 200) throw new Error(`seed patch: ${patch.status} ${patch.text}`);
    }
    ids.push(s.id);
  }
  return ids;
}

/** A session of an archive built by `buildArchive`: its session.json fields over plain defaults, and its markdown. */
export interface ArchiveSession {
  id: string;
  json?: Record<string, unknown>;
  /** Its markdown.md (a Buffer: any bytes, e.g. not UTF-8). */
  markdown?: string | Buffer;
}

/** A valid archive (manifest with every file's size and sha256) of these projects and sessions, entries sorted by path. */
export async function buildArchive(projects: Array<{ id: string; json?: Record<string, unknown>; sessions: ArchiveSession[] }>): Promise<Buffer> {
  const at = '2025-01-02T03:04:05.000Z';
  const files: Array<{ name: string; data: Buffer }> = [];
  for (const p of projects) {
    const pj = {
      name: p.id,
      icon: 'Code2',
      color: 'blue',
      createdAt: at,
      updatedAt: at,
      owner: { type: 'user', name: null, email: 'x@example.com' },
      ...p.json,
    };
    files.push({ name: `projects/${p.id}/project.json`, data: Buffer.from(JSON.stringify(pj)) });
    for (const s of p.sessions) {
      const dir = `projects/${p.id}/sessions/${s.id}/`;
      const sj = {
        name: 'imported',
        userTitle: null,
        metadata: {},
        tags: [],
        startedAt: at,
        endedAt: at,
        createdAt: at,
        updatedAt: at,
        etag: '',
        uploadedBy: null,
        redactions: [],
        ...s.json,
      };
      files.push({ name: `${dir}markdown.md`, data: Buffer.isBuffer(s.markdown) ? s.markdown : Buffer.from(s.markdown ?? '# imported\n') });
      files.push({ name: `${dir}session.json`, data: Buffer.from(JSON.stringify(sj)) });
    }
  }
  files.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const manifest = {
    files: files.map((f) => ({ path: f.name, sha256: sha256(f.data), size: f.data.length })),
    format: 'session-archive-export',
    projects: projects.length,
    sessions: projects.reduce((n, p) => n + p.sessions.length, 0),
    version: 1,
  };
  return writeTar([{ name: 'manifest.json', data: Buffer.from(JSON.stringify(manifest)) }, ...files]);
}
