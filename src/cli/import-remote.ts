/**
 * `import-remote --from URL --token T --email E [--project ID]…`: copies projects and sessions from
 * another server through its REST API, using only requests the hosted service serves too (the
 * SDKs' and the upload CLI's): GET /projects, GET /projects/{id}/sessions, GET of a session as
 * JSON (its markdown inside) and with the session-data type; raw data through GET …/raw, which
 * some sources do not serve (reported, the session is copied without it). Runs again resume: a
 * session already here with the source's `updatedAt` and markdown size is not fetched again.
 * Sessions are copied `concurrency` at a time (default 4): against a remote source each one waits
 * on two or three round trips, which a one-at-a-time copy would pay in turn. What it prints stays
 * in the source's order.
 */
import type { Config } from '../config';
import type { DbHandles } from '../db/client';
import type { z } from 'zod';
import type { SessionJson } from '../api/schemas/archive';
import type { Project, Session } from '../api/schemas/resources';
import { PROJECT_ID_RE } from '../domain/project';
import { SESSION_ID_RE } from '../domain/session';
import { createLogger } from '../logger';
import { createOffload, inlineOffload } from '../offload';
import type { Ctx, Deps } from '../services/context';
import { importedSessionState, writeImportedSession } from '../services/import-session';
import { ensureImportedProject } from '../services/imports';
import type { ProgressSink } from './archive';

const SESSION_DATA_TYPE = 'application/vnd.specstory.session-data+json';
/** Sessions copied at once unless `--concurrency` says otherwise. */
const IMPORT_REMOTE_CONCURRENCY = 4;
const ICONS_DEFAULT = { icon: 'Code2', color: 'blue' };

/**
 * What the source answers, read as this server's own REST shapes; every field but the id may be
 * missing (the source may be an older or another server).
 */
type RemoteProject = Partial<z.output<typeof Project>> & { id: string };

type RemoteSession = Partial<z.output<typeof Session>> & { id: string };

class RemoteError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * GET that follows redirects only within the source's origin (scheme, host and port): a redirect
 * elsewhere, another port of the same machine included, is refused, so that the source cannot
 * send the token, or this CLI's requests, to a service of its choosing.
 */
async function sameOriginFetch(url: string, headers: Record<string, string>): Promise<Response> {
  const origin = new URL(url).origin;
  let at = url;
  for (let hops = 0; ; hops++) {
    const res = await fetch(at, { headers, redirect: 'manual' });
    const location = res.status >= 300 && res.status < 400 ? res.headers.get('location') : null;
    if (location === null) return res;
    await res.body?.cancel();
    const next = new URL(location, at);
    if (next.origin !== origin) throw new RemoteError(res.status, `the source redirects to another host (${next.origin}): not followed`);
    if (hops >= 5) throw new RemoteError(res.status, 'the source redirects too many times');
    at = next.href;
  }
}

/** A client of the source: bearer token, JSON envelope, 429/503 waited out (Retry-After). */
function remoteClient(base: string, token: string, say: (line: string) => void) {
  const root = base.replace(/\/+$/, '');
  async function get(path: string, accept = 'application/json'): Promise<Response> {
    for (let attempt = 0; ; attempt++) {
      let res: Response;
      try {
        res = await sameOriginFetch(`${root}/api/v1${path}`, {
          Authorization: `Bearer ${token}`,
          Accept: accept,
          'User-Agent': 'session-archive-import-remote',
        });
      } catch (err) {
        if (err instanceof RemoteError) throw err;
        if (attempt >= 4) throw new RemoteError(0, `cannot reach ${root}: ${(err as Error).message}`);
        await sleep(500 * 2 ** attempt);
        continue;
      }
      if ((res.status === 429 || res.status === 503 || res.status === 502 || res.status === 504) && attempt < 8) {
        const wait = Math.min(3600, Number(res.headers.get('retry-after')) || 2 ** attempt);
        await res.body?.cancel();
        if (wait >= 5) say(`source answered ${res.status}: waiting ${wait} s`);
        await sleep(wait * 1000);
        continue;
      }
      return res;
    }
  }
  async function json<T>(path: string): Promise<T> {
    const res = await get(path);
    const text = await res.text();
    let body: { success?: boolean; data?: T; error?: string } | undefined;
    try {
      body = JSON.parse(text) as typeof body;
    } catch {
      body = undefined;
    }
    if (!res.ok) throw new RemoteError(res.status, `${res.status} ${body?.error ?? text.slice(0, 200)}`);
    if (!body || body.data === undefined) throw new RemoteError(res.status, `unexpected answer to GET ${path}`);
    return body.data;
  }
  async function bytes(path: string, accept: string): Promise<Buffer> {
    const res = await get(path, accept);
    if (!res.ok) {
      await res.body?.cancel();
      throw new RemoteError(res.status, `${res.status}`);
    }
    return Buffer.from(await res.arrayBuffer());
  }
  return { json, bytes };
}

