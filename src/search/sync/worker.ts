/**
 * The outbox worker: applies the index work that writes recorded in search_outbox (same
 * transaction as the write), so that the index follows the database without ever failing a write.
 *
 * Claiming: `SELECT … FOR UPDATE SKIP LOCKED` in a READ COMMITTED transaction held while the work
 * is applied; rows are deleted in that transaction on success, or rescheduled with back-off.
 * Several instances may run workers at once: each row is claimed by one of them.
 *
 * Ordering: work is applied from the database's current state (an "upsert" re-reads the session;
 * a session that is gone is removed), so only one thing matters: two workers must never apply work
 * for the same session (or its project) at the same time, or an older read could land last. A
 * claimed row is therefore set aside while an older row of the same session (or of its project's
 * deletion) exists unclaimed by us: another worker holds it, or it waits for a retry. Writers
 * serialise on the session row before inserting their outbox row, so ids follow commit order.
 *
 * Two indexes (docs/search.md): a write ('upsert') of a session indexed whole goes to the small
 * *recent* index, where an indexing batch costs little whatever the size of the archive; the
 * *main* index gets everything else, and the recent sessions in bulk every few minutes
 * ('compact' rows, queued by queueCompaction), which also retires their recent copies. Two loops
 * (lanes) claim the two kinds of work, so that writes for the recent index never wait for the
 * main one, which may take minutes on a large archive; the recent index may have an engine of its
 * own (recentConn) for the same reason, the engine applying one batch at a time.
 *
 * Standbys (MEILI_STANDBY_URLS) are not fed by the claims: each applies the outbox from its own
 * cursor in a third loop (standby.ts), so applied rows are marked done rather than deleted while
 * there are standbys, and pruned once every cursor has passed them or after the retention bound.
 *
 * This file runs the loops; the jobs live beside it: claims.ts (claiming and releasing rows),
 * index-writer.ts (pushing sessions and removals to the engines), compaction.ts, rebuild.ts,
 * standby.ts.
 */
import type { Pool } from 'mariadb';
import { dropCursors, forgetCursor, pruneOutbox } from '../../data/engine-cursors';
import { backlogCount, deadCount, inClaimTransaction } from '../../data/outbox';
import { sqlOn, type Sql } from '../../data/sql';
import type { Logger } from '../../logger';
import { inlineOffload, type Offload } from '../../offload';
import { claimAndApply, type Lane, type RunResult } from './claims';
import { RECENT_MAX } from './compaction';
import type { MeiliConnection } from '../engine/connection';
import { SearchEngine } from '../engine/engines';
import { recentUidOf } from '../engine/index-settings';
import { EngineRouter } from './engine-router';
import type { IndexWriter, ProjectRef, SessionRef } from './index-writer';
import { queueAll, queueRecent, reindexAll } from './rebuild';
import { StandbyFeeder } from './standby';

interface WorkerOptions {
  pool: Pool;
  conn: MeiliConnection;
  /** The recent index's engine (default: conn's). */
  recentConn?: MeiliConnection;
  /** Several engines or standbys (src/search/engine/engines.ts); when given, conn and recentConn are engines[0]'s primary. */
  engines?: SearchEngine[];
  indexUid: string;
  logger: Logger;
  /** Rows claimed per batch. */
  batchSize?: number;
  /** Idle poll interval (work written by other instances); notify() wakes the worker at once. */
  pollMs?: number;
  /** True when the engine may be written to (index created, settings applied). */
  ready?: () => boolean;
  /** Move the recent index into the main one at least this often (default 5 min)… */
  compactEveryMs?: number;
  /** …or as soon as it holds this many documents (default RECENT_MAX). */
  recentMax?: number;
  /** Builds the documents of large sessions off the event loop (default: inline). */
  offload?: Offload;
  /** Applied rows are kept for the standbys at most this long (SEARCH_STANDBY_RETENTION_MINUTES; default 1 h, at least 4 × the gap grace); a standby further behind is rebuilt from the database. */
  standbyRetentionMs?: number;
  /** How old the row after a hole in the outbox ids must be before a standby's cursor passes it (default standby.ts's GAP_GRACE_MS). */
  standbyGapGraceMs?: number;
}

