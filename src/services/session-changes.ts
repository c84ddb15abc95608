/** Changes to a session: a patch (name, title, tags) and a delete. */
import { enqueueIndexWork } from '../data/outbox';
import { announceSessionChanges } from '../data/signal';
import { deleteSessionRow, updateSessionNaming, writeLabels } from '../data/session-writes';
import { lockSession } from '../data/sessions';
import { inTransaction } from '../data/transaction';
import { upsertOp } from '../domain/index-work';
import { addRedactionsJson, redactField } from '../domain/redaction';
import type { Findings, RedactMode } from '../redact';
import { sessionNotFound } from '../errors';
import { requireWritableSession } from './access';
import { refuseIfProjectHeld } from './retention';
import type { Ctx } from './context';
import { labelsOf, metadataOf, parseStoredMeta, sessionTitle } from './sessions';
import type { SessionRow } from '../domain/session-row';
import { sessionEtag } from '../domain/etag';
import { PatchSessionInput } from './inputs';
import { parseInput } from '../domain/inputs';
import { sessionDeleted, sessionWritten } from './webhook-events';

type Patch = ReturnType<typeof parseInput<typeof PatchSessionInput>>;

/**
 * The patch's texts redacted like an upload's fields (REDACT_SECRETS), before anything is stored
 * or indexed; tags that a mask made equal are kept once. Findings are added to the session's.
 */
function redactPatch(patch: Patch, mode: RedactMode): Patch & { findings: Findings } {
  const findings: Findings = {};
  const text = (s: string) => redactField(s, mode, findings);
  return {
    ...patch,
    name: patch.name === undefined ? undefined : text(patch.name),
    userTitle: patch.userTitle == null ? patch.userTitle : text(patch.userTitle),
    tags: patch.tags ? [...new Set(patch.tags.map(text))] : patch.tags,
    findings,
  };
}

export async function patchSession(ctx: Ctx, projectId: string, rawSessionId: string, body: unknown): Promise<SessionRow> {
  const patch = redactPatch(parseInput(PatchSessionInput, body), ctx.deps.config.redactSecrets);
  const current = await requireWritableSession(ctx, projectId, rawSessionId, 'change');
  return inTransaction(ctx.deps.db, ctx.guard, async (tx) => {
    const old = await lockSession(tx, current.projectId, current.id);
    if (!old) throw sessionNotFound(current.id, projectId);
    const meta = parseStoredMeta(old.metadataJson);
    if (patch.tags) meta.tags = patch.tags;
    const next: SessionRow = {
      ...old,
      uploaderName: current.uploaderName,
      name: patch.name ?? old.name,
      userTitle: patch.userTitle !== undefined ? patch.userTitle : old.userTitle,
      metadataJson: JSON.stringify(meta),
      redactionsJson: Object.keys(patch.findings).length
        ? addRedactionsJson(old.redactionsJson, patch.findings, ctx.deps.config.redactSecrets)
        : old.redactionsJson,
    };
    next.etag = sessionEtag({ ...next, metadata: metadataOf(next) });
    // A patch always counts as a change: it moves updatedAt.
    next.updatedAt = new Date(Math.max(Date.now(), old.updatedAt.getTime() + 1));
    await updateSessionNaming(tx, next);
    if (patch.tags) await writeLabels(tx, next, labelsOf(meta), true);
    await enqueueIndexWork(tx, upsertOp(old.markdownSize), old.userId, old.projectId, old.id);
    announceSessionChanges(tx, 'UPDATED', old.userId, old.projectId, [old.id]);
    await sessionWritten(tx, ctx.deps.config, 'session.updated', next);
    return next;
  });
}

export async function deleteSession(ctx: Ctx, projectId: string, rawSessionId: string): Promise<void> {
  const row = await requireWritableSession(ctx, projectId, rawSessionId, 'delete');
  await inTransaction(ctx.deps.db, ctx.guard, async (tx) => {
    await refuseIfProjectHeld(tx, row.projectId);
    const n = await deleteSessionRow(tx, row.userId, row.projectId, row.id);
    if (n === 0) throw sessionNotFound(row.id, projectId);
    await enqueueIndexWork(tx, 'delete', row.userId, row.projectId, row.id);
    announceSessionChanges(tx, 'DELETED', row.userId, row.projectId, [row.id]);
    await sessionDeleted(tx, ctx.deps.config, { scopeId: row.userId, projectId: row.projectId, sessionId: row.id, title: sessionTitle(row) });
  });
}
