/**
 * The retention sweep: deletes the sessions whose `updatedAt` is older than the retention that
 * applies to them (the project's, else its team's, else RETENTION_DAYS), never one of a project
 * on legal hold, with everything they left: their rows (content, labels, share links: foreign
 * keys cascade), their content objects in the bucket, and their index documents (through the
 * search outbox, as any delete); webhooks hear `session.deleted` for each, as for any delete. Hourly, one instance at a time (a named lock), in bounded
 * batches with a yield to the event loop between them; the preview lists what it would delete.
 */
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { contentStore } from '../data/content-store';
import { tryNamedLock } from '../data/locks';
import { enqueueIndexWork } from '../data/outbox';
import { deleteDueSessions, projectOnHold, retentionOfProjects, sessionsDue, type RetentionOfProject } from '../data/retention';
import { announceSessionChanges } from '../data/signal';
import { inTransaction } from '../data/transaction';
import { projectNotFound } from '../errors';
import type { Logger } from '../logger';
import { requireReadableProject } from './access';
import { sessionsDeleted } from './webhook-events';
import type { Ctx, OperatorCtx } from './context';

/** Sessions deleted per transaction: small enough that one batch's statements and locks stay short. */
const SWEEP_BATCH = 200;
const DAY_MS = 24 * 60 * 60 * 1000;
const HOUR_MS = 60 * 60 * 1000;

const cutoffOf = (p: RetentionOfProject, now: Date): Date | null => (p.days == null || p.held ? null : new Date(now.getTime() - p.days * DAY_MS));

interface SweepReport {
  projects: number;
  sessions: number;
  objects: number;
  batches: number;
}

/**
 * One sweep as of `now`: every project with a retention and no hold, oldest sessions first, in
 * batches of `batch`. A project put on hold while it runs is left at its next batch; a session
 * updated meanwhile stays (the delete checks its time again under the row lock).
 */
export async function sweepRetention(ctx: OperatorCtx, opts: { now?: Date; batch?: number; onBatch?: () => void } = {}): Promise<SweepReport> {
  const { db } = ctx.deps;
  const now = opts.now ?? new Date();
  const batch = opts.batch ?? SWEEP_BATCH;
  const report: SweepReport = { projects: 0, sessions: 0, objects: 0, batches: 0 };
  for (const p of await retentionOfProjects(db.writes, ctx.deps.config.retentionDays ?? null)) {
    const cutoff = cutoffOf(p, now);
    if (!cutoff) continue;
    let touched = false;
    for (;;) {
      const due = await sessionsDue(db.writes, p.projectId, cutoff, batch);
      if (due.length === 0) break;
      const done = await inTransaction(db, undefined, async (tx) => {
        if (await projectOnHold(tx, p.projectId)) return null;
        const r = await deleteDueSessions(
          tx,
          p.projectId,
          due.map((s) => s.id),
          cutoff,
        );
        for (const s of r.sessions) await enqueueIndexWork(tx, 'delete', s.userId, p.projectId, s.id);
        for (const scopeId of new Set(r.sessions.map((s) => s.userId))) {
          const ids = r.sessions.filter((s) => s.userId === scopeId).map((s) => s.id);
          await sessionsDeleted(tx, ctx.deps.config, scopeId, p.projectId, ids);
        }
        announceSessionChanges(
          tx,
          'DELETED',
          p.ownerId,
          p.projectId,
          r.sessions.map((s) => s.id),
        );
        return r;
      });
      if (!done || done.sessions.length === 0) break;
      // Named by no row now: gone from the bucket (the content sweep would take them after its grace period otherwise).
      const objects = contentStore().objects;
      if (objects && done.objectKeys.length) await objects.delete(done.objectKeys);
      touched = true;
      report.sessions += done.sessions.length;
      report.objects += done.objectKeys.length;
      report.batches++;
      opts.onBatch?.();
      await yieldToLoop();
    }
    if (touched) report.projects++;
  }
  return report;
}

/** What the next sweep deletes of a project, as of now: the project's readers. */
export async function retentionPreview(ctx: Ctx, projectId: string) {
  await requireReadableProject(ctx, projectId);
  const [p] = await retentionOfProjects(ctx.deps.db.writes, ctx.deps.config.retentionDays ?? null, projectId);
  if (!p) throw projectNotFound(projectId);
  const cutoff = cutoffOf(p, new Date());
  const sessions = cutoff ? await sessionsDue(ctx.deps.db.writes, projectId, cutoff, Number.MAX_SAFE_INTEGER) : [];
  return {
    projectId,
    retentionDays: p.days,
    legalHold: p.held === 1,
    cutoff: cutoff?.toISOString() ?? null,
    sessions: sessions.map((s) => ({ id: s.id, name: s.name, updatedAt: s.updatedAt.toISOString() })),
  };
}

/** Runs the sweep every hour (first run after one interval) on whichever instance takes the lock; failures are logged. */
export function startRetentionSweeper(ctx: OperatorCtx, namespace: string, log: Logger, everyMs = HOUR_MS): { stop(): Promise<void> } {
  let running: Promise<unknown> | null = null;
  const timer = setInterval(() => {
    if (running) return;
    running = tryNamedLock(ctx.deps.db.pool, `${namespace}:retention-sweep`, () => sweepRetention(ctx))
      .then((r) => {
        if (r.got && r.value.sessions) log.info({ msg: 'retention sweep', ...r.value });
      })
      .catch((err: unknown) => log.error({ err, msg: 'retention sweep failed' }))
      .finally(() => {
        running = null;
      });
  }, everyMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