/** Emptied fragments are deleted after the worker has been idle this long (off the write path). */
const TOMBSTONE_DELAY_MS = 2_000;
/**
 * A lane's claim doubles after each full batch, up to this many rows, and falls back to
 * `batchSize` after one that was not full (or failed): one upload still waits for a claim of 100, while a
 * stream of uploads is applied in fewer, larger engine batches (every batch pays a commit).
 */
const GROWN_CLAIM_MAX = 1_600;
/** How often the worker looks at the recent index's size. */
const COMPACT_CHECK_MS = 5_000;
/** The standbys' loop polls at most this often when idle (a step costs a few statements per standby). */
const STANDBY_POLL_MS = 250;
/** How often the rows every standby has passed are deleted. */
const PRUNE_EVERY_MS = 2_000;
/** How long applied rows are kept for a standby that is behind (STANDBY_RETENTION_MS by default). */
const STANDBY_RETENTION_MS = 60 * 60_000;

/** Wakes a loop that sleeps between polls when new work is announced. */
class Waker {
  private pending = false;
  private wake: (() => void) | null = null;

  notify(): void {
    this.pending = true;
    this.wake?.();
  }

  clear(): void {
    this.pending = false;
  }

  /** Sleeps up to `ms`, less if notified (also since the last clear()) or no longer running. */
  idle(ms: number, running: () => boolean): Promise<void> {
    if (this.pending || !running()) {
      this.pending = false;
      return Promise.resolve();
    }
    return new Promise<void>((resolve) => {
      const finish = () => {
        clearTimeout(timer);
        this.wake = null;
        this.pending = false;
        resolve();
      };
      const timer = setTimeout(finish, ms);
      this.wake = finish;
    });
  }
}

export class OutboxWorker {
  private readonly pool: Pool;
  /** Statements on the write pool outside the claim transaction (src/data). */
  private readonly db: Sql;
  private readonly conn: MeiliConnection;
  private readonly recentConn: MeiliConnection;
  private readonly indexUid: string;
  private readonly recentUid: string;
  private readonly log: Logger;
  private readonly batchSize: number;
  private readonly pollMs: number;
  private readonly ready: () => boolean;
  private readonly engines: SearchEngine[];
  private readonly router: EngineRouter;
  private running = false;
  private loop: Promise<void> | null = null;
  private readonly wakers = { fresh: new Waker(), main: new Waker(), standby: new Waker() };
  /** Some engine has a standby: rows applied stay for the standbys' cursors. */
  private readonly retain: boolean;
  private readonly feeder: StandbyFeeder;
  private readonly standbyRetentionMs: number;
  private lastWork = 0;
  private nextCompactionCheck = 0;

  constructor(opts: WorkerOptions) {
    this.pool = opts.pool;
    this.db = sqlOn(opts.pool);
    this.engines = opts.engines ?? [Object.assign(new SearchEngine(0, { main: opts.conn, recent: opts.recentConn ?? opts.conn }, null), { ready: true })];
    this.conn = this.engines[0].primary.main;
    this.recentConn = this.engines[0].primary.recent;
    this.indexUid = opts.indexUid;
    this.recentUid = recentUidOf(opts.indexUid);
    this.log = opts.logger;
    this.batchSize = opts.batchSize ?? 100;
    this.pollMs = opts.pollMs ?? 100;
    this.ready = opts.ready ?? (() => true);
    this.router = new EngineRouter({
      engines: this.engines,
      indexUid: this.indexUid,
      recentUid: this.recentUid,
      db: this.db,
      log: this.log,
      offload: opts.offload ?? inlineOffload,
      notify: () => this.notify(),
      compactEveryMs: opts.compactEveryMs ?? 5 * 60_000,
      recentMax: opts.recentMax ?? RECENT_MAX,
    });
    this.retain = this.engines.some((e) => e.standby);
    this.feeder = new StandbyFeeder({
      gapGraceMs: opts.standbyGapGraceMs,
      pool: this.pool,
      db: this.db,
      log: this.log,
      router: this.router,
      indexUid: this.indexUid,
      recentUid: this.recentUid,
      notify: () => this.notify(),
    });
    // A retention shorter than the grace would expire a cursor that waits at a hole.
    this.standbyRetentionMs = Math.max(opts.standbyRetentionMs ?? STANDBY_RETENTION_MS, 4 * this.feeder.gapGraceMs);
  }

