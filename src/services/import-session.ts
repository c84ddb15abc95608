/**
 * One verified session of an archive (src/services/imports.ts) or of another server
 * (src/cli/import-remote.ts) written as a version of the session (src/services/session-version.ts,
 * as an upload is): ids, times, titles, tags, metadata and tag kept.
 */
import { withStagedContent } from '../data/content-writes';
import { lockProjectOwner } from '../data/projects';
import { lockSession, sessionByKey } from '../data/sessions';
import { inTransaction } from '../data/transaction';
import type { RedactionJson, SessionJson } from '../api/schemas/archive';
import { WELL_FORMED_ETAG } from '../domain/archive';
import { redactField, redactionsToJson } from '../domain/redaction';
import type { PreparedUpload } from '../domain/upload';
import { addFindings, type Findings } from '../redact';
import { invalid } from '../errors';
import { canWriteSession, checkUpload, type ProjectRole } from './access';
import type { Ctx } from './context';
import { versionRow, writeSessionVersion } from './session-version';
import { refuseIfProjectHeld } from './retention';

/** What an import does with a session that exists: leave it, replace it, or replace it when the archive's is newer. */
export type OnConflict = 'skip' | 'overwrite' | 'newer';
const ON_CONFLICT: readonly OnConflict[] = ['skip', 'overwrite', 'newer'];

export function parseOnConflict(v: unknown): OnConflict {
  if (v === undefined || v === '') return 'skip';
  if (typeof v === 'string' && (ON_CONFLICT as readonly string[]).includes(v)) return v as OnConflict;
  throw invalid(`Invalid value for onConflict. Must be one of: ${ON_CONFLICT.join(', ')}`);
}

type ImportOutcome = 'created' | 'updated' | 'skipped';

/**
 * Where an import writes: the caller's own projects, or a team's (the caller must be allowed to
 * create projects in it: admin or member; src/services/imports.ts resolves it).
 */
export interface ImportTarget {
  ownerType: 'user' | 'team';
  /** The owning user's or team's id: the projects' owner and the sessions' owner scope. */
  ownerId: string;
  role: ProjectRole;
}

export const personalTarget = (ctx: Ctx): ImportTarget => ({ ownerType: 'user', ownerId: ctx.user.id, role: 'owner' });

/** One session of an archive, prepared, and how to write it. */
interface ImportedSession {
  projectId: string;
  sessionId: string;
  json: SessionJson;
  prepared: PreparedUpload;
  onConflict: OnConflict;
  /** False when the content is not all of the source's (a copy without the raw data a source did not serve): the tag is then computed anew. */
  keepEtag?: boolean;
  /** Default: the caller's own projects. */
  target?: ImportTarget;
  /** The user recorded as the session's uploader when it is created (default: the caller). */
  uploaderId?: string;
}

/** Findings as stored: {rule, count, part?, reported?}, same rule and part summed. */
function mergeRedactions(kept: RedactionJson[], found: RedactionJson[]): RedactionJson[] {
  const out: RedactionJson[] = [];
  for (const r of [...kept, ...found]) {
    const same = out.find((o) => o.rule === r.rule && o.part === r.part && o.reported === r.reported);
    if (same) same.count += r.count;
    else out.push({ rule: r.rule, count: r.count, ...(r.part ? { part: r.part } : {}), ...(r.reported ? { reported: true as const } : {}) });
  }
  return out;
}

export async function writeImportedSession(ctx: Ctx, opts: ImportedSession): Promise<ImportOutcome> {
  const { projectId, sessionId, json, prepared, onConflict } = opts;
  const keepEtag = opts.keepEtag ?? true;
  const target = opts.target ?? personalTarget(ctx);
  const { upload: up, findings, sessionDataFindings } = prepared;
  const mode = ctx.deps.config.redactSecrets;
  // The title is redacted as a PATCH of it would be (the rest of the text was with the content).
  const titleFindings: Findings = {};
  const userTitle = json.userTitle === null ? null : redactField(json.userTitle, mode, titleFindings);
  const found = JSON.parse(redactionsToJson(addFindings({ ...findings }, titleFindings), sessionDataFindings ?? {}, mode)) as RedactionJson[];
  const redactions = mergeRedactions(json.redactions, found);
  const userId = target.ownerId;
  const createdAt = new Date(json.createdAt);
  const updatedAt = new Date(json.updatedAt);
  const next = versionRow(prepared, {
    projectId,
    sessionId,
    ownerId: userId,
    userTitle,
    createdAt,
    updatedAt,
    startedAt: up.startedAt ?? createdAt,
    endedAt: up.endedAt ?? updatedAt,
    contentDigest: prepared.contentDigest,
    // Session data is replaced whole by an import, also by none.
    sessionDataSize: up.sessionData ? up.sessionData.length : 0,
    sessionDataDigest: prepared.sentDataDigest,
    redactionsJson: JSON.stringify(redactions),
    uploadedBy: opts.uploaderId ?? ctx.user.id,
    costUsd: prepared.usage?.costUsd ?? null,
  });
  // The archive's tag is kept when this server found nothing more to redact (the content is then
  // the archive's, byte for byte); else the content changed and so does the tag.
  if (keepEtag && found.length === 0 && WELL_FORMED_ETAG.test(json.etag)) next.etag = json.etag;

  // Content goes to the bucket (s3 mode) before the transaction begins, never while it holds locks.
  return withStagedContent((content) =>
    inTransaction(ctx.deps.db, ctx.guard, async (tx) => {
      const ownerId = await lockProjectOwner(tx, projectId, 'share');
      if (ownerId !== userId) throw invalid(`Project ${projectId} belongs to another account`);
      // Checked under the lock like an upload: a viewer (or a member since made one) writes nothing.
      const role = await checkUpload(ctx, projectId, ownerId).catch((err: Error) => {
        throw invalid(err.message);
      });
      const old = await lockSession(tx, projectId, sessionId);
      if (old) {
        if (onConflict === 'skip') return 'skipped';
        if (onConflict === 'newer' && !(updatedAt.getTime() > old.updatedAt.getTime())) return 'skipped';
        if (
          old.etag === next.etag &&
          old.updatedAt.getTime() === updatedAt.getTime() &&
          old.createdAt.getTime() === createdAt.getTime() &&
          old.userTitle === next.userTitle
        ) {
          return 'skipped';
        }
        // A team member replaces only the sessions they uploaded, as with an upload.
        if (!canWriteSession(ctx, role, old))
          throw invalid(`Session ${sessionId} was uploaded by someone else: a team member replaces only the sessions they uploaded`);
        // A hold set after the import began: what it replaces would be lost.
        await refuseIfProjectHeld(tx, projectId);
      }
      await writeSessionVersion(tx, content, { next, old, prepared, config: ctx.deps.config, imported: true });
      return old ? 'updated' : 'created';
    }),
  );
}

/** What a copy compares to decide whether a session needs copying again: the stored session's tag, time and sizes, or null. */
export async function importedSessionState(
  ctx: Ctx,
  projectId: string,
  sessionId: string,
): Promise<{ etag: string; updatedAt: Date; markdownSize: number; sessionDataSize: number; ownerId: string } | null> {
  const row = await sessionByKey(ctx.deps.db.writes, projectId, sessionId.toLowerCase());
  if (!row) return null;
  return {
    etag: row.etag,
    updatedAt: row.updatedAt,
    markdownSize: row.markdownSize,
    sessionDataSize: row.sessionDataSize,
    ownerId: row.userId,
  };
}
