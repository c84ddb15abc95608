/**
 * Import of an export archive (src/domain/archive.ts), streamed: the manifest first, read as it
 * arrives and checked whole (src/services/import-manifest.ts: nothing is written before it passes),
 * then one session at a time, each file checked against the manifest's size and sha256 before
 * anything of its session is written. A bad or missing file is reported with its path and its
 * session is not written; a session the service fails to write is reported with the cause; the
 * rest goes on. What happened is counted in src/services/import-report.ts.
 */
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import * as tar from 'tar-stream';
import { lockProjectOwner, projectById } from '../data/projects';
import {
  ARCHIVE_FORMAT,
  isArchiveDir,
  JSON_FILE_MAX_BYTES,
  MANIFEST_PATH,
  MANIFEST_SLICE,
  nextTurn,
  parseArchiveJson,
  parseArchivePath,
  ProjectJsonSchema,
  sessionDir,
  SESSION_FILES,
  type SessionFile,
} from '../domain/archive';
import { SessionJsonSchema } from '../api/schemas/archive';
import { redactField } from '../domain/redaction';
import { AppError, invalid } from '../errors';
import type { BodyGate } from '../domain/body-gate';
import { inlineOffload, release } from '../offload';
import type { PreparedUpload } from '../domain/upload';
import type { Ctx } from './context';
import { inTransaction } from '../data/transaction';
import { personalTarget, writeImportedSession, type ImportTarget, type OnConflict } from './import-session';

import { DONE, fileBit, readManifest } from './import-manifest';
import { refuseIfAnyHeld } from './retention';
import { limiter, readEntry } from './import-stream';
import { faultOf, ImportReport, type ImportSummary } from './import-report';
import { requireTeamWriter } from './access';
import { insertNewProject } from './projects';
import { recordAudit } from './audit';
import { memberOf } from '../data/teams';
import { userByEmail } from '../data/users';

/** An entry of the tar being read: its header and a stream of its bytes. */
type TarEntry = Readable & { header: tar.Header };

interface ImportProgress {
  sessions: number;
  sessionsTotal: number;
  bytes: number;
}

interface ImportOptions {
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
  /** Upload admission (src/http/admission.ts): the bytes an import holds count against it. */
  gate?: BodyGate;
}

