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
 * Two indexes (README "Search"): a write ('upsert') of a session indexed whole goes to the small
 * *recent* index, where an indexing batch costs little whatever the size of the archive; the
 * *main* index gets everything else, and the recent sessions in bulk every few minutes
 * ('compact' rows, queued by queueCompaction), which also retires their recent copies. Two loops
 * (lanes) claim the two kinds of work, so that writes for the recent index never wait for the
 * main one, which may take minutes on a large archive; the recent index may have an engine of its
 * own (recentConn) for the same reason, the engine applying one batch at a time.
 */
import type { Pool, PoolConnection } from 'mariadb';
import type { Index } from 'meilisearch';
import type { Logger } from '../logger';
import { byteLength, inlineOffload, joined, OFFLOAD_MIN_BYTES, ownedBuffer, type Bytes, type Offload } from '../offload';
import { allAnswer, probeAll, type MeiliConnection } from './connection';
import { sessionKeyOf, TOMBSTONE, tombstoneOf, toDocuments, WHOLE_MAX, type IndexableSession, type SessionDocument } from './documents';
import { ownedProjectFilter, ownedSessionsFilter } from './filter';
import { isEngineUnreachable } from './http-client';
import { recentUidOf } from './index-settings';
import { buryDeadRows, deadCount, type OutboxOp } from './outbox';

interface OutboxRow {
  id: number;
  op: OutboxOp;
  userId: string;
  projectId: string;
  sessionId: string | null;
  attempts: number;
}

interface SessionRef {
  /** The owner: every filter the worker sends names it (contract §16). */
  userId: string;
  projectId: string;
  sessionId: string;
  /** Push every fragment, unchanged ones included (rebuild). */
  force?: boolean;
  /** To the main index even when the session is indexed whole (rebuild, compaction). */
  main?: boolean;
}

export interface RunResult {
  claimed: number;
  applied: number;
  failed: number;
  /** Set aside: another worker holds older work for the same session or project. */
  deferred: number;
}

export interface WorkerOptions {
  pool: Pool;
  conn: MeiliConnection;
  /** The recent index's engine (default: conn's). */
  recentConn?: MeiliConnection;
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
}

/** Markdown bytes read and pushed per request. */
const BYTES_PER_PUSH = 8 * 1024 * 1024;
/** Emptied fragments are deleted after the worker has been idle this long (off the write path). */
const TOMBSTONE_DELAY_MS = 2_000;
/** Sessions per SQL statement. */
const SESSIONS_PER_QUERY = 200;
/**
 * Compaction: rows claimed at once (one main-index batch pays the engine's per-batch cost, which
 * grows with the index, once for all of them), and the recent index's size that starts one early.
 */
const COMPACT_BATCH = 1000;
/** Documents (a large session has one per ~1.5 KB fragment) that start a compaction early. */
const RECENT_MAX = 5000;
/** How often the worker looks at the recent index's size. */
const COMPACT_CHECK_MS = 5_000;
/** A session written this recently stays in the recent index at a compaction (a live session
 * would be moved again at once, and written back whole). */
const SETTLED_MS = 60_000;
/** Back-off after a failure: 200 ms doubling per attempt, capped at 30 s. */
const BACKOFF_SQL = 'DATE_ADD(NOW(3), INTERVAL LEAST(30000, 200 * POW(2, LEAST(attempts, 20))) * 1000 MICROSECOND)';

/** How long to wait for the engine to index this much markdown. */
const timeoutFor = (bytes: number) => 30_000 + Math.ceil(bytes / (1024 * 1024)) * 5_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const placeholders = (n: number) => Array(n).fill('?').join(', ');
const refKey = (r: Pick<SessionRef, 'projectId' | 'sessionId'>) => sessionKeyOf(r.projectId, r.sessionId);

function chunked<T>(xs: T[], n: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < xs.length; i += n) out.push(xs.slice(i, i + n));
  return out;
}

function toBuffer(data: unknown): Buffer {
  if (Buffer.isBuffer(data)) return data;
  if (data instanceof Uint8Array) return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  return Buffer.from(String(data ?? ''), 'utf8');
}

