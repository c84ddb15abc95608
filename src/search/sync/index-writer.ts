/**
 * Writing the indexes for claimed work (src/search/worker.ts, docs/search.md): a session is
 * re-read from the database and pushed (only documents whose hash changed), or removed when gone;
 * a project's deletion removes its documents; every filter names the owner. Large
 * sessions' documents are built on a worker thread (src/offload). The writer waits until the
 * engines applied the work, so that a claim is only released once its work is in the index.
 */
import { markdownChunksOf } from '../../data/content';
import { indexableSessions } from '../../data/sessions';
import type { Sql } from '../../data/sql';
import type { Logger } from '../../logger';
import { byteLength, joined, OFFLOAD_MIN_BYTES, ownedBuffer, type Bytes, type Offload } from '../../offload';
import type { ApplyOutcome } from './claims';
import type { OutboxRow } from '../../data/outbox';
import { probeAll, type MeiliConnection } from '../engine/connection';
import { sessionKeyOf, TOMBSTONE, tombstoneOf, toDocuments, withoutVector, type IndexableSession, type SessionDocument } from '../../domain/search-documents';
import { dimensionsOf } from '../engine/index-settings';
import { ownedProjectFilter, ownedSessionsFilter } from '../engine/filter';
import { isEngineUnreachable } from '../engine/http-client';
import { indexedFragments, withMainCopy } from './indexed-sessions';

export interface SessionRef {
  /** The owner: every filter the worker sends names it, so work never reaches another user's entries. */
  userId: string;
  projectId: string;
  sessionId: string;
  /** Push every fragment, unchanged ones included (rebuild). */
  force?: boolean;
  /** To the main index even when the session is indexed whole (rebuild, compaction). */
  main?: boolean;
}

export interface ProjectRef {
  userId: string;
  projectId: string;
}

/** Markdown bytes read and pushed per request. */
const BYTES_PER_PUSH = 8 * 1024 * 1024;
/** Sessions per SQL statement. */
const SESSIONS_PER_QUERY = 200;

/** How long to wait for the engine to index this much markdown. */
const timeoutFor = (bytes: number) => 30_000 + Math.ceil(bytes / (1024 * 1024)) * 5_000;
const refKey = (r: Pick<SessionRef, 'projectId' | 'sessionId'>) => sessionKeyOf(r.projectId, r.sessionId);

export function chunked<T>(xs: T[], n: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < xs.length; i += n) out.push(xs.slice(i, i + n));
  return out;
}

/** Consecutive groups of rows whose markdown adds up to at most `max` bytes (one row may exceed it alone). */
function slicesBySize<T extends { markdownSize: number }>(rows: T[], max: number): T[][] {
  const out: T[][] = [];
  let cur: T[] = [];
  let size = 0;
  for (const r of rows) {
    if (cur.length && size + r.markdownSize > max) {
      out.push(cur);
      cur = [];
      size = 0;
    }
    cur.push(r);
    size += r.markdownSize;
  }
  if (cur.length) out.push(cur);
  return out;
}

interface IndexWriterOptions {
  conn: MeiliConnection;
  recentConn: MeiliConnection;
  indexUid: string;
  recentUid: string;
  log: Logger;
  offload: Offload;
  /**
   * The owning scopes this engine holds (several engines: placement.ts; default all). A session
   * owned elsewhere now (its project moved) is removed here under the owner the work names.
   */
  owns?: (scopeId: string) => boolean;
}

export class IndexWriter {
  private readonly conn: MeiliConnection;
  private readonly recentConn: MeiliConnection;
  /** Both engines (one, when the recent index shares the main engine). */
  readonly conns: MeiliConnection[];
  private readonly indexUid: string;
  private readonly recentUid: string;
  private readonly log: Logger;
  private readonly offload: Offload;
  private readonly owns: (scopeId: string) => boolean;
  /** Ids of emptied fragments to delete when the worker has nothing better to do. */
  private readonly tombstones = new Set<string>();
  /** The indexes have an embedder: documents are pushed with an empty `_vectors` entry (the sweeper fills it). */
  private readonly vectors: boolean;

  constructor(opts: IndexWriterOptions) {
    this.conn = opts.conn;
    this.recentConn = opts.recentConn;
    this.conns = [...new Set([this.conn, this.recentConn])];
    this.indexUid = opts.indexUid;
    this.recentUid = opts.recentUid;
    this.log = opts.log;
    this.offload = opts.offload;
    this.owns = opts.owns ?? (() => true);
    this.vectors = dimensionsOf(this.indexUid) !== null;
  }

  /** Emptied fragments waiting to be deleted. */
  get pendingTombstones(): number {
    return this.tombstones.size;
  }

