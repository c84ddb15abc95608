import type { DbHandles } from '../db/client';
import { addFindings, type Findings, type RedactMode } from '../redact';
import { readContent } from '../data/content';
import { withStagedContent } from '../data/content-writes';
import { enqueueIndexWork } from '../data/outbox';
import { announceSessionChanges } from '../data/signal';
import { inTransaction } from '../data/transaction';
import { upsertOp } from '../domain/index-work';
import { storedIndexOf } from '../domain/exchanges';
import { maskedFindingsOf, redactionsToJson, redactUpload } from '../domain/redaction';
import { metadataOf, parseStoredMeta, labelsOf } from './sessions';
import * as store from '../data/sessions';
import * as writes from '../data/session-writes';
import type { OperatorCtx } from './context';
import { contentDigestOf, DOC_STRING_FIELDS, sessionDataDigestOf } from '../domain/upload';
import { sessionEtag } from '../domain/etag';
import type { SessionRow } from '../domain/session-row';

interface RescanProgress {
  done: number;
  total: number;
  /** Sessions in which the current rules found something new. */
  changed: number;
  /** Secrets newly found, per rule. */
  found: Findings;
}

const BATCH = 50;

/**
 * `redact rescan`: applies the current rules to every stored session. With REDACT_SECRETS=on,
 * newly found secrets are masked in content, name and metadata, their counts are added to the
 * session's findings, its entity tag and updatedAt move and the search index is refreshed. With
 * `report`, findings are replaced by a fresh count and content is left alone. `dryRun` only counts.
 */
export async function rescanSessions(
  ctx: OperatorCtx,
  mode: RedactMode,
  opts: { dryRun: boolean; onProgress?: (p: RescanProgress) => void },
): Promise<RescanProgress> {
  const { db } = ctx.deps;
  if (mode === 'off') throw new Error('REDACT_SECRETS=off: there are no rules to apply');
  const progress: RescanProgress = { done: 0, total: await store.sessionCount(db.writes), changed: 0, found: {} };
  let after: [string, string] | null = null;
  for (;;) {
    const keys = await store.sessionKeysAfter(db.writes, after, BATCH);
    if (keys.length === 0) break;
    for (const k of keys) {
      const found = await rescanOne(db, k.projectId, k.id, mode, opts.dryRun);
      if (found) {
        progress.changed++;
        addFindings(progress.found, found);
      }
      progress.done++;
      opts.onProgress?.(progress);
    }
    const last = keys[keys.length - 1];
    after = [last.projectId, last.id];
  }
  return progress;
}

/** Rescans one session in its own transaction; returns what was newly found, or null. */
async function rescanOne(db: DbHandles, projectId: string, sessionId: string, mode: RedactMode, dryRun: boolean): Promise<Findings | null> {
  // Content goes to the bucket (s3 mode) before the transaction begins, never while it holds the
  // session's lock: a transaction that has content to write rolls back, the content is staged, and
  // the session is read and redacted again (the same bytes, unless it changed meanwhile).
  return withStagedContent((content) =>
    inTransaction(db, async (tx) => {
      const old = dryRun ? await store.sessionByKey(tx, projectId, sessionId) : await store.lockSession(tx, projectId, sessionId);
      if (!old) return null; // deleted meanwhile
      const hasSessionData = old.sessionDataSize > 0;
      const [markdown, rawData, sessionData] = await Promise.all([
        readContent(tx, projectId, sessionId, 'markdown'),
        readContent(tx, projectId, sessionId, 'raw'),
        hasSessionData ? readContent(tx, projectId, sessionId, 'session') : Promise.resolve(undefined),
      ]);
      const meta = parseStoredMeta(old.metadataJson);
      const metaColumns = Object.fromEntries(DOC_STRING_FIELDS.map((f) => [f, old[f]]));
      const { upload, findings, sessionDataFindings } = redactUpload({ name: old.name, markdown, rawData, sessionData, metaColumns, meta }, mode);
      const fresh = addFindings({ ...findings }, sessionDataFindings ?? {});
      if (Object.keys(fresh).length === 0 && mode === 'on') return null;
      // `on`: secrets masked before are not found again, so their counts add up (findings of a
      // `report` upload are found again and replaced); `report`: a fresh count.
      const redactionsJson =
        mode === 'on'
          ? redactionsToJson(
              addFindings(maskedFindingsOf(old.redactionsJson, 'upload'), findings),
              addFindings(maskedFindingsOf(old.redactionsJson, 'sessionData'), sessionDataFindings ?? {}),
            )
          : redactionsToJson(findings, sessionDataFindings ?? {}, 'report');
      if (redactionsJson === old.redactionsJson) return null;
      if (dryRun) return fresh;

      const next: SessionRow = {
        ...old,
        name: upload.name,
        ...(upload.metaColumns as Pick<SessionRow, (typeof DOC_STRING_FIELDS)[number]>),
        metadataJson: JSON.stringify(upload.meta),
        sessionDataDigest: upload.sessionData ? sessionDataDigestOf(upload.sessionData) : old.sessionDataDigest,
        contentDigest: '',
        redactionsJson,
        updatedAt: new Date(Math.max(Date.now(), old.updatedAt.getTime() + 1)),
      };
      next.contentDigest = contentDigestOf(upload.markdown, upload.rawData, next.sessionDataDigest);
      next.etag = sessionEtag({ ...next, metadata: metadataOf(next) });
      await writes.updateRedactedSession(tx, next);
      if (next.contentDigest !== old.contentDigest) {
        await content.write(tx, projectId, sessionId, {
          markdown: upload.markdown,
          raw: upload.rawData,
          session: upload.sessionData,
          exchanges: storedIndexOf(upload.markdown),
        });
      }
      await writes.writeLabels(tx, next, labelsOf(upload.meta), true);
      await enqueueIndexWork(tx, upsertOp(old.markdownSize), old.userId, projectId, sessionId);
      announceSessionChanges(tx, 'UPDATED', old.userId, projectId, [sessionId]);
      return fresh;
    }),
  );
}
