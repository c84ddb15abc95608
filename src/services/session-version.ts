/**
 * One version of a session written. An upload (PUT, src/services/session-upload.ts) and an import
 * (an archive or a copy from another server, src/services/import-session.ts) both end here,
 * inside their transaction, once they have checked access and decided the new row: they differ
 * in where the bytes and the row's times, title and tag come from, not in how a version is stored.
 */
import type { ContentParts, ContentWrites } from '../data/content-writes';
import { enqueueIndexWork } from '../data/outbox';
import { announceSessionChanges } from '../data/signal';
import { deleteSessionData, insertSession, replaceSession, writeLabels } from '../data/session-writes';
import type { Tx } from '../data/transaction';
import { upsertOp } from '../domain/index-work';
import type { PreparedUpload } from '../domain/upload';
import { labelsOf, metadataOf } from './sessions';
import type { SessionRow } from '../domain/session-row';
import { sessionEtag } from '../domain/etag';
import { writeUsage } from './usage';
import { sessionWritten } from './webhook-events';
import type { Config } from '../config';

/** The content parts of a prepared version (the same buffers every time: staged parts are compared with them). */
export const partsOf = (prepared: PreparedUpload): ContentParts => {
  const { upload: up } = prepared;
  return { markdown: up.markdown, raw: up.rawData, session: up.sessionData, exchanges: prepared.exchangeIndex };
};

/** What the writer of a version decides; the rest of the row is the prepared content's. */
interface VersionFields {
  projectId: string;
  sessionId: string;
  /** The owning user's or team's id (the project's owner). */
  ownerId: string;
  userTitle: string | null;
  createdAt: Date;
  updatedAt: Date;
  startedAt: Date;
  endedAt: Date;
  contentDigest: string;
  sessionDataSize: number;
  sessionDataDigest: string | null;
  redactionsJson: string;
  uploadedBy: string | null;
  costUsd: number | null;
}

/** The row of a new version, with the tag of what it holds. */
export function versionRow(prepared: PreparedUpload, f: VersionFields): SessionRow {
  const { upload: up } = prepared;
  const row: SessionRow = {
    projectId: f.projectId,
    id: f.sessionId,
    userId: f.ownerId,
    name: up.name,
    userTitle: f.userTitle,
    markdownSize: up.markdown.length,
    rawDataSize: up.rawData.length,
    etag: '',
    contentDigest: f.contentDigest,
    createdAt: f.createdAt,
    updatedAt: f.updatedAt,
    startedAt: f.startedAt,
    endedAt: f.endedAt,
    ...up.metaColumns,
    metadataJson: JSON.stringify(up.meta),
    sessionDataSize: f.sessionDataSize,
    sessionDataDigest: f.sessionDataDigest,
    redactionsJson: f.redactionsJson,
    uploadedBy: f.uploadedBy,
    costUsd: f.costUsd,
  };
  row.etag = sessionEtag({ ...row, metadata: metadataOf(row) });
  return row;
}

/** A version to write: the new row, the stored one it replaces (locked by the caller) and the prepared content. */
interface SessionVersion {
  next: SessionRow;
  old: SessionRow | undefined;
  prepared: PreparedUpload;
  /** Where the webhook events' console links point (PUBLIC_URL). */
  config: Pick<Config, 'publicUrl'>;
  /**
   * An import's version: its index work goes straight to the main index ('compact', the bulk path
   * a rebuild takes: thousands of sessions per engine batch), not through the recent index, whose
   * small batches keep one upload fresh but index a large import at a fraction of the rate.
   */
  imported?: boolean;
}

/**
 * Writes `next` in the caller's transaction: the row (inserted, or replacing `old`), the content
 * when its digest differs from the stored one, the session data dropped when the new version has
 * none, the labels, the token usage, the search index's work, the change's announcement (after
 * the commit, to live lists) and its webhook event.
 */
export async function writeSessionVersion(tx: Tx, content: ContentWrites, { next, old, prepared, config, imported }: SessionVersion): Promise<void> {
  const { projectId, id: sessionId } = next;
  const meta = prepared.upload.meta;
  const hasGitBranches = meta.gitBranches.length > 0;
  if (old) await replaceSession(tx, next, hasGitBranches);
  else await insertSession(tx, next, hasGitBranches);
  // A row inserted just now has no content, no usage rows and, as its cost, the usage's: nothing to replace.
  const fresh = !old;
  if (fresh || old.contentDigest !== next.contentDigest) await content.write(tx, projectId, sessionId, partsOf(prepared), fresh);
  // (An upload without session data keeps the stored one: its row says so.)
  if (old && old.sessionDataSize > 0 && !prepared.upload.sessionData && next.sessionDataSize === 0) await deleteSessionData(tx, projectId, sessionId);
  await writeLabels(tx, next, labelsOf(meta), Boolean(old));
  await writeUsage(tx, { projectId, sessionId }, prepared.usage, fresh && next.costUsd === (prepared.usage?.costUsd ?? null));
  await enqueueIndexWork(tx, imported ? 'compact' : upsertOp(next.markdownSize), next.userId, projectId, sessionId);
  announceSessionChanges(tx, old ? 'UPDATED' : 'CREATED', next.userId, projectId, [sessionId]);
  await sessionWritten(tx, config, old ? 'session.updated' : 'session.created', next);
}