/** Every session of a project: one request (the hosted service answers all of them); this server's pages are followed. */
async function listSessions(client: ReturnType<typeof remoteClient>, projectId: string): Promise<RemoteSession[]> {
  const out: RemoteSession[] = [];
  let path = `/projects/${encodeURIComponent(projectId)}/sessions`;
  for (;;) {
    const page = await client.json<{ sessions: RemoteSession[]; nextCursor?: string | null }>(path);
    out.push(...page.sessions);
    if (!page.nextCursor) return out;
    path = `/projects/${encodeURIComponent(projectId)}/sessions?limit=1000&cursor=${encodeURIComponent(page.nextCursor)}`;
  }
}

const iso = (v: string | undefined, fallback: string) => (v && !Number.isNaN(Date.parse(v)) ? new Date(v).toISOString() : fallback);

/** The session as an archive's session.json would hold it (what the import path writes). */
function sessionJsonOf(s: RemoteSession, detail: RemoteSession): SessionJson {
  const meta = { ...(detail.metadata ?? s.metadata ?? {}) } as Record<string, unknown>;
  const tags = Array.isArray(meta.tags) ? (meta.tags as string[]) : [];
  delete meta.tags;
  const now = new Date().toISOString();
  const createdAt = iso(detail.createdAt ?? s.createdAt, now);
  const updatedAt = iso(detail.updatedAt ?? s.updatedAt, createdAt);
  return {
    name: detail.name ?? s.name ?? s.id,
    userTitle: detail.userTitle ?? s.userTitle ?? null,
    metadata: meta as SessionJson['metadata'],
    tags,
    startedAt: iso(detail.startedAt ?? s.startedAt, createdAt),
    endedAt: iso(detail.endedAt ?? s.endedAt, updatedAt),
    createdAt,
    updatedAt,
    etag: detail.etag ?? s.etag ?? '',
    uploadedBy: null,
    redactions: (detail.redactions ?? s.redactions ?? []).map((r) => ({ rule: r.rule, count: r.count })),
  };
}

