/**
 * Import of an export archive (src/domain/archive.ts), streamed: the manifest first (checked
 * whole: nothing is written before it passes), then one session at a time, each file checked
 * against the manifest's size and sha256 before anything of its session is written. A bad or
 * missing file is reported with its path and its session is skipped; the rest goes on.
 */
import crypto from 'node:crypto';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import * as tar from 'tar-stream';
import { lockProjectOwner, projectById } from '../data/projects';
import {
  ARCHIVE_FORMAT,
  isArchiveDir,
  JSON_FILE_MAX_BYTES,
  MANIFEST_MAX_BYTES,
  MANIFEST_PATH,
  MANIFEST_SLICE,
  minimumArchiveBytes,
  nextTurn,
  parseArchiveJson,
  parseArchivePath,
  parseManifest,
  ProjectJsonSchema,
  sessionDir,
  SessionJsonSchema,
  type ManifestFile,
  type SessionFile,
} from '../domain/archive';
import { AppError, invalid } from '../errors';
import { inlineOffload, ownedBuffer, release } from '../offload';
import type { PreparedUpload } from '../domain/upload';
import type { Ctx } from './context';
import { insertImportedProject } from '../data/exports';
import { inTransaction } from '../data/transaction';
import { personalTarget, writeImportedSession, type ImportOutcome, type ImportTarget } from './import-session';
import { requireTeamWriter } from './access';
import { memberOf } from '../data/teams';
import { userByEmail } from '../data/users';

/** An entry of the tar being read: its header and a stream of its bytes. */
type TarEntry = Readable & { header: tar.Header };

export type OnConflict = 'skip' | 'overwrite' | 'newer';
export const ON_CONFLICT: readonly OnConflict[] = ['skip', 'overwrite', 'newer'];

export interface ImportSummary {
  projects: { created: number; existing: number };
  sessions: { created: number; updated: number; skipped: number };
  errors: Array<{ path: string; error: string }>;
}

export interface ImportProgress {
  sessions: number;
  sessionsTotal: number;
  bytes: number;
}

export interface ImportOptions {
  onConflict: OnConflict;
  /** The archive may be at most this many bytes (413 beyond). */
  maxBytes: number;
  /** A content file may be at most this many bytes (what an upload could store). */
  maxFileBytes: number;
  /** Import into this team's projects (see importTarget); none → the caller's own. */
  teamId?: string;
  /** No byte for this long → 408 (a long import is fine; a stalled one is not). */
  idleMs?: number;
  onProgress?: (p: ImportProgress) => void;
}

export type ProjectJsonInput = Pick<ReturnType<typeof ProjectJsonSchema.parse>, 'name' | 'icon' | 'color' | 'createdAt' | 'updatedAt'>;

/**
 * The project of an import, created for the target (the caller, or a team) with the given
 * appearance and times when it does not exist; one of another owner's is never touched.
 */
export async function ensureImportedProject(
  ctx: Ctx,
  projectId: string,
  json: ProjectJsonInput | null,
  target: ImportTarget = personalTarget(ctx),
): Promise<'created' | 'existing' | 'foreign'> {
  const existing = await projectById(ctx.deps.db.writes, projectId);
  if (existing) return existing.ownerType === target.ownerType && existing.ownerId === target.ownerId ? 'existing' : 'foreign';
  const now = new Date();
  const r = await inTransaction(ctx.deps.db, ctx.guard, async (tx) => {
    const inserted = await insertImportedProject(tx, {
      id: projectId,
      ownerType: target.ownerType,
      ownerId: target.ownerId,
      name: json?.name ?? projectId,
      icon: json?.icon ?? 'Code2',
      color: json?.color ?? 'blue',
      createdAt: json ? new Date(json.createdAt) : now,
      updatedAt: json ? new Date(json.updatedAt) : now,
    });
    const owner = await lockProjectOwner(tx, projectId, 'share');
    return { inserted, mine: owner === target.ownerId };
  });
  return !r.mine ? 'foreign' : r.inserted ? 'created' : 'existing';
}

/**
 * Where an import writes: the caller's own projects, or with `teamId` the team's, which takes the
 * right to create projects in it (admin or member; not a member → 404 `Team not found`, a viewer
 * → 403), checked before a byte of the archive is read.
 */
export async function importTarget(ctx: Ctx, teamId: string | undefined): Promise<ImportTarget> {
  if (teamId === undefined) return personalTarget(ctx);
  const role = await requireTeamWriter(ctx, teamId);
  return { ownerType: 'team', ownerId: teamId, role };
}