type ProjectJsonInput = Pick<ReturnType<typeof ProjectJsonSchema.parse>, 'name' | 'icon' | 'color' | 'createdAt' | 'updatedAt'>;

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
    // Through the one insert that holds the owner's row (an owner deleted meanwhile leaves no project behind).
    const inserted = await insertNewProject(tx, {
      id: projectId,
      ownerType: target.ownerType,
      ownerId: target.ownerId,
      name: redactField(json?.name ?? projectId, ctx.deps.config.redactSecrets),
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
async function importTarget(ctx: Ctx, teamId: string | undefined): Promise<ImportTarget> {
  if (teamId === undefined) return personalTarget(ctx);
  const role = await requireTeamWriter(ctx, teamId);
  return { ownerType: 'team', ownerId: teamId, role };
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
  /** A file of it failed its check (reported then). */
  failed: boolean;
}

/**
 * An error of the archive's content (a check it failed: a VALIDATION_ERROR, whether the session was
 * prepared here or on a worker thread), as opposed to a fault of this service (anything else).
 */
const isContentError = (err: unknown) => err instanceof AppError && err.code === 'VALIDATION_ERROR';

/** Imports an archive (below) and records it in the audit log: its counts, or the failure's code. */
export async function importArchive(ctx: Ctx, input: Readable, opts: ImportOptions): Promise<ImportSummary> {
  const teamId = opts.teamId ?? null;
  const event = { action: 'import', target: { type: teamId ? 'team' : 'user', id: teamId ?? ctx.user.id }, teamId } as const;
  let summary: ImportSummary;
  try {
    summary = await runImport(ctx, input, opts);
  } catch (err) {
    const code = err instanceof AppError ? err.code : 'INTERNAL';
    await recordAudit(ctx, { ...event, result: 'failure', detail: { error: code } }).catch(() => undefined);
    throw err;
  }
  const { imported, skipped, failed } = summary;
  await recordAudit(ctx, { ...event, result: summary.success ? 'success' : 'failure', detail: { imported, skipped, failed, onConflict: opts.onConflict } });
  return summary;
}

async function runImport(ctx: Ctx, input: Readable, opts: ImportOptions): Promise<ImportSummary> {
  const target = await importTarget(ctx, opts.teamId);
  const uploaderOf = uploaders(ctx, target);
  const report = new ImportReport();
  let bytesRead = 0;
  // Bytes taken from upload admission and given back whenever what was read of them is let go.
  let given = 0;
  const letGo = () => {
    opts.gate?.give(bytesRead - given);
    given = bytesRead;
  };
  const counter = limiter(opts.maxBytes, opts.idleMs ?? 60_000, (n) => (bytesRead = n), opts.gate);
  const extract = tar.extract();
  const piped = pipeline(input, counter, extract as unknown as NodeJS.WritableStream);
  piped.catch(() => undefined);
  const entries = (extract as AsyncIterable<TarEntry>)[Symbol.asyncIterator]();

  // The manifest: the first entry, read and checked whole before anything else.
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
  const listed = await readManifest(first.value, mh.size, opts.maxBytes);
  letGo();
  // An import that may replace sessions is refused whole, before anything is written, when a
  // project it lists is on legal hold.
  if (opts.onConflict !== 'skip') await refuseIfAnyHeld(ctx.deps.db.writes, listed.projectIdList);

  /** Per project: may its sessions be written (it is the caller's), or why not. */
  const projectState = new Map<string, { ok: true } | { ok: false; error: string }>();
  let pending: PendingSession | null = null;
  let handled = 0;
  const progress = () => opts.onProgress?.({ sessions: handled, sessionsTotal: listed.sessions, bytes: bytesRead });

  /** The project of an archive, created for the caller when new; another account's is reported, never touched. */
  async function ensureProject(projectId: string, json: ProjectJsonInput | null, path: string): Promise<void> {
    if (projectState.has(projectId)) return;
    let state: Awaited<ReturnType<typeof ensureImportedProject>>;
    try {
      state = await ensureImportedProject(ctx, projectId, json, target);
    } catch (err) {
      const error = `Project ${projectId} could not be created: ${faultOf(err)}`;
      report.error(path, error);
      projectState.set(projectId, { ok: false, error });
      return;
    }
    if (state === 'foreign') {
      const error =
        target.ownerType === 'team'
          ? `Project ${projectId} is not a project of this team: not imported`
          : `Project ${projectId} belongs to another account: not imported`;
      report.error(path, error);
      projectState.set(projectId, { ok: false, error });
      return;
    }
    report.summary.projects[state]++;
    projectState.set(projectId, { ok: true });
  }

  /** Writes a session whose files have all arrived, or says why not; never throws. */
  async function finish(s: PendingSession): Promise<void> {
    const dir = sessionDir(s.projectId, s.sessionId);
    const expected = listed.done(s.projectId, s.sessionId);
    handled++;
    let prepared: PreparedUpload | undefined;
    try {
      if (s.failed) return report.failed(dir);
      const missing = SESSION_FILES.find((f) => expected & fileBit(f) && !s.files[f]);
      if (missing) return report.failed(`${dir}${missing}`, 'missing from the archive (truncated?): session not imported');
      const jsonBytes = s.files['session.json'];
      if (!jsonBytes) return report.failed(`${dir}session.json`, 'missing: session not imported');
      if (!s.files['markdown.md']) return report.failed(`${dir}markdown.md`, 'missing: session not imported');
      await ensureProject(s.projectId, null, `projects/${s.projectId}/project.json`);
      const state = projectState.get(s.projectId)!;
      if (!state.ok) return report.failed(dir, `not imported: ${state.error}`);
      try {
        const json = parseArchiveJson(SessionJsonSchema, jsonBytes, 'session.json');
        prepared = await (ctx.deps.offload ?? inlineOffload).prepareImport(
          { json, markdown: s.files['markdown.md'], raw: s.files.raw ?? Buffer.alloc(0), sessionData: s.files['session-data.json'] ?? null },
          ctx.deps.config.redactSecrets,
          ctx.deps.config.prices,
        );
        const uploaderId = await uploaderOf(json.uploadedBy);
        report.written(
          await writeImportedSession(ctx, { projectId: s.projectId, sessionId: s.sessionId, json, prepared, onConflict: opts.onConflict, target, uploaderId }),
        );
      } catch (err) {
        if (isContentError(err)) return report.failed(dir, `not imported: ${(err as Error).message}`);
        ctx.log.warn({
          msg: 'import: a session could not be written',
          projectId: s.projectId,
          sessionId: s.sessionId,
          err: String((err as Error)?.stack ?? err),
        });
        return report.failed(dir, `not imported: ${faultOf(err)}`);
      }
    } finally {
      // The session is written (or not imported): its content (up to about 50 MB a part) is given
      // back now rather than at some later collection, where the next large session's would come
      // on top of it.
      const u = prepared?.upload;
      try {
        release(s.files['markdown.md'], s.files.raw, s.files['session-data.json'], u?.markdown, u?.rawData, u?.sessionData);
      } catch (err) {
        ctx.log.warn({ msg: 'import: content not released', err: String((err as Error)?.message ?? err) });
      }
      s.files = {};
      letGo();
      progress();
    }
  }

  try {
    for (;;) {
      const next = await entries.next();
      if (next.done) break;
      const entry = next.value;
      const { name: path, type, size } = entry.header;
      if (type === 'directory') {
        if (!isArchiveDir(path)) report.error(path, 'not a directory an archive has: ignored');
        entry.resume();
        continue;
      }
      const where = parseArchivePath(path);
      const key = where?.kind === 'session' ? sessionDir(where.projectId, where.sessionId) : null;
      // A session's files are contiguous (entries are sorted): anything else closes it.
      if (pending && sessionDir(pending.projectId, pending.sessionId) !== key) {
        const s = pending;
        pending = null;
        await finish(s);
      }
      const expected = type === 'file' && where ? listed.arrive(path) : null;
      const ignored =
        type !== 'file'
          ? 'not a regular file: ignored'
          : !expected
            ? 'not listed in the manifest: ignored'
            : expected.again
              ? 'appears twice in the archive: ignored'
              : where?.kind === 'session' && listed.sessionState(where.projectId, where.sessionId) & DONE
                ? 'out of order (sessions must be contiguous): ignored'
                : null;
      if (ignored || !expected || !where) {
        report.error(path, ignored ?? 'not listed in the manifest: ignored');
        entry.resume();
        letGo();
        continue;
      }
      const max = where.kind === 'project' || where.file === 'session.json' ? JSON_FILE_MAX_BYTES : opts.maxFileBytes;
      const got = await readEntry(entry, size, size !== expected.size ? -1 : max);
      const problem =
        got.size !== expected.size
          ? `size ${got.size} does not match the manifest's ${expected.size}`
          : got.sha256 !== expected.sha256
            ? 'sha256 does not match the manifest'
            : !got.bytes
              ? `larger than ${max} bytes`
              : null;
      if (where.kind === 'project') {
        letGo();
        if (problem) {
          report.error(path, `${problem}: project not imported`);
          projectState.set(where.projectId, { ok: false, error: `${path} failed its check` });
          continue;
        }
        let pj: ProjectJsonInput;
        try {
          pj = parseArchiveJson(ProjectJsonSchema, got.bytes!, 'project.json');
        } catch (err) {
          report.error(path, `${(err as Error).message}: project not imported`);
          projectState.set(where.projectId, { ok: false, error: `${path} is invalid` });
          continue;
        }
        await ensureProject(where.projectId, pj, path);
        continue;
      }
      pending ??= { projectId: where.projectId, sessionId: where.sessionId, files: {}, failed: false };
      if (problem) {
        report.error(path, `${problem}: session not imported`);
        pending.failed = true;
        continue;
      }
      pending.files[where.file] = got.bytes!;
    }
  } catch (err) {
    // Only the archive's stream throws here (every session's write reports its own outcome). A
    // size limit or a stalled body ends the import as an error; a damaged or truncated tar ends it
    // here, and what did not arrive is reported below.
    if (err instanceof AppError && (err.code === 'PAYLOAD_TOO_LARGE' || err.code === 'REQUEST_TIMEOUT' || err.code === 'SERVICE_UNAVAILABLE')) throw err;
    if (pending) {
      pending.failed = true;
      report.error(sessionDir(pending.projectId, pending.sessionId), 'truncated: session not imported');
    }
    report.error('', `archive ends early or is damaged (${(err as Error)?.message ?? err}): what follows was not imported`);
  } finally {
    if (pending) {
      const s = pending;
      pending = null;
      await finish(s);
    }
  }
  let n = 0;
  for (const dir of listed.unhandled()) {
    if (++n % MANIFEST_SLICE === 0) await nextTurn();
    report.failed(dir, 'missing from the archive (truncated?): session not imported');
  }
  await piped.catch(() => undefined);
  progress();
  return report.summary;
}
