/**
 * Rebuilding a standby that missed index work (engine-router.ts): the database is the source of
 * truth. When the standby answers again its indexes are dropped and created empty, it gets every
 * batch again from then on (`rebuilding`), and every session of the scopes its engine holds is
 * queued for it ('compact' rows, applied through the outbox like any work, so the ordering rules
 * of worker.ts hold; on the primary they only compare hashes and send nothing that did not
 * change). It is `in-sync` again once the work queued up to then has drained.
 */
import { lastWorkId, queueSessionsOfOwners, sessionOwnerScopes, workUpTo } from '../../data/outbox';
import type { Sql } from '../../data/sql';
import type { Logger } from '../../logger';
import { ensureIndex } from '../engine/index-settings';
import { engineOf } from '../engine/placement';
import type { EngineTarget } from './engine-router';

interface StandbyRebuildDeps {
  db: Sql;
  log: Logger;
  indexUid: string;
  recentUid: string;
  engines: number;
  notify: () => void;
  /** Still wanted (the worker runs). */
  running: () => boolean;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms).unref());
const rebuilding = new WeakMap<EngineTarget, Promise<void>>();

/** Starts the rebuild of a standby that missed work and answers now (once at a time); resolves when it is in sync or failed. */
export function rebuildStandby(d: StandbyRebuildDeps, t: EngineTarget): Promise<void> {
  const e = t.engine;
  const standby = e.standby;
  if (!standby || e.standbyState !== 'missed' || !e.standbyUp()) return Promise.resolve();
  const running = rebuilding.get(t);
  if (running) return running;
  const p = (async () => {
    await t.standbyBusy;
    e.standbyState = 'rebuilding';
    try {
      for (const [conn, uid] of [
        [standby.main, d.indexUid],
        [standby.recent, d.recentUid],
      ] as const) {
        const task = await conn.admin().deleteIndex(uid).waitTask();
        if (task.status !== 'succeeded' && task.error?.code !== 'index_not_found') throw new Error(`deleting ${uid}: ${task.error?.message}`);
        await ensureIndex(conn.admin(), uid);
      }
      const owners = (await sessionOwnerScopes(d.db)).filter((s) => engineOf(s, d.engines) === e.position);
      const queued = await queueSessionsOfOwners(d.db, owners);
      const upTo = (await lastWorkId(d.db)) ?? 0;
      d.notify();
      d.log.info({ msg: 'search standby rebuilding from the database', engine: e.position, sessions: queued });
      while (d.running() && e.standbyState === 'rebuilding' && (await workUpTo(d.db, upTo)) > 0) await sleep(500);
      if (e.standbyState === 'rebuilding' && d.running()) {
        e.standbyState = 'in-sync';
        d.log.info({ msg: 'search standby in sync', engine: e.position });
      }
    } catch (err) {
      e.standbyState = 'missed';
      d.log.warn({ msg: 'search standby rebuild failed; retried when it answers', engine: e.position, err: String((err as Error)?.message ?? err) });
    }
  })().finally(() => rebuilding.delete(t));
  rebuilding.set(t, p);
  return p;
}