  /** The first engine's writer (one engine: the only one). */
  private get writer(): IndexWriter {
    return this.router.targets[0].primary;
  }

  /** Every standby that answers has applied the whole outbox (their states are read afresh). */
  standbysCaughtUp(): Promise<boolean> {
    return this.feeder.caughtUp();
  }

  /** A standby's indexes were lost or created empty: its cursor is forgotten and it is rebuilt from the database. */
  async standbyLost(position: number): Promise<void> {
    const t = this.router.targets[position];
    if (!t?.standby) return;
    t.engine.standbyState = 'rebuilding';
    await forgetCursor(this.db, this.feeder.identity(t));
    this.wakers.standby.notify();
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    // Two lanes: work on the main index (compaction, large sessions, deletes) may wait seconds to
    // minutes for it on a large archive, and writes for the recent index must not wait behind it
    // (per-session order still holds: deferredRows).
    const loops = [this.run('fresh'), this.run('main')];
    if (this.retain) loops.push(this.runStandbys());
    // Without standbys rows are deleted once applied: a cursor kept from an earlier configuration
    // would not know what it missed, so none is kept (a standby configured again is rebuilt).
    else
      loops.push(
        dropCursors(this.db).catch((err) => this.log.warn({ msg: 'search: dropping standby cursors failed', err: String((err as Error)?.message ?? err) })),
      );
    this.loop = Promise.all(loops).then(() => undefined);
  }

  async stop(): Promise<void> {
    this.running = false;
    for (const w of Object.values(this.wakers)) w.notify();
    await this.loop;
    this.loop = null;
    if (this.router.pendingTombstones > 0) await this.router.deleteTombstones();
    for (const t of this.feeder.targets) await this.feeder.deleteTombstones(t).catch(() => undefined);
  }

  /** New work was written: look now rather than at the next poll. */
  notify(): void {
    for (const w of Object.values(this.wakers)) w.notify();
  }

  /** Rows set aside after failing too often (search_outbox_dead). */
  deadLetters(): Promise<number> {
    return deadCount(this.db);
  }

  /** Rows waiting to be applied (including ones waiting for a retry). */
  backlog(): Promise<number> {
    return backlogCount(this.db);
  }

  /**
   * The standbys' loop: a step per standby (standby.ts), their states and lags read after it, the
   * rows every cursor has passed pruned every PRUNE_EVERY_MS. A standby that fails waits (doubling
   * up to 5 s); one that is down is skipped until it answers.
   */
  private async runStandbys(): Promise<void> {
    const waker = this.wakers.standby;
    const retryAt = new Map<number, { at: number; failures: number }>();
    let nextPrune = 0;
    while (this.running) {
      waker.clear();
      let more = false;
      for (const t of this.feeder.targets) {
        const position = t.engine.position;
        const wait = retryAt.get(position);
        if (wait && Date.now() < wait.at) continue;
        try {
          const r = await this.feeder.step(t);
          retryAt.delete(position);
          if (r === 'applied') more = true;
          if (r === 'idle') await this.feeder.deleteTombstones(t);
        } catch (err) {
          const failures = (wait?.failures ?? 0) + 1;
          retryAt.set(position, { at: Date.now() + Math.min(5000, 100 * 2 ** failures), failures });
          this.log.warn({
            msg: 'search standby batch failed; retried from its cursor',
            engine: position,
            err: String((err as Error)?.message ?? err).slice(0, 300),
          });
        }
        try {
          await this.feeder.refreshStatus(t);
        } catch {
          // The database is away: the loop tries again.
        }
      }
      if (Date.now() >= nextPrune) {
        nextPrune = Date.now() + PRUNE_EVERY_MS;
        try {
          // READ COMMITTED: the deletes pass over rows claimed by the primaries' transactions (not
          // done in their committed version) without waiting for them, and take no gap locks that
          // would hold back writers' inserts.
          const { expired } = await inClaimTransaction(this.pool, (tx) => pruneOutbox(tx, this.standbyRetentionMs));
          if (expired > 0)
            this.log.warn({ msg: 'search standby cursor older than the outbox retains; it will be rebuilt from the database', cursors: expired });
        } catch (err) {
          this.log.warn({ msg: 'search outbox prune failed', err: String((err as Error)?.message ?? err) });
        }
      }
      // Writes of this process wake the loop at once; other instances' are found at the next poll.
      if (!more) await waker.idle(Math.max(this.pollMs, STANDBY_POLL_MS), () => this.running);
    }
  }