/** Consecutive groups of rows whose markdown adds up to at most `max` bytes (one row may exceed it alone). */
function slicesBySize<T extends { markdownSize: number }>(rows: T[], max: number): T[][] {
  const out: T[][] = [];
  let cur: T[] = [];
  let size = 0;
  for (const r of rows) {
    if (cur.length && size + Number(r.markdownSize) > max) {
      out.push(cur);
      cur = [];
      size = 0;
    }
    cur.push(r);
    size += Number(r.markdownSize);
  }
  if (cur.length) out.push(cur);
  return out;
}

/** Rows of `rows` that must wait because an older, unclaimed row touches the same session/project. */
export function deferredRows(
  rows: OutboxRow[],
  older: Array<Pick<OutboxRow, 'id' | 'op' | 'projectId' | 'sessionId'> & { waiting?: boolean | number }>,
): Set<number> {
  const claimed = new Set(rows.map((r) => r.id));
  // A row waiting for a retry is held by no worker: work that re-reads the database may pass it
  // (contract §16: a failing unit never holds back later work), except a project's deletion,
  // which is applied as such, not from the database's state.
  const blockers = older.filter((o) => !claimed.has(o.id) && (!o.waiting || o.op === 'delete_project'));
  const deferred = new Set<number>();
  for (const r of rows) {
    const blocked = blockers.some(
      (b) =>
        b.id < r.id &&
        b.projectId === r.projectId &&
        (r.op === 'delete_project' || b.op === 'delete_project' || b.sessionId === r.sessionId),
    );
    if (blocked) deferred.add(r.id);
  }
  return deferred;
}

interface ProjectRef {
  userId: string;
  projectId: string;
}