export function parseOnConflict(v: unknown): OnConflict {
  if (v === undefined || v === '') return 'skip';
  if (typeof v === 'string' && (ON_CONFLICT as readonly string[]).includes(v)) return v as OnConflict;
  throw invalid(`Invalid value for onConflict. Must be one of: ${ON_CONFLICT.join(', ')}`);
}

/** Counts the bytes of the archive as they come: over the limit → 413; silent too long → 408. */
function limiter(maxBytes: number, idleMs: number, onBytes: (n: number) => void): Transform {
  let n = 0;
  let timer: NodeJS.Timeout | undefined;
  const t: Transform = new Transform({
    transform(chunk: Buffer, _enc, cb) {
      n += chunk.length;
      arm();
      if (n > maxBytes) return cb(new AppError('PAYLOAD_TOO_LARGE', `Archive too large: more than MAX_IMPORT_BYTES (${maxBytes} bytes)`));
      onBytes(n);
      cb(null, chunk);
    },
    flush(cb) {
      clearTimeout(timer);
      cb();
    },
    destroy(err, cb) {
      clearTimeout(timer);
      cb(err);
    },
  });
  const arm = () => {
    clearTimeout(timer);
    timer = setTimeout(() => t.destroy(new AppError('REQUEST_TIMEOUT', `No archive data for ${Math.round(idleMs / 1000)} s`)), idleMs);
    timer.unref();
  };
  arm();
  return t;
}

/** An entry's bytes, at most `max` (else null after reading it off), with their sha256. */
async function readEntry(stream: AsyncIterable<Buffer>, size: number, max: number): Promise<{ bytes: Buffer | null; sha256: string; size: number }> {
  const h = crypto.createHash('sha256');
  const buf = size <= max ? ownedBuffer(Math.max(1, size)) : null;
  let n = 0;
  for await (const chunk of stream) {
    h.update(chunk);
    if (buf && n + chunk.length <= size) chunk.copy(buf, n);
    n += chunk.length;
  }
  return { bytes: buf && n === size ? buf.subarray(0, size) : null, sha256: h.digest('hex'), size: n };
}

/**
 * Who is recorded as the uploader of a session an import creates: the caller, except in a team
 * import by a team admin, where the archive's uploader is kept when that email is a member of the
 * team here (so that a team's archive moves with its uploaders; a member's import cannot put
 * sessions in someone else's name).
 */
function uploaders(ctx: Ctx, target: ImportTarget): (email: string | null) => Promise<string> {
  if (target.ownerType !== 'team' || target.role !== 'admin') return () => Promise.resolve(ctx.user.id);
  const known = new Map<string, Promise<string>>();
  return (email) => {
    if (!email) return Promise.resolve(ctx.user.id);
    let p = known.get(email);
    if (!p) {
      p = (async () => {
        const user = await userByEmail(ctx.deps.db.writes, email);
        return user && (await memberOf(ctx.deps.db.writes, target.ownerId, user.id)) ? user.id : ctx.user.id;
      })();
      known.set(email, p);
    }
    return p;
  };
}

/** What has arrived of one session. */
interface PendingSession {
  projectId: string;
  sessionId: string;
  files: Partial<Record<SessionFile, Buffer>>;
  failed: boolean;
}