  private async run(lane: Lane): Promise<void> {
    const waker = this.wakers[lane];
    const idle = (ms: number) => waker.idle(ms, () => this.running);
    let limit = this.batchSize;
    let failures = 0;
    while (this.running) {
      if (!this.router.writable() || !this.ready()) {
        await idle(500);
        continue;
      }
      try {
        waker.clear();
        const r = await this.runOnce(limit, lane);
        failures = 0;
        if (r.claimed > 0) this.lastWork = Date.now();
        // Also while writes keep every batch full: else the recent index would grow, and each
        // of its batches slow down, for as long as they come.
        if (lane === 'fresh' && Date.now() >= this.nextCompactionCheck) {
          this.nextCompactionCheck = Date.now() + COMPACT_CHECK_MS;
          await this.router.compactIfDue();
        }
        // A full batch applied: there may be more right away, in a larger claim.
        if (r.applied > 0 && r.failed === 0 && r.claimed >= limit) {
          limit = Math.max(limit, Math.min(limit * 2, GROWN_CLAIM_MAX));
          continue;
        }
        limit = this.batchSize;
        if (lane === 'fresh' && r.claimed === 0 && this.router.pendingTombstones > 0 && Date.now() - this.lastWork > TOMBSTONE_DELAY_MS) {
          await this.router.deleteTombstones();
        }
      } catch (err) {
        failures++;
        limit = this.batchSize;
        this.log.error({ msg: 'search outbox worker error', lane, err: String((err as Error)?.message ?? err) });
        await idle(Math.min(5000, 100 * 2 ** failures));
        continue;
      }
      await idle(this.pollMs);
    }
  }

  /**
   * Claims one batch and applies it: rows of one lane (the fresh lane takes 'upsert' rows, which
   * go to the recent index; the main lane every other kind), or of both. Exposed for reindexing
   * and tests.
   */
  runOnce(limit = this.batchSize, lane: Lane | 'all' = 'all'): Promise<RunResult> {
    return claimAndApply({
      pool: this.pool,
      db: this.db,
      limit,
      lane,
      log: this.log,
      applyRows: (tx, rows, syncedAt) => this.router.applyRows(tx, rows, syncedAt),
      retain: this.retain,
    });
  }

  /** Brings the indexes in line with the database for these projects and sessions (IndexWriter.apply). */
  apply(db: Sql, deletedProjects: ProjectRef[], sessions: SessionRef[], syncedAt: number): Promise<void> {
    return this.writer.apply(db, deletedProjects, sessions, syncedAt);
  }

  /** Waits for the engine to finish these tasks (in order) and fails if one of them failed. */
  waitTasks(conn: MeiliConnection, uids: number[], timeoutMs = 30_000): Promise<void> {
    return this.writer.waitTasks(conn, uids, timeoutMs);
  }

  /** Rebuilds the index from the database (rebuild.ts). */
  reindexAll(onProgress?: (p: { done: number; total: number }) => void): Promise<{ sessions: number }> {
    const deps = { db: this.db, targets: this.router.targets, conns: this.router.primaryConns(), indexUid: this.indexUid, recentUid: this.recentUid };
    return reindexAll({ ...deps, runOnce: (limit) => this.runOnce(limit), notify: () => this.notify() }, onProgress);
  }

  /** Queues every session for the main index without waiting (a main index found empty at start). */
  queueAll(): Promise<number> {
    return queueAll({ db: this.db, notify: () => this.notify() });
  }

  /** Queues the sessions written lately for the recent index (a recent index found empty at start). */
  queueRecent(): Promise<number> {
    return queueRecent({ db: this.db, notify: () => this.notify() });
  }

  /** Queues the sessions of the recent index for the main one (compaction.ts); returns how many. */
  queueCompaction(settledMs = 0): Promise<number> {
    return this.router.queueCompaction(settledMs);
  }
}
