/** PUT of a session: creates or replaces it, and its project when new, atomically. */
import { withStagedContent, type ContentWrites } from '../data/content-writes';
import { contentStore } from '../data/content-store';
import { isDuplicateKey, RetryTransaction } from '../data/errors';
import { lockProjectOwner, projectById } from '../data/projects';
import { lockSession, sessionDigests } from '../data/sessions';
import { inTransaction } from '../data/transaction';
import { AppError, invalid, MESSAGES } from '../errors';
import { DeferredJson, inlineOffload } from '../offload';
import { canWriteSession, checkUpload, sessionWriteRefused } from './access';
import type { Ctx } from './context';
import { insertNewProject, newProjectOwner } from './projects';
import { redactionsToJson, sessionDataFindingsOf } from '../domain/redaction';
import type { SessionRow } from '../domain/session-row';
import { DEFAULT_COLOR, DEFAULT_ICON } from '../domain/project';
import { etagMatches } from '../domain/etag';
import { partsOf, versionRow, writeSessionVersion } from './session-version';
import { contentDigestOf, type PreparedUpload } from '../domain/upload';
import { PROJECT_ID_RE } from '../domain/project';
import { SESSION_ID_RE } from '../domain/session';

interface UploadConditions {
  ifMatch?: string;
  ifNoneMatch?: string;
}

interface UploadResult {
  created: boolean;
  /** False for an identical re-upload, which changes nothing. */
  changed: boolean;
  session: SessionRow;
}

/** An upload's path ids: on a write an id that can never be valid is a 400 (reads: src/services/access.ts). */
function checkUploadPath(projectId: string, sessionId: string): string {
  if (!PROJECT_ID_RE.test(projectId)) throw invalid('Invalid project id: must match ^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$');
  if (!SESSION_ID_RE.test(sessionId)) throw invalid('Invalid session id: must be a UUID');
  return sessionId.toLowerCase();
}

/** PUT: creates or replaces a session (and its project when new), atomically. */
export async function upsertSession(ctx: Ctx, projectId: string, rawSessionId: string, body: unknown, cond: UploadConditions = {}): Promise<UploadResult> {
  const sessionId = checkUploadPath(projectId, rawSessionId);
  // Secrets go before anything is stored, logged or indexed. The tag is taken over
  // what is stored, so re-sending the same original body is still a no-op. A large body is
  // prepared on a worker thread (src/offload), a small one here.
  const mode = ctx.deps.config.redactSecrets;
  // The raw log's token usage is read on a worker thread, at the configured prices.
  const prices = ctx.deps.config.prices;
  const offload = ctx.deps.offload ?? inlineOffload;
  const prepared = body instanceof DeferredJson ? await offload.prepareUploadJson(body.bytes, mode, prices) : await offload.prepareUpload(body, mode, prices);
  // Content goes to the bucket (s3 mode) before the transaction begins, never while it holds
  // locks: up front when the stored session (as a read sees it) has other content, else only if
  // the transaction finds that it has after all.
  const first =
    contentStore().writeTo === 's3' && (await contentMayChange(ctx, projectId, sessionId, prepared)) ? { sessionId, parts: partsOf(prepared) } : null;
  return withStagedContent((content) => writeUpload(ctx, { projectId, sessionId, prepared, cond }, content), first);
}

type Digests = { contentDigest: string; sessionDataDigest: string | null };

/**
 * The upload's content digest against the stored session data's digest: an upload without
 * session data keeps the stored one, and its digest is part of the content's.
 */
function digestAgainst(prepared: PreparedUpload, storedDataDigest: string | null): Digests {
  const sessionDataDigest = prepared.sentDataDigest ?? storedDataDigest;
  if (sessionDataDigest === prepared.sentDataDigest) return { contentDigest: prepared.contentDigest, sessionDataDigest };
  // Kept session data: the content is hashed again with its digest, once per upload (the check
  // before the transaction and the transaction ask alike).
  let kept = keptDigests.get(prepared);
  if (kept?.sessionDataDigest !== sessionDataDigest) {
    kept = { contentDigest: contentDigestOf(prepared.upload.markdown, prepared.upload.rawData, sessionDataDigest), sessionDataDigest };
    keptDigests.set(prepared, kept);
  }
  return kept;
}