export async function importArchive(ctx: Ctx, input: Readable, opts: ImportOptions): Promise<ImportSummary> {
  const target = await importTarget(ctx, opts.teamId);
  const uploaderOf = uploaders(ctx, target);
  const summary: ImportSummary = { projects: { created: 0, existing: 0 }, sessions: { created: 0, updated: 0, skipped: 0 }, errors: [] };
  const report = (path: string, error: string) => summary.errors.push({ path, error });
  let bytesRead = 0;
  const counter = limiter(opts.maxBytes, opts.idleMs ?? 60_000, (n) => (bytesRead = n));
  const extract = tar.extract();
  const piped = pipeline(input, counter, extract as unknown as NodeJS.WritableStream);
  piped.catch(() => undefined);
  const entries = (extract as AsyncIterable<TarEntry>)[Symbol.asyncIterator]();

  // The manifest: the first entry, read whole and checked before anything else.
  let first: IteratorResult<TarEntry>;
  try {
    first = await entries.next();
  } catch (err) {
    throw err instanceof AppError ? err : invalid('Not a tar archive (or a damaged one): the body must be an export archive (application/x-tar)');
  }
  if (first.done) throw invalid('Empty body: the body must be an export archive (application/x-tar)');
  const mh = first.value.header;
  if (mh.name !== MANIFEST_PATH || mh.type !== 'file') {
    first.value.resume();
    throw invalid(`Not a ${ARCHIVE_FORMAT} archive: its first entry must be ${MANIFEST_PATH}, found ${JSON.stringify(mh.name)}`);
  }
  if (mh.size > MANIFEST_MAX_BYTES) throw invalid(`${MANIFEST_PATH} is larger than ${MANIFEST_MAX_BYTES} bytes`);
  let manifestBytes: Buffer | null;
  try {
    manifestBytes = (await readEntry(first.value, mh.size, MANIFEST_MAX_BYTES)).bytes;
  } catch (err) {
    throw err instanceof AppError ? err : invalid(`${MANIFEST_PATH} is truncated`);
  }
  if (!manifestBytes) throw invalid(`${MANIFEST_PATH} is truncated`);
  let manifest;
  try {
    manifest = await parseManifest(manifestBytes);
  } catch (err) {
    throw invalid((err as Error).message);
  }
  const least = minimumArchiveBytes(manifest, manifestBytes.length);
  if (least > opts.maxBytes)
    throw new AppError('PAYLOAD_TOO_LARGE', `Archive too large: its manifest lists ${least} bytes, more than MAX_IMPORT_BYTES (${opts.maxBytes} bytes)`);

  const listed = new Map<string, ManifestFile>();
  const expectedFiles = new Map<string, Set<SessionFile>>();
  const sessionsTotal = new Set<string>();
  for (const [i, f] of manifest.files.entries()) {
    if (i && i % MANIFEST_SLICE === 0) await nextTurn();
    listed.set(f.path, f);
    const p = parseArchivePath(f.path)!;
    if (p.kind !== 'session') continue;
    const key = sessionDir(p.projectId, p.sessionId);
    sessionsTotal.add(key);
    const set = expectedFiles.get(key) ?? new Set<SessionFile>();
    set.add(p.file);
    expectedFiles.set(key, set);
  }
  const seen = new Set<string>();
  const done = new Set<string>();
  /** Per project: may its sessions be written (it is the caller's), or why not. */
  const projectState = new Map<string, { ok: true } | { ok: false; error: string }>();
  let pending: PendingSession | null = null;
  const progress = () => opts.onProgress?.({ sessions: done.size, sessionsTotal: sessionsTotal.size, bytes: bytesRead });

  /** The project of an archive, created for the caller when new; another account's is reported, never touched. */
  async function ensureProject(projectId: string, json: ProjectJsonInput | null, path: string): Promise<void> {
    if (projectState.has(projectId)) return;
    const state = await ensureImportedProject(ctx, projectId, json, target);
    if (state === 'foreign') {
      const error =
        target.ownerType === 'team'
          ? `Project ${projectId} is not a project of this team: not imported`
          : `Project ${projectId} belongs to another account: not imported`;
      report(path, error);
      projectState.set(projectId, { ok: false, error });
      return;
    }
    summary.projects[state]++;
    projectState.set(projectId, { ok: true });
  }

  async function finish(s: PendingSession): Promise<void> {
    const dir = sessionDir(s.projectId, s.sessionId);
    done.add(dir);
    let prepared: PreparedUpload | undefined;
    try {
      if (s.failed) return;
      for (const f of expectedFiles.get(dir) ?? []) {
        if (!s.files[f]) return void report(`${dir}${f}`, 'missing from the archive (truncated?): session not imported');
      }
      const jsonBytes = s.files['session.json'];
      if (!jsonBytes) return void report(`${dir}session.json`, 'missing: session not imported');
      if (!s.files['markdown.md']) return void report(`${dir}markdown.md`, 'missing: session not imported');
      await ensureProject(s.projectId, null, `projects/${s.projectId}/project.json`);
      const state = projectState.get(s.projectId)!;
      if (!state.ok) return void report(dir, `not imported: ${state.error}`);
      let outcome: ImportOutcome;
      try {
        const json = parseArchiveJson(SessionJsonSchema, jsonBytes, 'session.json');
        prepared = await (ctx.deps.offload ?? inlineOffload).prepareImport(
          { json, markdown: s.files['markdown.md'], raw: s.files.raw ?? Buffer.alloc(0), sessionData: s.files['session-data.json'] ?? null },
          ctx.deps.config.redactSecrets,
        );
        outcome = await writeImportedSession(ctx, {
          projectId: s.projectId,
          sessionId: s.sessionId,
          json,
          prepared,
          onConflict: opts.onConflict,
          target,
          uploaderId: await uploaderOf(json.uploadedBy),
        });
      } catch (err) {
        if (err instanceof AppError && err.code !== 'VALIDATION_ERROR') throw err;
        return void report(dir, `not imported: ${(err as Error).message}`);
      }
      summary.sessions[outcome]++;
    } finally {
      // The session is written (or not imported): its content (up to about 50 MB a part) is given
      // back now rather than at some later collection, where the next large session's would come
      // on top of it.
      const u = prepared?.upload;
      release(s.files['markdown.md'], s.files.raw, s.files['session-data.json'], u?.markdown, u?.rawData, u?.sessionData);
      s.files = {};
      progress();
    }
  }

  try {
    for (;;) {
      const next = await entries.next();
      if (next.done) break;
      const entry = next.value;
      const { name, type, size } = entry.header;
      if (type === 'directory') {
        if (!isArchiveDir(name)) report(name, 'not a directory an archive has: ignored');
        entry.resume();
        continue;
      }
      const path = name;
      const where = parseArchivePath(path);
      const key = where?.kind === 'session' ? sessionDir(where.projectId, where.sessionId) : null;
      // A session's files are contiguous (entries are sorted): anything else closes it.
      if (pending && sessionDir(pending.projectId, pending.sessionId) !== key) {
        const s = pending;
        pending = null;
        await finish(s);
      }
      const expected = listed.get(path);
      if (type !== 'file' || !where || !expected) {
        report(path, type !== 'file' ? 'not a regular file: ignored' : 'not listed in the manifest: ignored');
        entry.resume();
        continue;
      }
      if (seen.has(path)) {
        report(path, 'appears twice in the archive: ignored');
        entry.resume();
        continue;
      }
      seen.add(path);
      if (where.kind === 'session' && done.has(key!)) {
        report(path, 'out of order (sessions must be contiguous): ignored');
        entry.resume();
        continue;
      }
      const max = where.kind === 'project' || where.file === 'session.json' ? JSON_FILE_MAX_BYTES : opts.maxFileBytes;
      const got = size !== expected.size ? await readEntry(entry, size, -1) : await readEntry(entry, size, max);
      const problem =
        got.size !== expected.size
          ? `size ${got.size} does not match the manifest's ${expected.size}`
          : got.sha256 !== expected.sha256
            ? 'sha256 does not match the manifest'
            : !got.bytes
              ? `larger than ${max} bytes`
              : null;
      if (where.kind === 'project') {
        if (problem) {
          report(path, `${problem}: project not imported`);
          projectState.set(where.projectId, { ok: false, error: `${path} failed its check` });
          continue;
        }
        try {
          const pj = parseArchiveJson(ProjectJsonSchema, got.bytes!, 'project.json');
          await ensureProject(where.projectId, pj, path);
        } catch (err) {
          if (err instanceof AppError) throw err;
          report(path, `${(err as Error).message}: project not imported`);
          projectState.set(where.projectId, { ok: false, error: `${path} is invalid` });
        }
        continue;
      }
      pending ??= { projectId: where.projectId, sessionId: where.sessionId, files: {}, failed: false };
      if (problem) {
        report(path, `${problem}: session not imported`);
        pending.failed = true;
        continue;
      }
      pending.files[where.file] = got.bytes!;
    }
  } catch (err) {
    // A size limit or a stalled body ends the import as an error; a damaged or truncated tar ends
    // it here, and what did not arrive is reported below.
    if (err instanceof AppError && (err.code === 'PAYLOAD_TOO_LARGE' || err.code === 'REQUEST_TIMEOUT' || err.code === 'SERVICE_UNAVAILABLE')) throw err;
    if (pending) {
      pending.failed = true;
      report(sessionDir(pending.projectId, pending.sessionId), 'truncated: session not imported');
    }
    report('', `archive ends early or is damaged (${(err as Error)?.message ?? err}): what follows was not imported`);
  } finally {
    if (pending) {
      const s = pending;
      pending = null;
      await finish(s);
    }
  }
  for (const dir of sessionsTotal) if (!done.has(dir)) report(dir, 'missing from the archive (truncated?): session not imported');
  await piped.catch(() => undefined);
  progress();
  return summary;
}
