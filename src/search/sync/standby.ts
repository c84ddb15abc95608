/**
 * Standbys apply the outbox from their own cursors (docs/search.md, "Standbys"). Each standby has
 * a place in the outbox, search_engine_cursors.lastId (the last row it applied), kept under the
 * engine's identity (engineIdentity: the number of engines, its position and its standby's URLs).
 * A feeder step locks that cursor (SKIP LOCKED: one service instance feeds a standby at a time,
 * the others skip it), reads the rows after it in id order, applies the ones routed to its engine
 * from the database's current state (as the primaries do), and moves the cursor past them in the
 * same transaction. A standby that was down, slow or failing simply resumes from its cursor; the
 * primary never waits for it.
 *
 * Ids are taken when a row is inserted, so a row may become visible after a higher one: the
 * cursor passes a hole in the ids only once the row after it is GAP_GRACE_MS old (a rolled-back
 * write, a bulk insert's unused ids, or a row moved to the dead letters leave one for good).
 *
 * Rebuild: a cursor that is missing (a new standby, or a new identity after MEILI_URLS or
 * MEILI_STANDBY_URLS changed) or null (older than what the outbox retains, or the standby came
 * back with its indexes gone) means the standby's indexes are emptied (created if missing), every
 * session of the scopes its engine holds is queued ('compact' rows: on the primary they only
 * compare hashes), and the cursor is set to the newest row older than GAP_GRACE_MS: those rows
 * re-read the database, and the rows after that point are applied again (harmless), so a write
 * whose row was not yet visible at the rebuild is not skipped either.
 */
import crypto from 'node:crypto';
import type { Pool } from 'mariadb';
import { cursorLag, lockCursor, readCursor, rowsAfter, setCursor, settledRowId } from '../../data/engine-cursors';
import { inClaimTransaction, queueSessionsOfOwners, sessionOwnerScopes } from '../../data/outbox';
import type { Sql } from '../../data/sql';
import type { Logger } from '../../logger';
import { ensureIndex } from '../engine/index-settings';
import { engineOf } from '../engine/placement';
import type { EngineRouter, EngineTarget } from './engine-router';

/** A hole in the ids is passed once the row after it is this old (a write's transaction is shorter). */
const GAP_GRACE_MS = 15_000;
/** Rows read per step. */
const STANDBY_BATCH = 500;
/** A batch that failed this many times in a row while the standby answers is passed over (logged), as the primaries set such work aside. */
const MAX_STANDBY_ATTEMPTS = 10;

/**
 * The identity a standby's cursor is kept under. The number of engines and the position are part
 * of it because they decide which scopes the engine holds (placement.ts): a standby whose share
 * changed must be rebuilt, not resumed.
 */
function engineIdentity(t: EngineTarget, engines: number): string {
  const s = t.engine.standby;
  const urls = s ? [s.main.url ?? '', s.recent.url ?? ''] : [];
  return crypto
    .createHash('sha256')
    .update(JSON.stringify([engines, t.engine.position, ...urls]))
    .digest('hex');
}

interface FeederDeps {
  pool: Pool;
  /** Statements on the write pool outside the cursor's transaction. */
  db: Sql;
  log: Logger;
  router: EngineRouter;
  indexUid: string;
  recentUid: string;
  /** Wakes the primaries' loops (a rebuild queued work). */
  notify: () => void;
  /** How old the row after a hole in the ids must be before the cursor passes it (default GAP_GRACE_MS). */
  gapGraceMs?: number;
}

/** What a step did: applied rows (more may follow), found nothing to do, or skipped the standby (down, or fed by another instance). */
type StepResult = 'applied' | 'idle' | 'skipped';

/** The rows a cursor may pass now: in id order, up to the first hole whose next row is younger than `graceMs`. */
export function passable<T extends { id: number; createdAt: Date; now: Date }>(lastId: number, rows: T[], graceMs = GAP_GRACE_MS): T[] {
  const out: T[] = [];
  let expected = lastId + 1;
  for (const r of rows) {
    if (r.id !== expected && r.now.getTime() - r.createdAt.getTime() < graceMs) break;
    out.push(r);
    expected = r.id + 1;
  }
  return out;
}

export class StandbyFeeder {
  private readonly n: number;
  private readonly failures = new Map<EngineTarget, number>();
  readonly gapGraceMs: number;

  constructor(private readonly d: FeederDeps) {
    this.n = d.router.targets.length;
    this.gapGraceMs = d.gapGraceMs ?? GAP_GRACE_MS;
  }

