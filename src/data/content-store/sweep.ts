/**
 * The content sweep: deletes objects no session_objects row names, once they have been unreferenced
 * for a grace period. Such objects are replaced or deleted versions (a reader that read the old
 * row may still be streaming them) and uploads whose transaction never committed (a crash or
 * rollback between the object write and the commit). An object is first recorded in
 * unreferenced_objects when a sweep finds it unnamed, and deleted by a sweep at least the grace
 * period later, so that the grace counts from when it stopped being needed, not from its upload.
 * Objects younger than the grace period are left alone: their transaction may still commit.
 */
import type { Sql } from '../sql';
import { marks } from '../sql';
import type { ContentStore } from './index';

/** How long an unreferenced object is kept, by default: longer than any read or write transaction runs. */
export const SWEEP_GRACE_MS = 60 * 60 * 1000;

interface SweepResult {
  /** Objects listed under this installation's prefix. */
  listed: number;
  /** Unreferenced objects recorded (or still recorded) but not yet past the grace period. */
  pending: number;
  deleted: number;
  deletedBytes: number;
}

export async function sweepObjects(db: Sql, store: ContentStore, options: { graceMs?: number } = {}): Promise<SweepResult> {
  const objects = store.objects;
  const result: SweepResult = { listed: 0, pending: 0, deleted: 0, deletedBytes: 0 };
  if (!objects) return result;
  const graceMs = options.graceMs ?? SWEEP_GRACE_MS;
  const graceS = Math.max(0, graceMs / 1000);
  const [{ started }] = await db.query<{ started: Date }>('SELECT NOW(3) AS started');
  for await (const page of objects.list(`${store.prefix}content/`)) {
    result.listed += page.length;
    if (page.length === 0) continue;
    const referenced = new Set(
      (await db.query<{ objectKey: string }>(`SELECT objectKey FROM session_objects WHERE objectKey IN (${marks(page)})`, ...page.map((o) => o.key))).map(
        (r) => r.objectKey,
      ),
    );
    const oldEnough = Date.now() - graceMs;
    const unreferenced = page.filter((o) => !referenced.has(o.key) && o.lastModified.getTime() <= oldEnough);
    if (unreferenced.length === 0) continue;
    const keys = unreferenced.map((o) => o.key);
    await db.execute(
      `INSERT INTO unreferenced_objects (objectKey, firstSeenAt, lastSeenAt) VALUES ${keys.map(() => '(?, NOW(3), NOW(3))').join(', ')}
        ON DUPLICATE KEY UPDATE lastSeenAt = NOW(3)`,
      ...keys,
    );
    const due = (
      await db.query<{ objectKey: string }>(
        `SELECT objectKey FROM unreferenced_objects WHERE objectKey IN (${marks(keys)}) AND firstSeenAt <= NOW(3) - INTERVAL ? MICROSECOND`,
        ...keys,
        Math.round(graceS * 1e6),
      )
    ).map((r) => r.objectKey);
    // Named again since the listing (a key is never reused, so this is a guard, not a case).
    const stillUnnamed = new Set(due);
    if (due.length) {
      for (const r of await db.query<{ objectKey: string }>(`SELECT objectKey FROM session_objects WHERE objectKey IN (${marks(due)})`, ...due)) {
        stillUnnamed.delete(r.objectKey);
      }
    }
    const doomed = [...stillUnnamed];
    if (doomed.length) {
      await objects.delete(doomed);
      await db.execute(`DELETE FROM unreferenced_objects WHERE objectKey IN (${marks(doomed)})`, ...doomed);
      result.deleted += doomed.length;
      result.deletedBytes += unreferenced.filter((o) => stillUnnamed.has(o.key)).reduce((n, o) => n + o.size, 0);
    }
    result.pending += keys.length - doomed.length;
  }
  // Records of objects that are gone (deleted by another sweep, or by hand).
  await db.execute('DELETE FROM unreferenced_objects WHERE lastSeenAt < ?', started);
  return result;
}

/** Runs the sweep every `everyMs` (first run after one interval) until stopped; failures are logged, not thrown. */
export function startSweeper(
  db: Sql,
  store: ContentStore,
  onError: (err: unknown) => void,
  everyMs = SWEEP_GRACE_MS,
): { stop(): Promise<void> } {
  let running: Promise<unknown> | null = null;
  const timer = setInterval(() => {
    if (running) return;
    running = sweepObjects(db, store)
      .catch(onError)
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
