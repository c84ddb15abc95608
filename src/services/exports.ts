/**
 * Export: everything a user owns, and the projects of the teams they administer, as one
 * deterministic tar (src/domain/archive.ts), streamed.
 *
 * Two passes. The first, on one database snapshot and before anything is sent, reads every
 * session's content in its stored 1 MiB chunks to take the sha256 of each file (the manifest,
 * which lists them, comes first), then gives the snapshot back. The second streams the entries
 * without a snapshot, one statement per chunk, each checked against the version the first pass
 * saw (src/data/content.ts, `versionChunks`): nothing is held while the export waits for its
 * reader. A session changed or deleted between the passes, or one added, stops the export (the
 * archive would not match its manifest). Memory holds the manifest, a digest per session and one
 * chunk, whatever the size of the archive; every write waits for the reader (a client that stops
 * reading pauses the export).
 */
import crypto from 'node:crypto';
import type { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import * as tar from 'tar-stream';
import { contentChunks } from '../data/content';
import { versionChunks } from '../data/content-versions';
import { projectsOfOwners, sessionsOfProjectAfter, sessionTotalsOfProjects, type ExportOwner } from '../data/exports';
import { projectById, type ProjectRow } from '../data/projects';
import type { ContentPart, SessionRow } from '../domain/session-row';
import type { Snapshot, Sql } from '../data/sql';
import { teamsByIds } from '../data/teams';
import { userById } from '../data/users';
import {
  ARCHIVE_FORMAT,
  ARCHIVE_VERSION,
  byProjectDir,
  canonicalJson,
  DIR_MODE,
  END_BYTES,
  FILE_MODE,
  fileEntryBytes,
  fitsUstar,
  latest,
  manifestJson,
  MANIFEST_PATH,
  projectDir,
  projectJsonPath,
  sessionDir,
  sessionFilePath,
  sessionsDir,
  sha256,
  tarTime,
  type ManifestFile,
  type ProjectJson,
  type SessionFile,
} from '../domain/archive';
import { PROJECT_ID_RE } from '../domain/project';
import { AppError, projectForbidden, projectNotFound } from '../errors';
import { canManage, memberships, onlyTeamAdmins, projectRole, requireTeamAdmin } from './access';
import { recordAudit } from './audit';
import type { Ctx } from './context';
import { presentSessionJson } from './presenters/session-json';

const PAGE = 200;

type TarHeader = Partial<tar.Header> & { name: string };

interface ExportProgress {
  phase: 'scan' | 'write';
  sessions: number;
  sessionsTotal: number;
  /** scan: content bytes hashed; write: archive bytes written. */
  bytes: number;
  bytesTotal: number;
}

interface ExportOptions {
  /** Only these projects (each must be one the export takes: else 404 / 403); none → all. */
  projectIds?: readonly string[];
  /** Only the projects of this team, where the caller must be admin (else 404 / 403). */
  teamId?: string;
  onProgress?: (p: ExportProgress) => void;
}

interface OpenExport {
  /** Bytes of the whole archive (known before the first byte is sent). */
  readonly size: number;
  readonly projects: number;
  readonly sessions: number;
  /** Streams the archive into `out` (ends it), waiting for it whenever it is full. */
  writeTo(out: Writable): Promise<void>;
  /** Releases the first pass's snapshot if it is still held (always call it). */
  close(): Promise<void>;
}

/** The files of a session that the archive carries: markdown always, raw data and session data when stored. */
function filesOf(s: SessionRow): Array<[SessionFile, ContentPart | null, number]> {
  const out: Array<[SessionFile, ContentPart | null, number]> = [['markdown.md', 'markdown', s.markdownSize]];
  if (s.rawDataSize > 0) out.push(['raw', 'raw', s.rawDataSize]);
  if (s.sessionDataSize > 0) out.push(['session-data.json', 'session', s.sessionDataSize]);
  out.push(['session.json', null, 0]);
  return out;
}

function sessionJsonOf(s: SessionRow, uploadedBy: string | null): Buffer {
  return canonicalJson(presentSessionJson(s, uploadedBy));
}

/**
 * What an export takes: the caller's own projects and those of the teams where they are admin
 * (an export is a whole-project backup that an import can write back, so it takes the right to
 * manage the project: members and viewers read a team's sessions one by one, not as an archive).
 * With `teamId`, only that team's projects (the caller must be its admin: not a member → 404
 * `Team not found`, a member or viewer → 403).
 */
async function ownersToExport(ctx: Ctx, teamId: string | undefined): Promise<ExportOwner[]> {
  if (teamId !== undefined) {
    await requireTeamAdmin(ctx, teamId, "export the team's projects");
    return [{ type: 'team', id: teamId }];
  }
  const admin = (await memberships(ctx)).filter((m) => m.role === 'admin');
  return [{ type: 'user', id: ctx.user.id }, ...admin.map((m) => ({ type: 'team' as const, id: m.teamId }))];
}

/** The projects to export, in archive order; a named project that is not among them → 404 / 403. */
async function projectsToExport(ctx: Ctx, db: Snapshot, owners: readonly ExportOwner[], ids: readonly string[] | undefined): Promise<ProjectRow[]> {
  const wanted = ids && ids.length ? [...new Set(ids)] : undefined;
  for (const id of wanted ?? []) {
    if (!PROJECT_ID_RE.test(id)) throw projectNotFound(id);
    const p = await projectById(db, id);
    if (!p) throw projectNotFound(id);
    if (owners.some((o) => o.type === p.ownerType && o.id === p.ownerId)) continue;
    const role = await projectRole(ctx, p.ownerId);
    if (!role) throw projectForbidden(id);
    // The caller's own (or their team's) project, outside the one team asked for.
    if (canManage(role)) throw new AppError('FORBIDDEN', `Project ${id} is not one of the team's projects`, { projectId: id });
    // A team project the caller reads but does not manage.
    throw onlyTeamAdmins('export this project', { projectId: id });
  }
  const rows = await projectsOfOwners(db, owners, wanted);
  return rows.sort((a, b) => byProjectDir(a.id, b.id));
}

async function* sessionsOf(db: Sql, projectId: string): AsyncGenerator<SessionRow> {
  let after: string | null = null;
  for (;;) {
    const page = await sessionsOfProjectAfter(db, projectId, after, PAGE);
    for (const s of page) yield s;
    if (page.length < PAGE) return;
    after = page[page.length - 1].id;
  }
}

/** Waits until a writable that refused a write wants more, or fails if it goes away first. */
function drained(w: NodeJS.EventEmitter & { destroyed?: boolean }): Promise<void> {
  return new Promise((resolve, reject) => {
    if (w.destroyed) return reject(new Error('export stream closed'));
    const done = (err?: Error) => {
      w.off('drain', onDrain);
      w.off('close', onClose);
      w.off('error', onClose);
      if (err) reject(err);
      else resolve();
    };
    const onDrain = () => done();
    const onClose = () => done(new Error('export stream closed'));
    w.on('drain', onDrain);
    w.on('close', onClose);
    w.on('error', onClose);
  });
}

/**
 * Opens an export of the caller's projects on a snapshot of the database and takes the
 * digests of every file (the first pass). Throws before anything is sent when a named
 * project is not the caller's.
 */
export async function openExport(ctx: Ctx, opts: ExportOptions = {}): Promise<OpenExport> {
  const snap = ctx.deps.db.lazySnapshot();
  let open: OpenExport;
  try {
    open = await planExport(ctx, snap, opts);
  } catch (err) {
    await snap.release();
    throw err;
  }
  const teamId = opts.teamId ?? null;
  const target = teamId ? { type: 'team' as const, id: teamId } : { type: 'user' as const, id: ctx.user.id };
  const projectId = opts.projectIds?.length === 1 ? opts.projectIds[0] : null;
  try {
    await recordAudit(ctx, { action: 'export', target, teamId, projectId, detail: { projects: open.projects, sessions: open.sessions } });
  } catch (err) {
    await open.close();
    throw err;
  }
  return open;
}

async function planExport(ctx: Ctx, snap: Snapshot, opts: ExportOptions): Promise<OpenExport> {
  const owners = await ownersToExport(ctx, opts.teamId);
  const projects = await projectsToExport(ctx, snap, owners, opts.projectIds);
  const user = await userById(snap, ctx.user.id);
  if (!user) throw projectNotFound('');
  const teamIds = [...new Set(projects.filter((p) => p.ownerType === 'team').map((p) => p.ownerId))];
  const teamName = new Map((teamIds.length ? await teamsByIds(snap, teamIds) : []).map((t) => [t.id, t.name]));
  const ownerOf = (p: ProjectRow): ProjectJson['owner'] =>
    p.ownerType === 'team' ? { type: 'team', name: teamName.get(p.ownerId) ?? '' } : { type: 'user', name: user.name, email: user.email };
  const uploaderEmail = new Map<string, string | null>([[user.id, user.email]]);
  const uploadedBy = async (userId: string): Promise<string | null> => {
    if (!uploaderEmail.has(userId)) uploaderEmail.set(userId, (await userById(snap, userId))?.email ?? null);
    return uploaderEmail.get(userId)!;
  };

  // Totals for progress: one statement over the rows, no content.
  const { sessions: sessionsTotal, bytes: contentTotal } = await sessionTotalsOfProjects(
    snap,
    projects.map((p) => p.id),
  );

  // First pass: sizes and digests of every file; the latest update inside each project.
  const files: ManifestFile[] = [];
  const projectLatest = new Map<string, Date>();
  const sessionsIn = new Map<string, number>();
  // The version of each session's content the manifest describes (the second pass reads only it).
  const digestOf = new Map<string, string>();
  let sessionCount = 0;
  let hashed = 0;
  const report = () => opts.onProgress?.({ phase: 'scan', sessions: sessionCount, sessionsTotal, bytes: hashed, bytesTotal: contentTotal });
  for (const p of projects) {
    const projectJson = canonicalJson(projectJsonOf(p, ownerOf(p)));
    let newest = p.updatedAt;
    const sessionFiles: ManifestFile[] = [];
    for await (const s of sessionsOf(snap, p.id)) {
      for (const [file, part, size] of filesOf(s)) {
        const path = sessionFilePath(p.id, s.id, file);
        if (part === null) {
          const json = sessionJsonOf(s, await uploadedBy(s.uploadedBy ?? s.userId));
          sessionFiles.push({ path, size: json.length, sha256: sha256(json) });
          continue;
        }
        const h = crypto.createHash('sha256');
        let n = 0;
        for await (const chunk of contentChunks(snap, p.id, s.id, part)) {
          h.update(chunk);
          n += chunk.length;
          hashed += chunk.length;
        }
        if (n !== size) throw new Error(`stored ${part} of session ${p.id}/${s.id} has ${n} bytes, its row says ${size}`);
        sessionFiles.push({ path, size, sha256: h.digest('hex') });
      }
      if (s.updatedAt.getTime() > newest.getTime()) newest = s.updatedAt;
      digestOf.set(sessionDir(p.id, s.id), s.contentDigest);
      sessionCount++;
      sessionsIn.set(p.id, (sessionsIn.get(p.id) ?? 0) + 1);
      report();
    }
    projectLatest.set(p.id, newest);
    files.push({ path: projectJsonPath(p.id), size: projectJson.length, sha256: sha256(projectJson) }, ...sessionFiles);
  }
  for (const f of files) if (!fitsUstar(f.path)) throw new Error(`archive path does not fit a tar header: ${f.path}`);
  const manifest = await manifestJson({ format: ARCHIVE_FORMAT, version: ARCHIVE_VERSION, projects: projects.length, sessions: sessionCount, files });
  // Every directory entry is a header alone (projects/, each project's, its sessions/ when it has
  // sessions, each session's); files are a header and their padded data.
  let dirCount = projects.length ? 1 : 0;
  for (const p of projects) {
    const n = sessionsIn.get(p.id) ?? 0;
    dirCount += 1 + (n ? 1 + n : 0);
  }
  const size = fileEntryBytes(manifest.length) + files.reduce((n, f) => n + fileEntryBytes(f.size), 0) + dirCount * fileEntryBytes(0) + END_BYTES;
  const overall = latest(projectLatest.values());
  const fileAt = new Map(files.map((f) => [f.path, f]));
  // Everything the second pass needs is in memory or read a chunk at a time: the snapshot goes back now.
  await snap.release();
  const reads = ctx.deps.db.reads;
  const knownUploader = (userId: string) => uploaderEmail.get(userId) ?? null;

  async function writeTo(out: Writable): Promise<void> {
    const pack = tar.pack();
    const piped = pipeline(pack, out);
    piped.catch(() => undefined);
    let written = 0;
    let sessionsWritten = 0;
    const progress = () => opts.onProgress?.({ phase: 'write', sessions: sessionsWritten, sessionsTotal: sessionCount, bytes: written, bytesTotal: size });
    const header = (name: string, mtime: Date, dir: boolean, bytes = 0): TarHeader => ({
      name,
      type: dir ? 'directory' : 'file',
      mode: dir ? DIR_MODE : FILE_MODE,
      uid: 0,
      gid: 0,
      uname: '',
      gname: '',
      mtime: tarTime(mtime),
      size: bytes,
    });
    const put = (h: TarHeader, body?: Buffer | AsyncIterable<Buffer>): Promise<void> =>
      new Promise<void>((resolve, reject) => {
        const cb = (err?: Error | null) => (err ? reject(err) : resolve());
        if (body === undefined || Buffer.isBuffer(body)) return void pack.entry(h, body ?? Buffer.alloc(0), cb);
        const sink = pack.entry(h, cb);
        (async () => {
          let n = 0;
          for await (const chunk of body) {
            n += chunk.length;
            if (n > (h.size ?? 0)) throw new Error(`${h.name} grew while exported`);
            written += chunk.length;
            if (!sink.write(chunk)) await drained(sink);
            progress();
          }
          if (n !== h.size) throw new Error(`${h.name} changed while exported`);
          // streamx types `end` with a required chunk; ending without one is what it does at run time.
          (sink as unknown as { end(): void }).end();
        })().catch((err: Error) => {
          sink.destroy(err);
          reject(err);
        });
      }).then(() => {
        written += fileEntryBytes(h.size ?? 0) - (body && !Buffer.isBuffer(body) ? (h.size ?? 0) : 0);
        progress();
      });

    try {
      await put(header(MANIFEST_PATH, overall, false, manifest.length), manifest);
      if (projects.length) await put(header('projects/', overall, true));
      for (const p of projects) {
        const newest = projectLatest.get(p.id)!;
        await put(header(projectDir(p.id), newest, true));
        const pj = canonicalJson(projectJsonOf(p, ownerOf(p)));
        await put(header(projectJsonPath(p.id), newest, false, pj.length), pj);
        let first = true;
        let sessionsOfProject = 0;
        for await (const s of sessionsOf(reads, p.id)) {
          if (first) await put(header(sessionsDir(p.id), newest, true));
          first = false;
          await put(header(sessionDir(p.id, s.id), s.updatedAt, true));
          const contentDigest = digestOf.get(sessionDir(p.id, s.id));
          for (const [file, part] of filesOf(s)) {
            const path = sessionFilePath(p.id, s.id, file);
            const listed = fileAt.get(path);
            if (listed === undefined || contentDigest === undefined) throw new Error(`${path} appeared during the export`);
            if (part === null) {
              const json = sessionJsonOf(s, knownUploader(s.uploadedBy ?? s.userId));
              if (sha256(json) !== listed.sha256) throw new Error(`${path} changed during the export`);
              await put(header(path, s.updatedAt, false, json.length), json);
            } else {
              const ref = { projectId: p.id, sessionId: s.id, part };
              await put(header(path, s.updatedAt, false, listed.size), versionChunks(reads, ref, { contentDigest, size: listed.size }));
            }
          }
          sessionsWritten++;
          sessionsOfProject++;
          progress();
        }
        if (sessionsOfProject !== (sessionsIn.get(p.id) ?? 0)) throw new Error(`a session of project ${p.id} was deleted during the export`);
      }
      pack.finalize();
    } catch (err) {
      pack.destroy(err as Error);
      await piped.catch(() => undefined);
      throw err;
    }
    await piped;
    // The end of the tar (two zero blocks) is written by finalize: the whole archive is out.
    written = size;
    progress();
  }

  return { size, projects: projects.length, sessions: sessionCount, writeTo, close: () => snap.release() };
}

function projectJsonOf(p: ProjectRow, owner: ProjectJson['owner']): ProjectJson {
  return { name: p.name, icon: p.icon, color: p.color, owner, createdAt: p.createdAt.toISOString(), updatedAt: p.updatedAt.toISOString() };
}