/** The worker's two loops: writes for the recent index, and everything for the main one. */
type Lane = 'fresh' | 'main';

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
  private readonly conn: MeiliConnection;
  private readonly recentConn: MeiliConnection;
  /** Both engines (one, when the recent index shares the main engine). */
  private readonly conns: MeiliConnection[];
  private readonly indexUid: string;
  private readonly recentUid: string;
  private readonly log: Logger;
  private readonly batchSize: number;
  private readonly pollMs: number;
  private readonly ready: () => boolean;
  private readonly offload: Offload;
  private running = false;
  private loop: Promise<void> | null = null;
  private readonly wakers = { fresh: new Waker(), main: new Waker() };
  /** Ids of emptied fragments to delete when the worker has nothing better to do. */
  private readonly tombstones = new Set<string>();
  private lastWork = 0;
  private readonly compactEveryMs: number;
  private readonly recentMax: number;
  private lastCompaction = Date.now();
  private nextCompactionCheck = 0;

  constructor(opts: WorkerOptions) {
    this.pool = opts.pool;
    this.conn = opts.conn;
    this.recentConn = opts.recentConn ?? opts.conn;
    this.conns = [...new Set([this.conn, this.recentConn])];
    this.indexUid = opts.indexUid;
    this.recentUid = recentUidOf(opts.indexUid);
    this.compactEveryMs = opts.compactEveryMs ?? 5 * 60_000;
    this.recentMax = opts.recentMax ?? RECENT_MAX;
    this.log = opts.logger;
    this.batchSize = opts.batchSize ?? 100;
    this.pollMs = opts.pollMs ?? 100;
    this.ready = opts.ready ?? (() => true);
    this.offload = opts.offload ?? inlineOffload;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    // Two lanes: work on the main index (compaction, large sessions, deletes) may wait seconds to
    // minutes for it on a large archive, and writes for the recent index must not wait behind it
    // (per-session order still holds: deferredRows).
    this.loop = Promise.all([this.run('fresh'), this.run('main')]).then(() => undefined);
  }

  async stop(): Promise<void> {
    this.running = false;
    for (const w of Object.values(this.wakers)) w.notify();
    await this.loop;
    this.loop = null;
    if (this.tombstones.size > 0 && this.conn.isHealthy()) await this.deleteTombstones();
  }

  /** New work was written: look now rather than at the next poll. */
  notify(): void {
    for (const w of Object.values(this.wakers)) w.notify();
  }

  /** Rows set aside after failing too often (search_outbox_dead). */
  deadLetters(): Promise<number> {
    return deadCount(this.pool);
  }

  /** Rows waiting to be applied (including ones waiting for a retry). */
  async backlog(): Promise<number> {
    const [row] = await this.pool.query('SELECT COUNT(*) AS n FROM search_outbox');
    return Number(row.n);
  }

  private async run(lane: Lane): Promise<void> {
    const waker = this.wakers[lane];
    const idle = (ms: number) => waker.idle(ms, () => this.running);
    const limit = this.batchSize;
    let failures = 0;
    while (this.running) {
      if (!this.conns.every((c) => c.isHealthy()) || !this.ready()) {
        await idle(500);
        continue;
      }
      try {
        waker.clear();
        const r = await this.runOnce(limit, lane);
        failures = 0;
        if (r.claimed > 0) this.lastWork = Date.now();
        // A full batch applied: there may be more right away.
        if (r.applied > 0 && r.failed === 0 && r.claimed >= limit) continue;
        if (lane === 'fresh') {
          if (r.claimed === 0 && this.tombstones.size > 0 && Date.now() - this.lastWork > TOMBSTONE_DELAY_MS) {
            await this.deleteTombstones();
          }
          if (Date.now() >= this.nextCompactionCheck) {
            this.nextCompactionCheck = Date.now() + COMPACT_CHECK_MS;
            await this.compactIfDue();
          }
        }
      } catch (err) {
        failures++;
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
  async runOnce(limit = this.batchSize, lane: Lane | 'all' = 'all'): Promise<RunResult> {
    const result: RunResult = { claimed: 0, applied: 0, failed: 0, deferred: 0 };
    const ofLane = lane === 'fresh' ? " AND op = 'upsert'" : lane === 'main' ? " AND op <> 'upsert'" : '';
    // Cheap look first (index on availableAt): idle polling costs one indexed read.
    const probe = await this.pool.query(`SELECT id, op FROM search_outbox WHERE availableAt <= NOW(3)${ofLane} LIMIT 1`);
    if (probe.length === 0) return result;
    if (probe[0].op === 'compact') limit = Math.max(limit, COMPACT_BATCH);

    const c = await this.pool.getConnection();
    try {
      // READ COMMITTED: no gap locks (writers keep inserting), every statement sees the latest commits.
      await c.query('SET TRANSACTION ISOLATION LEVEL READ COMMITTED');
      await c.beginTransaction();
      try {
        // Walk the primary key in order: the availableAt index would make the engine read (and
        // lock) every due row before sorting, instead of stopping at the limit.
        const rows: Array<OutboxRow & { now: Date }> = await c.query(
          `SELECT id, op, userId, projectId, sessionId, attempts, NOW(3) AS now FROM search_outbox FORCE INDEX (PRIMARY)
            WHERE availableAt <= NOW(3)${ofLane} ORDER BY id LIMIT ? FOR UPDATE SKIP LOCKED`,
          [limit],
        );
        result.claimed = rows.length;
        if (rows.length === 0) {
          await c.commit();
          return result;
        }
        const maxId = Math.max(...rows.map((r) => r.id));
        const older = await c.query(
          `SELECT id, op, projectId, sessionId, availableAt > NOW(3) AS waiting FROM search_outbox WHERE id < ? AND projectId IN (${placeholders(
            new Set(rows.map((r) => r.projectId)).size,
          )})`,
          [maxId, ...new Set(rows.map((r) => r.projectId))],
        );
        const deferred = deferredRows(rows, older);
        result.deferred = deferred.size;
        const runnable = rows.filter((r) => !deferred.has(r.id));
        if (runnable.length > 0) {
          const syncedAt = rows[0].now.getTime();
          const outcome = await this.applyRows(c, runnable, syncedAt);
          result.applied = outcome.done.length;
          result.failed = outcome.failed.length;
          if (outcome.done.length) {
            await c.query(`DELETE FROM search_outbox WHERE id IN (${placeholders(outcome.done.length)})`, outcome.done);
          }
          if (outcome.failed.length) {
            await c.query(
              `UPDATE search_outbox SET attempts = attempts + 1, lastError = ?, availableAt = ${BACKOFF_SQL}
                WHERE id IN (${placeholders(outcome.failed.length)})`,
              [outcome.error.slice(0, 2000), ...outcome.failed],
            );
            // A unit that keeps failing is set aside rather than retried forever (not while the
            // engine is away: that is no fault of the work).
            const dead = outcome.away ? 0 : await buryDeadRows(c, outcome.failed);
            if (dead > 0) this.log.error({ msg: 'search outbox work failed too often; moved to search_outbox_dead', rows: dead, err: outcome.error.slice(0, 500) });
          }
        }
        await c.commit();
        return result;
      } catch (err) {
        await c.rollback().catch(() => undefined);
        throw err;
      }
    } finally {
      await c.release();
    }
  }

  /**
   * Applies the rows (all at once; after a failure that is not the engine being away, one unit at a
   * time so that one bad session does not hold back the others). Returns row ids done and failed.
   */
  private async applyRows(c: PoolConnection, rows: OutboxRow[], syncedAt: number) {
    const units = new Map<string, { ids: number[]; project?: ProjectRef; session?: SessionRef }>();
    for (const r of rows) {
      const key = r.op === 'delete_project' || !r.sessionId ? `p:${r.projectId}` : `s:${refKey({ projectId: r.projectId, sessionId: r.sessionId })}`;
      const unit = units.get(key) ?? { ids: [] };
      unit.ids.push(r.id);
      if (key.startsWith('p:')) unit.project = { userId: r.userId, projectId: r.projectId };
      else {
        unit.session = {
          userId: r.userId,
          projectId: r.projectId,
          sessionId: r.sessionId!,
          force: unit.session?.force || r.op === 'reindex',
          main: unit.session?.main || r.op === 'reindex' || r.op === 'compact',
        };
      }
      units.set(key, unit);
    }
    const all = [...units.values()];
    const apply = (us: typeof all) =>
      this.apply(
        c,
        us.flatMap((u) => (u.project ? [u.project] : [])),
        us.flatMap((u) => (u.session ? [u.session] : [])),
        syncedAt,
      );
    try {
      await apply(all);
      for (const c of this.conns) c.reportSuccess();
      return { done: rows.map((r) => r.id), failed: [] as number[], error: '', away: false };
    } catch (err) {
      this.reportFailure(err);
      const error = String((err as Error)?.message ?? err);
      if (isEngineUnreachable(err) || all.length === 1) {
        this.log.warn({ msg: 'search index work failed; will retry', rows: rows.length, err: error });
        return { done: [] as number[], failed: rows.map((r) => r.id), error, away: isEngineUnreachable(err) };
      }
      const done: number[] = [];
      const failed: number[] = [];
      let lastError = error;
      let away = false;
      for (const u of all) {
        try {
          await apply([u]);
          done.push(...u.ids);
        } catch (e) {
          this.reportFailure(e);
          lastError = String((e as Error)?.message ?? e);
          failed.push(...u.ids);
          if (isEngineUnreachable(e)) {
            away = true;
            failed.push(...all.slice(all.indexOf(u) + 1).flatMap((x) => x.ids));
            break;
          }
        }
      }
      if (failed.length) this.log.warn({ msg: 'search index work failed; will retry', rows: failed.length, err: lastError });
      return { done, failed, error: lastError, away };
    }
  }

  /**
   * Brings the indexes in line with the database for these projects (deleted) and sessions
   * (re-read: pushed when present, removed when gone), and waits until the engine applied it.
   * A written session ('upsert', 'upsert_large') goes to the recent index; rebuilds and compaction
   * to the main one, after which the session's recent copy, if any is older, is removed. Either
   * way only documents that changed are sent, and fragments a session no longer has are emptied
   * after the new ones are added (never a moment without the session).
   */
  async apply(c: PoolConnection | Pool, deletedProjects: ProjectRef[], sessions: SessionRef[], syncedAt: number): Promise<void> {
    const main = this.conn.admin().index<SessionDocument>(this.indexUid);
    const recent = this.recentConn.admin().index<SessionDocument>(this.recentUid);
    // Task ids are per engine.
    const tasks: number[] = [];
    const recentTasks: number[] = [];
    let bytes = 0;
    for (const { userId, projectId } of deletedProjects) {
      const filter = ownedProjectFilter(userId, projectId);
      tasks.push((await main.deleteDocuments({ filter })).taskUid);
      recentTasks.push((await recent.deleteDocuments({ filter })).taskUid);
    }
    for (const group of chunked(sessions, SESSIONS_PER_QUERY)) {
      const byKey = new Map(group.map((s) => [refKey(s), s]));
      const rows: Array<IndexableSession & { markdownSize: number }> = await c.query(
        `SELECT projectId, id, userId, name, createdAt, clientName, agentName, deviceId, metadataJson, hasGitBranches, contentDigest, markdownSize
           FROM sessions WHERE ${group.map(() => '(projectId = ? AND id = ?)').join(' OR ')}`,
        group.flatMap((s) => [s.projectId, s.sessionId]),
      );
      const present = new Set(rows.map((r) => sessionKeyOf(r.projectId, r.id)));
      const gone = group.filter((s) => !present.has(refKey(s)));
      if (gone.length) {
        const filter = ownedSessionsFilter(gone);
        tasks.push((await main.deleteDocuments({ filter })).taskUid);
        recentTasks.push((await recent.deleteDocuments({ filter })).taskUid);
      }
      if (rows.length === 0) continue;
      const retire: SessionRef[] = [];
      const batches = { main: [] as SessionDocument[], recent: [] as SessionDocument[] };
      let batchBytes = 0;
      const flush = async () => {
        if (batches.main.length) tasks.push((await main.addDocuments(batches.main)).taskUid);
        if (batches.recent.length) recentTasks.push((await recent.addDocuments(batches.recent)).taskUid);
        batches.main = [];
        batches.recent = [];
        batchBytes = 0;
      };
      // Read content in slices of bounded size (a session may be tens of MB).
      for (const slice of slicesBySize(rows, BYTES_PER_PUSH)) {
        const content = await this.readMarkdown(c, slice);
        const target = (key: string) => (byKey.get(key)?.main ? 'main' : 'recent');
        const refs = slice.map((row) => ({ userId: row.userId, projectId: row.projectId, sessionId: row.id }));
        const keys = refs.map(refKey);
        const indexed = {
          main: await this.indexedFragments(main, refs.filter((r) => target(refKey(r)) === 'main')),
          recent: await this.indexedFragments(recent, refs.filter((r) => target(refKey(r)) === 'recent')),
        };
        for (const [i, row] of slice.entries()) {
          const key = keys[i];
          const to = target(key);
          if (to === 'main') retire.push(refs[i]);
          const force = byKey.get(key)?.force;
          const have = indexed[to].get(key) ?? new Map<string, string>();
          const markdown = content.get(key) ?? Buffer.alloc(0);
          let ids: Set<string>;
          if (Array.isArray(markdown)) {
            // A large session: its documents are built and serialised on a worker thread (contract
            // §16), then pushed batch by batch (1 MiB each, as bytes) behind what is already queued.
            await flush();
            const built = await this.offload.documents({ row, markdown, syncedAt, have, force: Boolean(force), batchBytes: 1024 * 1024 });
            const [conn, uid, uids] = to === 'main' ? [this.conn, this.indexUid, tasks] : [this.recentConn, this.recentUid, recentTasks];
            for (const batch of built.batches) uids.push(await conn.addDocumentsJson(uid, batch));
            ids = new Set(built.ids);
          } else {
            const docs = toDocuments(row, markdown.toString('utf8'), syncedAt);
            for (const doc of docs) {
              if (!force && have.get(doc.id) === doc.hash) continue;
              batches[to].push(doc);
              batchBytes += doc.content.length + 512;
              if (batchBytes >= BYTES_PER_PUSH) await flush();
            }
            ids = new Set(docs.map((d) => d.id));
          }
          for (const [id, hash] of have) {
            if (ids.has(id)) continue;
            // Main: deleted when the worker is idle. Recent: with the session, at compaction.
            if (to === 'main') this.tombstones.add(id);
            if (hash === TOMBSTONE && !force) continue;
            batches[to].push(tombstoneOf(id, row, syncedAt));
          }
        }
        bytes += slice.reduce((n, r) => n + Number(r.markdownSize), 0);
      }
      await flush();
      // Once the main index has the sessions, their recent copies written before this claim go
      // (a later write of the same session was claimed after this one: its copy is newer).
      if (retire.length) {
        await this.waitTasks(this.conn, tasks.splice(0), timeoutFor(bytes));
        const filter = `${ownedSessionsFilter(retire)} AND syncedAt <= ${syncedAt}`;
        recentTasks.push((await recent.deleteDocuments({ filter })).taskUid);
      }
    }
    await this.waitTasks(this.conn, tasks, timeoutFor(bytes));
    await this.waitTasks(this.recentConn, recentTasks, timeoutFor(bytes));
  }

  /** A failure to reach an engine: which one is not known here, so both are probed. */
  private reportFailure(err: unknown): void {
    if (isEngineUnreachable(err)) probeAll(this.conns);
  }

  /**
   * Deletes emptied fragments, without waiting for the engine (a tombstone left behind is
   * harmless: it matches nothing, and the next push of its session tombstones it again).
   */
  private async deleteTombstones(): Promise<void> {
    const ids = [...this.tombstones];
    this.tombstones.clear();
    try {
      await this.conn.admin().index(this.indexUid).deleteDocuments(ids);
    } catch (err) {
      this.conn.reportFailure(err);
    }
  }

  /** id → hash of the fragments the index holds for these sessions. */
  private async indexedFragments(index: Index<SessionDocument>, refs: SessionRef[]): Promise<Map<string, Map<string, string>>> {
    const out = new Map<string, Map<string, string>>();
    if (refs.length === 0) return out;
    const filter = ownedSessionsFilter(refs);
    const limit = 10_000;
    for (let offset = 0; ; offset += limit) {
      const page = await index.getDocuments({ filter, fields: ['id', 'sessionKey', 'hash'], limit, offset });
      for (const d of page.results) {
        const m = out.get(d.sessionKey) ?? new Map<string, string>();
        m.set(d.id, d.hash);
        out.set(d.sessionKey, m);
      }
      if (page.results.length < limit) return out;
    }
  }

  /** Waits for the engine to finish these tasks (in order) and fails if one of them failed. */
  async waitTasks(conn: MeiliConnection, uids: number[], timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    const tasks = conn.admin().tasks;
    for (const uid of uids) {
      const task = await tasks.waitForTask(uid, { timeout: Math.max(1000, deadline - Date.now()), interval: 10 });
      if (task.status !== 'succeeded') {
        throw new Error(`search index task ${uid} (${task.type}) ${task.status}: ${task.error?.code ?? ''} ${task.error?.message ?? ''}`);
      }
    }
  }

  /**
   * The markdown of these sessions, read in one statement (one version each). A large session's
   * chunks are copied, one per turn of the event loop, into buffers that can move to a worker
   * thread; joining them (tens of MB of fresh memory) is left to that thread.
   */
  private async readMarkdown(c: PoolConnection | Pool, rows: Array<{ projectId: string; id: string }>): Promise<Map<string, Bytes>> {
    const parts: Array<{ projectId: string; sessionId: string; data: unknown }> = await c.query(
      `SELECT projectId, sessionId, data FROM session_chunks
        WHERE part = 'markdown' AND (${rows.map(() => '(projectId = ? AND sessionId = ?)').join(' OR ')})
        ORDER BY projectId, sessionId, seq`,
      rows.flatMap((r) => [r.projectId, r.id]),
    );
    const buffers = new Map<string, Buffer[]>();
    for (const p of parts) {
      const key = sessionKeyOf(p.projectId, p.sessionId);
      const list = buffers.get(key) ?? [];
      list.push(toBuffer(p.data));
      buffers.set(key, list);
    }
    const out = new Map<string, Bytes>();
    for (const [key, bufs] of buffers) {
      if (byteLength(bufs) < OFFLOAD_MIN_BYTES) {
        out.set(key, joined(bufs));
        continue;
      }
      const pieces: Buffer[] = [];
      for (const b of bufs) {
        const own = ownedBuffer(b.length);
        b.copy(own);
        pieces.push(own);
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
      out.set(key, pieces);
    }
    return out;
  }


  /**
   * Rebuilds the index from the database: every session is queued for a fresh push (through the
   * outbox, so the ordering rules above hold against live writes), the queue is drained here, and
   * what the rebuild did not refresh (documents of sessions that no longer exist) is removed.
   */
  async reindexAll(onProgress?: (p: { done: number; total: number }) => void): Promise<{ sessions: number }> {
    const [{ now: t0 }] = await this.pool.query('SELECT NOW(3) AS now');
    const inserted = await this.pool.query(
      "INSERT INTO search_outbox (op, userId, projectId, sessionId) SELECT 'reindex', userId, projectId, id FROM sessions",
    );
    const [{ maxId }] = await this.pool.query('SELECT MAX(id) AS maxId FROM search_outbox');
    const remaining = async () =>
      Number((await this.pool.query('SELECT COUNT(*) AS n FROM search_outbox WHERE id <= ?', [maxId ?? 0]))[0].n);
    const total = await remaining();
    onProgress?.({ done: 0, total });
    let downSince: number | null = null;
    for (let left = total; left > 0; ) {
      let r: RunResult = { claimed: 0, applied: 0, failed: 0, deferred: 0 };
      if (this.conns.every((c) => c.isHealthy()) || (await allAnswer(this.conns))) {
        downSince = null;
        r = await this.runOnce(500);
      } else {
        downSince ??= Date.now();
        if (Date.now() - downSince > 60_000) throw new Error('search engine unavailable for 60 s; reindex stopped (queued work stays in the outbox)');
      }
      left = await remaining();
      onProgress?.({ done: total - left, total });
      if (left > 0 && r.applied === 0) await sleep(200);
    }
    const stale = { filter: `syncedAt < ${t0.getTime()}` };
    await this.waitTasks(this.conn, [(await this.conn.admin().index(this.indexUid).deleteDocuments(stale)).taskUid], 10 * 60_000);
    await this.waitTasks(this.recentConn, [(await this.recentConn.admin().index(this.recentUid).deleteDocuments(stale)).taskUid], 10 * 60_000);
    return { sessions: Number(inserted.affectedRows ?? 0) };
  }

  /** Queues every session for the main index without waiting (a main index found empty at start). */
  async queueAll(): Promise<number> {
    const res = await this.pool.query(
      "INSERT INTO search_outbox (op, userId, projectId, sessionId) SELECT 'compact', userId, projectId, id FROM sessions",
    );
    this.notify();
    return Number(res.affectedRows ?? 0);
  }

  /**
   * Queues the sessions written lately for the recent index (a recent index found empty at start
   * while the main one was not: after an upgrade, or if it was deleted). Its sessions are at most a
   * few compaction periods old; a day covers an engine that was away for long.
   */
  async queueRecent(): Promise<number> {
    // The op as upsertOp chooses it, in SQL.
    const res = await this.pool.query(
      `INSERT INTO search_outbox (op, userId, projectId, sessionId)
       SELECT IF(markdownSize > ?, 'upsert_large', 'upsert'), userId, projectId, id FROM sessions
        WHERE updatedAt >= NOW(3) - INTERVAL 1 DAY`,
      [WHOLE_MAX],
    );
    this.notify();
    return Number(res.affectedRows ?? 0);
  }

  /**
   * Queues the sessions of the recent index for the main one ('compact' rows: applied in order
   * with any other work on the same session, in batches of up to COMPACT_BATCH), all of them or
   * only those not written for `settledMs` (a live session would be moved again at once). Returns
   * how many.
   */
  async queueCompaction(settledMs = 0): Promise<number> {
    const recent = this.recentConn.admin().index<SessionDocument>(this.recentUid);
    // One row per session (a large one has fragment documents too).
    const bySession = new Map<string, Pick<SessionDocument, 'userId' | 'projectId' | 'sessionId'>>();
    const [{ now }] = await this.pool.query('SELECT NOW(3) AS now');
    const filter = settledMs > 0 ? `syncedAt < ${now.getTime() - settledMs}` : undefined;
    for (let offset = 0; ; offset += 10_000) {
      const page = await recent.getDocuments({ fields: ['userId', 'projectId', 'sessionId'], filter, limit: 10_000, offset });
      for (const d of page.results) bySession.set(sessionKeyOf(d.projectId, d.sessionId), d);
      if (page.results.length < 10_000) break;
    }
    const refs = [...bySession.values()];
    this.lastCompaction = Date.now();
    for (const group of chunked(refs, 500)) {
      await this.pool.query(
        `INSERT INTO search_outbox (op, userId, projectId, sessionId) VALUES ${group.map(() => "('compact', ?, ?, ?)").join(', ')}`,
        group.flatMap((r) => [r.userId, r.projectId, r.sessionId]),
      );
    }
    if (refs.length) this.notify();
    return refs.length;
  }

  /** Compacts when the recent index is due: big enough, or not compacted for compactEveryMs. */
  private async compactIfDue(): Promise<void> {
    const pending = await this.pool.query("SELECT 1 FROM search_outbox WHERE op = 'compact' LIMIT 1");
    if (pending.length > 0) return;
    const { numberOfDocuments } = await this.recentConn.admin().index(this.recentUid).getStats();
    if (numberOfDocuments === 0) {
      this.lastCompaction = Date.now();
      return;
    }
    if (numberOfDocuments >= this.recentMax || Date.now() - this.lastCompaction >= this.compactEveryMs) {
      const n = await this.queueCompaction(SETTLED_MS);
      this.log.info({ msg: 'search: moving the recent index into the main one', sessions: n });
    }
  }
}