  /** The engines with a standby. */
  get targets(): EngineTarget[] {
    return this.d.router.targets.filter((t) => t.standby);
  }

  identity(t: EngineTarget): string {
    return engineIdentity(t, this.n);
  }

  /** One step for one standby; errors propagate (the caller backs off). */
  async step(t: EngineTarget): Promise<StepResult> {
    const e = t.engine;
    if (!t.standby || !e.standby || !e.standbyUp()) return 'skipped';
    const engine = this.identity(t);
    const result = await inClaimTransaction(this.d.pool, async (tx): Promise<StepResult | 'rebuild'> => {
      const c = await lockCursor(tx, engine, e.position);
      if (c === 'busy') return 'skipped';
      if (c === 'missing' || c.lastId === null) {
        if (c !== 'missing') await this.rebuild(tx, t, engine);
        return 'rebuild';
      }
      const rows = passable(c.lastId, await rowsAfter(tx, c.lastId, STANDBY_BATCH), this.gapGraceMs);
      if (rows.length === 0) return 'idle';
      const mine = (await this.d.router.route(this.d.db, rows)).get(e.position) ?? [];
      if (mine.length > 0) {
        const out = await t.standby!.applyRows(this.d.db, mine, rows[0].now.getTime());
        if (out.failed.length > 0) {
          const attempts = (this.failures.get(t) ?? 0) + 1;
          this.failures.set(t, attempts);
          if (attempts < MAX_STANDBY_ATTEMPTS) throw new Error(out.error || 'standby batch failed');
          this.d.log.error({
            msg: 'search standby batch failed too often; passed over',
            engine: e.position,
            rows: out.failed.length,
            err: out.error.slice(0, 500),
          });
        }
      }
      this.failures.delete(t);
      await setCursor(tx, engine, rows[rows.length - 1].id);
      return 'applied';
    });
    if (result === 'rebuild') {
      this.d.notify();
      return 'applied';
    }
    return result;
  }

  /** Empties the standby's indexes (with our settings), queues its engine's sessions and sets its cursor before them (in the locking transaction). */
  private async rebuild(tx: Sql, t: EngineTarget, engine: string): Promise<void> {
    const e = t.engine;
    const standby = e.standby!;
    e.standbyState = 'rebuilding';
    // Emptied, not dropped: another instance checking the standby's indexes meanwhile must not find
    // them missing (it would forget the cursor again and start another rebuild).
    for (const [conn, uid] of [
      [standby.main, this.d.indexUid],
      [standby.recent, this.d.recentUid],
    ] as const) {
      await ensureIndex(conn.admin(), uid);
      const task = await conn.admin().index(uid).deleteAllDocuments().waitTask();
      if (task.status !== 'succeeded') throw new Error(`emptying ${uid}: ${task.error?.message}`);
    }
    await setCursor(tx, engine, await settledRowId(tx, this.gapGraceMs));
    const owners = (await sessionOwnerScopes(tx)).filter((s) => engineOf(s, this.n) === e.position);
    const queued = await queueSessionsOfOwners(tx, owners);
    this.d.log.info({ msg: 'search standby rebuilding from the database', engine: e.position, sessions: queued });
  }

  /** Reads the standby's cursor and sets its state and lag (every instance does, whichever feeds it). */
  async refreshStatus(t: EngineTarget): Promise<void> {
    const e = t.engine;
    const lastId = await readCursor(this.d.db, this.identity(t));
    const lag = await cursorLag(this.d.db, lastId ?? null);
    e.standbyLagSeconds = lag.seconds;
    if (lastId == null) e.standbyState = 'rebuilding';
    else e.standbyState = lag.behind ? 'behind' : 'in-sync';
  }

  /** Every standby that answers has applied every row of the outbox (their states read afresh). */
  async caughtUp(): Promise<boolean> {
    let all = true;
    for (const t of this.targets) {
      await this.refreshStatus(t);
      if (t.engine.standbyUp() && t.engine.standbyState !== 'in-sync') all = false;
    }
    return all;
  }

  /** Deletes the standby's emptied fragments (after a step that found nothing to do: no batch of its is in flight here). */
  async deleteTombstones(t: EngineTarget): Promise<void> {
    if (t.standby && t.standby.pendingTombstones > 0 && t.engine.standbyUp()) await t.standby.deleteTombstones();
  }
}