/** Returns how many items could not be copied (each printed). */
export async function importRemoteFromCli(
  config: Config,
  db: DbHandles,
  args: { userId: string; from: string; token: string; projectIds: string[]; concurrency?: number },
  out: (line: string) => void,
  progress: ProgressSink,
): Promise<number> {
  const logger = createLogger(config.logLevel === 'info' ? 'warn' : config.logLevel);
  const offload = createOffload({ threads: config.offloadThreads });
  const deps: Deps = { config, db, logger, offload, search: undefined as never };
  const ctx: Ctx = { deps, user: { id: args.userId, keyId: null }, log: logger };
  const client = remoteClient(args.from, args.token, out);
  const concurrency = args.concurrency ?? IMPORT_REMOTE_CONCURRENCY;
  const notCopied: string[] = [];
  const warnings: string[] = [];
  const counts = { projects: 0, copied: 0, unchanged: 0 };
  try {
    const all = (await client.json<{ projects: RemoteProject[] }>('/projects')).projects;
    const wanted = args.projectIds.length ? all.filter((p) => args.projectIds.includes(p.id)) : all;
    for (const id of args.projectIds) if (!all.some((p) => p.id === id)) notCopied.push(`project ${id}: not found on the source`);
    const lists: Array<[RemoteProject, RemoteSession[]]> = [];
    for (const p of wanted) {
      if (typeof p.id !== 'string' || !PROJECT_ID_RE.test(p.id)) {
        notCopied.push(`project ${JSON.stringify(p.id)}: not a valid project id here (an upload would be refused): not copied`);
        continue;
      }
      try {
        lists.push([p, await listSessions(client, p.id)]);
      } catch (err) {
        notCopied.push(`project ${p.id}: cannot list its sessions (${(err as Error).message})`);
      }
    }
    const sessionsTotal = lists.reduce((n, [, l]) => n + l.length, 0);
    const bytesTotal = lists.reduce((n, [, l]) => n + l.reduce((m, s) => m + (s.markdownSize ?? 0) + (s.rawDataSize ?? 0) + (s.sessionDataSize ?? 0), 0), 0);
    let done = 0;
    let bytes = 0;
    const tick = () => progress.update({ label: 'import-remote', sessions: done, sessionsTotal, bytes, bytesTotal });
    tick();
    for (const [p, sessions] of lists) {
      const now = new Date().toISOString();
      const state = await ensureImportedProject(ctx, p.id, {
        name: p.name || p.id,
        icon: (p.icon as never) ?? ICONS_DEFAULT.icon,
        color: (p.color as never) ?? ICONS_DEFAULT.color,
        createdAt: iso(p.createdAt, now),
        updatedAt: iso(p.updatedAt, now),
      }).catch(() => ensureImportedProject(ctx, p.id, null));
      if (state === 'foreign') {
        notCopied.push(`project ${p.id}: belongs to another account here (${sessions.length} sessions not copied)`);
        done += sessions.length;
        continue;
      }
      if (state === 'created') counts.projects++;
      // Each session's lines, printed in the source's order once the project is done.
      const said = sessions.map(() => ({ warnings: [] as string[], notCopied: [] as string[] }));
      const copyOne = async (s: RemoteSession, mine: (typeof said)[number]) => {
        const size = (s.markdownSize ?? 0) + (s.rawDataSize ?? 0) + (s.sessionDataSize ?? 0);
        const where = `${p.id}/${JSON.stringify(s.id)}`;
        try {
          if (typeof s.id !== 'string' || !SESSION_ID_RE.test(s.id)) throw new Error('not a valid session id here (an upload would be refused): not copied');
          // Resume: already here as the source has it (time and size; the tag when it is one of ours).
          const here = await importedSessionState(ctx, p.id, s.id);
          const srcUpdated = s.updatedAt ? Date.parse(s.updatedAt) : NaN;
          if (
            here &&
            ((s.etag && here.etag === s.etag) || (here.updatedAt.getTime() === srcUpdated && here.markdownSize === s.markdownSize)) &&
            here.sessionDataSize >= (s.sessionDataSize ?? 0)
          ) {
            counts.unchanged++;
            return;
          }
          if (here && Number.isFinite(srcUpdated) && here.updatedAt.getTime() > srcUpdated) {
            mine.warnings.push(`${where}: changed here since (newer than the source): kept`);
            counts.unchanged++;
            return;
          }
          const path = `/projects/${encodeURIComponent(p.id)}/sessions/${encodeURIComponent(s.id)}`;
          const detail = await client.json<{ session: RemoteSession & { markdownContent?: string } }>(path);
          const markdown = Buffer.from(detail.session.markdownContent ?? '', 'utf8');
          let whole = true;
          let raw: Buffer = Buffer.alloc(0);
          if ((s.rawDataSize ?? detail.session.rawDataSize ?? 0) > 0) {
            raw = await client.bytes(`${path}/raw`, 'application/octet-stream').catch((err: RemoteError) => {
              mine.warnings.push(`${where}: raw data not copied (the source does not serve it: ${err.message})`);
              whole = false;
              return Buffer.alloc(0);
            });
          }
          let sessionData: Buffer | null = null;
          if ((s.sessionDataSize ?? detail.session.sessionDataSize ?? 0) > 0) {
            sessionData = await client.bytes(path, SESSION_DATA_TYPE).catch((err: RemoteError) => {
              mine.warnings.push(`${where}: session data not copied (${err.message})`);
              whole = false;
              return null;
            });
          }
          const json = sessionJsonOf(s, detail.session);
          const prepared = await (offload ?? inlineOffload).prepareImport({ json, markdown, raw, sessionData }, config.redactSecrets, config.prices);
          await writeImportedSession(ctx, { projectId: p.id, sessionId: s.id.toLowerCase(), json, prepared, onConflict: 'overwrite', keepEtag: whole });
          counts.copied++;
        } catch (err) {
          mine.notCopied.push(`${where}: ${(err as Error).message}`);
        } finally {
          done++;
          bytes += size;
          tick();
        }
      };
      let next = 0;
      const copier = async () => {
        while (next < sessions.length) {
          const i = next++;
          await copyOne(sessions[i], said[i]);
        }
      };
      await Promise.all(Array.from({ length: Math.min(concurrency, sessions.length) }, copier));
      for (const x of said) {
        warnings.push(...x.warnings);
        notCopied.push(...x.notCopied);
      }
    }
  } finally {
    progress.stop();
    await offload.close();
  }
  out(
    `copied ${counts.copied} session${counts.copied === 1 ? '' : 's'} (${counts.unchanged} already here), ${counts.projects} new project${counts.projects === 1 ? '' : 's'}`,
  );
  for (const w of warnings) out(`not copied: ${w}`);
  for (const n of notCopied) out(`could not copy: ${n}`);
  return notCopied.length;
}