  /**
   * Applies the rows (all at once; after a failure that is not the engine being away, one unit at a
   * time so that one bad session does not hold back the others). Returns row ids done and failed.
   */
  async applyRows(db: Sql, rows: OutboxRow[], syncedAt: number): Promise<ApplyOutcome> {
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
        db,
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
  async apply(db: Sql, deletedProjects: ProjectRef[], sessions: SessionRef[], syncedAt: number): Promise<void> {
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
    // One claim's documents go out in as few pushes as BYTES_PER_PUSH allows, across its groups,
    // and are waited for once: pushes queued while the engine works are applied as one batch, and
    // each batch pays a commit and its prefix work whatever its size (a push per group of 200
    // sessions, each waited for before the next: 105 sessions/s at 20k, 205 without).
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
    for (const group of chunked(sessions, SESSIONS_PER_QUERY)) {
      const byKey = new Map(group.map((s) => [refKey(s), s]));
      const rows: Array<IndexableSession & { markdownSize: number }> = (await indexableSessions(db, group)).filter((r) => this.owns(r.userId));
      const present = new Set(rows.map((r) => sessionKeyOf(r.projectId, r.id)));
      const gone = group.filter((s) => !present.has(refKey(s)));
      if (gone.length) {
        const filter = ownedSessionsFilter(gone);
        tasks.push((await main.deleteDocuments({ filter })).taskUid);
        recentTasks.push((await recent.deleteDocuments({ filter })).taskUid);
      }
      if (rows.length === 0) continue;
      // Read content in slices of bounded size (a session may be tens of MB).
      for (const slice of slicesBySize(rows, BYTES_PER_PUSH)) {
        const content = await this.readMarkdown(db, slice);
        const target = (key: string) => (byKey.get(key)?.main ? 'main' : 'recent');
        const refs = slice.map((row) => ({ userId: row.userId, projectId: row.projectId, sessionId: row.id }));
        const keys = refs.map(refKey);
        const toRecent = refs.filter((r) => target(refKey(r)) === 'recent');
        const indexed = {
          main: await indexedFragments(
            main,
            refs.filter((r) => target(refKey(r)) === 'main'),
          ),
          recent: await indexedFragments(recent, toRecent),
        };
        // Sessions going to the recent index that the main one has a copy of: only those are
        // left out of the main index's searches (adapter.ts); the others are marked noMainCopy.
        const inMain = await withMainCopy(main, toRecent);
        for (const [i, row] of slice.entries()) {
          const key = keys[i];
          const to = target(key);
          const noMainCopy = to === 'recent' && inMain !== null && !inMain.has(key);
          if (to === 'main') retire.push(refs[i]);
          const force = byKey.get(key)?.force;
          const have = indexed[to].get(key) ?? new Map<string, string>();
          const markdown = content.get(key) ?? Buffer.alloc(0);
          let ids: Set<string>;
          if (Array.isArray(markdown)) {
            // A large session: its documents are built and serialised on a worker thread (off
            // the event loop), then pushed batch by batch (1 MiB each, as bytes) behind what is already queued.
            await flush();
            const built = await this.offload.documents({
              row,
              markdown,
              syncedAt,
              have,
              force: Boolean(force),
              batchBytes: 1024 * 1024,
              vectors: this.vectors,
              noMainCopy,
            });
            const [conn, uid, uids] = to === 'main' ? [this.conn, this.indexUid, tasks] : [this.recentConn, this.recentUid, recentTasks];
            for (const batch of built.batches) uids.push(await conn.addDocumentsJson(uid, batch));
            ids = new Set(built.ids);
          } else {
            const docs = toDocuments(row, markdown.toString('utf8'), syncedAt, { noMainCopy });
            for (const doc of docs) {
              if (!force && have.get(doc.id) === doc.hash) continue;
              batches[to].push(this.vectors ? withoutVector(doc) : doc);
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
            const tombstone = tombstoneOf(id, row, syncedAt);
            batches[to].push(this.vectors ? withoutVector(tombstone) : tombstone);
          }
        }
        bytes += slice.reduce((n, r) => n + r.markdownSize, 0);
      }
    }
    await flush();
    // Once the main index has the sessions, their recent copies written before this claim go
    // (a later write of the same session was claimed after this one: its copy is newer).
    if (retire.length) {
      await this.waitTasks(this.conn, tasks.splice(0), timeoutFor(bytes));
      for (const group of chunked(retire, SESSIONS_PER_QUERY)) {
        const filter = `${ownedSessionsFilter(group)} AND syncedAt <= ${syncedAt}`;
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
  async deleteTombstones(): Promise<void> {
    const ids = [...this.tombstones];
    this.tombstones.clear();
    try {
      await this.conn.admin().index(this.indexUid).deleteDocuments(ids);
    } catch (err) {
      this.conn.reportFailure(err);
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
  private async readMarkdown(db: Sql, rows: Array<{ projectId: string; id: string }>): Promise<Map<string, Bytes>> {
    const parts = await markdownChunksOf(
      db,
      rows.map((r) => ({ projectId: r.projectId, sessionId: r.id })),
    );
    const buffers = new Map<string, Buffer[]>();
    for (const p of parts) {
      const key = sessionKeyOf(p.projectId, p.sessionId);
      const list = buffers.get(key) ?? [];
      list.push(p.data);
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
}