const keptDigests = new WeakMap<PreparedUpload, Digests>();

/** Whether the upload's content differs from the session's as stored now (a read: a hint, which the transaction checks). */
async function contentMayChange(ctx: Ctx, projectId: string, sessionId: string, prepared: PreparedUpload): Promise<boolean> {
  const stored = await sessionDigests(ctx.deps.db.reads, projectId, sessionId);
  return !stored || stored.contentDigest !== digestAgainst(prepared, stored.sessionDataDigest).contentDigest;
}

/** One upload to write. */
interface UploadWrite {
  projectId: string;
  sessionId: string;
  prepared: PreparedUpload;
  cond: UploadConditions;
}

async function writeUpload(ctx: Ctx, write: UploadWrite, content: ContentWrites): Promise<UploadResult> {
  const { projectId, sessionId, prepared, cond } = write;
  const { upload: up, findings, sessionDataFindings } = prepared;
  return inTransaction(ctx.deps.db, ctx.guard, async (tx) => {
    const now = new Date();
    // A new project is the credential's team's when it is bound to one (else the caller's).
    if (!(await projectById(tx, projectId))) {
      const owner = await newProjectOwner(ctx);
      const project = { id: projectId, ...owner, name: up.projectName ?? projectId, icon: DEFAULT_ICON, color: DEFAULT_COLOR };
      await insertNewProject(tx, { ...project, createdAt: now, updatedAt: now });
    }
    const ownerId = await lockProjectOwner(tx, projectId, 'share');
    if (!ownerId) throw new RetryTransaction('project deleted during upload; retrying');
    const role = await checkUpload(ctx, projectId, ownerId);

    const old = await lockSession(tx, projectId, sessionId);
    // A member replaces only the sessions they uploaded; admins and the owner any.
    if (old && !canWriteSession(ctx, role, old)) throw sessionWriteRefused(role, 'replace', projectId);
    if (cond.ifNoneMatch && old && etagMatches(cond.ifNoneMatch, old.etag)) {
      throw new AppError('PRECONDITION_FAILED', MESSAGES.preconditionFailed);
    }
    if (cond.ifMatch && (!old || !etagMatches(cond.ifMatch, old.etag))) {
      throw new AppError('PRECONDITION_FAILED', MESSAGES.preconditionFailed);
    }

    // An upload without session data keeps the stored one (its digest stays part of the etag, and
    // of the content digest: only then is that taken again, here, at its cost).
    const { sessionDataDigest, contentDigest } = digestAgainst(prepared, old?.sessionDataDigest ?? null);
    const sessionDataSize = up.sessionData ? up.sessionData.length : (old?.sessionDataSize ?? 0);
    // Findings of kept session data stay with it.
    const redactionsJson = redactionsToJson(findings, sessionDataFindings ?? sessionDataFindingsOf(old?.redactionsJson), ctx.deps.config.redactSecrets);
    const next = versionRow(prepared, {
      projectId,
      sessionId,
      ownerId,
      // An upload keeps the title a user set and the creation time.
      userTitle: old?.userTitle ?? null,
      createdAt: old?.createdAt ?? now,
      updatedAt: now,
      startedAt: up.startedAt ?? old?.startedAt ?? now,
      endedAt: up.endedAt ?? old?.endedAt ?? now,
      contentDigest,
      sessionDataSize,
      sessionDataDigest,
      redactionsJson,
      uploadedBy: old ? old.uploadedBy : ctx.user.id,
      costUsd: prepared.usage === undefined ? (old?.costUsd ?? null) : (prepared.usage?.costUsd ?? null),
    });
    if (old && old.etag === next.etag) return { created: false, changed: false, session: old };
    await writeSessionVersion(tx, content, { next, old, prepared, config: ctx.deps.config });
    return { created: !old, changed: true, session: next };
  }).catch((err) => {
    // Two first uploads of one session raced: the loser's insert hit the winner's row.
    if (isDuplicateKey(err)) {
      return writeUpload(ctx, write, content);
    }
    throw err;
  });
}
