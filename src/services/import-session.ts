/** One verified session of an archive written (src/services/imports.ts): ids, times, titles, tags, metadata and tag kept. */
import { withStagedContent } from '../data/content-writes';
import { deleteSessionData, replaceImportedSession } from '../data/exports';
import { enqueueIndexWork } from '../data/outbox';
import { announceSessionChanges } from '../data/signal';
import { lockProjectOwner } from '../data/projects';
import { insertSession, lockSession, sessionByKey, writeLabels, type SessionRow } from '../data/sessions';
import { inTransaction } from '../data/transaction';
import type { RedactionJson, SessionJson } from '../api/schemas/archive';
import { WELL_FORMED_ETAG } from '../domain/archive';
import { upsertOp } from '../domain/index-work';
import { redactField, redactionsToJson } from '../domain/redaction';
import type { PreparedUpload } from '../domain/upload';
import { addFindings, type Findings } from '../redact';
import { invalid } from '../errors';
import { canWriteSession, checkUpload, type ProjectRole } from './access';
import type { Ctx } from './context';
import type { OnConflict } from './imports';
import { labelsOf, metadataOf, sessionEtag } from './sessions';
import { writeUsage } from './usage';

export type ImportOutcome = 'created' | 'updated' | 'skipped';

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
export interface ImportedSession {
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
  const next: SessionRow = {
    projectId,
    id: sessionId,
    userId,
    name: up.name,
    userTitle,
    markdownSize: up.markdown.length,
    rawDataSize: up.rawData.length,
    etag: '',
    contentDigest: prepared.contentDigest,
    createdAt,
    updatedAt,
    startedAt: up.startedAt ?? createdAt,
    endedAt: up.endedAt ?? updatedAt,
    ...up.metaColumns,
    metadataJson: JSON.stringify(up.meta),
    sessionDataSize: up.sessionData ? up.sessionData.length : 0,
    sessionDataDigest: prepared.sentDataDigest,
    redactionsJson: JSON.stringify(redactions),
    uploadedBy: opts.uploaderId ?? ctx.user.id,
    costUsd: prepared.usage?.costUsd ?? null,
  };
  // The archive's tag is kept when this server found nothing more to redact (the content is then
  // the archive's, byte for byte); else the content changed and so does the tag.
  next.etag = keepEtag && found.length === 0 && WELL_FORMED_ETAG.test(json.etag) ? json.etag : sessionEtag({ ...next, metadata: metadataOf(next) });
  const hasGitBranches = up.meta.gitBranches.length > 0;

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
        await replaceImportedSession(tx, next, hasGitBranches);
        if (!up.sessionData) await deleteSessionData(tx, projectId, sessionId);
      } else {
        await insertSession(tx, next, hasGitBranches);
      }
      await content.write(tx, projectId, sessionId, { markdown: up.markdown, raw: up.rawData, session: up.sessionData, exchanges: prepared.exchangeIndex });
      await writeLabels(tx, next, labelsOf(up.meta), Boolean(old));
      await writeUsage(tx, { projectId, sessionId }, prepared.usage);
      await enqueueIndexWork(tx, upsertOp(next.markdownSize), userId, projectId, sessionId);
      announceSessionChanges(tx, old ? 'UPDATED' : 'CREATED', userId, projectId, [sessionId]);
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
