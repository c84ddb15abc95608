/**
 * Index work over several engines and standbys (src/search/engine/engines.ts): each outbox row
 * goes to the engine of the scope it names and, when its session is owned by another scope now
 * (its project moved), to that scope's engine too; the writer of each engine writes only the
 * sessions its scopes own and removes the others under the owner the row names (tenant-safe: every
 * filter names an owner). One engine without a standby is the single-engine path, unchanged.
 *
 * Standbys are not fed from here: each applies the outbox from its own cursor (standby.ts), with
 * the same routing (route), so a primary never waits for its standby.
 */
import { ownersOfSessions } from '../../data/outbox';
import type { Sql } from '../../data/sql';
import { sessionKeyOf } from '../../domain/search-documents';
import type { Logger } from '../../logger';
import type { Offload } from '../../offload';
import type { ApplyOutcome } from './claims';
import type { OutboxRow } from '../../data/outbox';
import { Compaction } from './compaction';
import type { MeiliConnection } from '../engine/connection';
import type { SearchEngine } from '../engine/engines';
import { engineOf } from '../engine/placement';
import { chunked, IndexWriter } from './index-writer';

export interface EngineTarget {
  engine: SearchEngine;
  primary: IndexWriter;
  standby: IndexWriter | null;
  compaction: Compaction;
}

interface RouterOptions {
  engines: SearchEngine[];
  indexUid: string;
  recentUid: string;
  /** Statements on the write pool outside the claim transaction. */
  db: Sql;
  log: Logger;
  offload: Offload;
  notify: () => void;
  compactEveryMs: number;
  recentMax: number;
}

export class EngineRouter {
  readonly targets: EngineTarget[];

  constructor(private readonly o: RouterOptions) {
    const n = o.engines.length;
    const uids = { indexUid: o.indexUid, recentUid: o.recentUid };
    this.targets = o.engines.map((engine) => {
      const owns = n > 1 ? (scope: string) => engineOf(scope, n) === engine.position : undefined;
      const writer = (p: { main: MeiliConnection; recent: MeiliConnection }) =>
        new IndexWriter({ conn: p.main, recentConn: p.recent, ...uids, log: o.log, offload: o.offload, owns });
      return {
        engine,
        primary: writer(engine.primary),
        standby: engine.standby ? writer(engine.standby) : null,
        compaction: new Compaction({
          db: o.db,
          recentConn: engine.primary.recent,
          recentUid: o.recentUid,
          log: o.log,
          notify: o.notify,
          everyMs: o.compactEveryMs,
          recentMax: o.recentMax,
        }),
      };
    });
  }

  /** Some primary can be written to (rows for a primary that is down or not ready wait for it). */
  writable(): boolean {
    return this.o.engines.some((e) => e.ready && e.primaryUp());
  }

  /** Every primary's connections. */
  primaryConns(): MeiliConnection[] {
    return this.o.engines.flatMap((e) => e.primaryConns());
  }

  get pendingTombstones(): number {
    return this.targets.reduce((n, t) => n + t.primary.pendingTombstones, 0);
  }

  async deleteTombstones(): Promise<void> {
    for (const t of this.targets) {
      if (t.primary.pendingTombstones > 0 && t.engine.primaryUp()) await t.primary.deleteTombstones();
    }
  }

  async compactIfDue(): Promise<void> {
    for (const t of this.targets) if (t.engine.primaryUp()) await t.compaction.compactIfDue();
  }

  async queueCompaction(settledMs: number): Promise<number> {
    let n = 0;
    for (const t of this.targets) n += await t.compaction.queueCompaction(settledMs);
    return n;
  }

  /** The engines each row goes to: its scope's, and its session's current owner's (a moved project). */
  async route(db: Sql, rows: OutboxRow[]): Promise<Map<number, OutboxRow[]>> {
    const n = this.targets.length;
    const keys = rows.filter((r) => r.op !== 'delete_project' && r.sessionId).map((r) => ({ projectId: r.projectId, sessionId: r.sessionId! }));
    const owners = new Map<string, string>();
    for (const group of chunked(keys, 200)) for (const o of await ownersOfSessions(db, group)) owners.set(sessionKeyOf(o.projectId, o.id), o.userId);
    const out = new Map<number, OutboxRow[]>();
    const add = (position: number, r: OutboxRow) => {
      const list = out.get(position) ?? [];
      if (!list.includes(r)) list.push(r);
      out.set(position, list);
    };
    for (const r of rows) {
      add(engineOf(r.userId, n), r);
      const owner = r.op !== 'delete_project' && r.sessionId ? owners.get(sessionKeyOf(r.projectId, r.sessionId)) : undefined;
      if (owner !== undefined) add(engineOf(owner, n), r);
    }
    return out;
  }

  /** Applies the rows on every primary they go to; a row is done when done on each of them. */
  async applyRows(db: Sql, rows: OutboxRow[], syncedAt: number): Promise<ApplyOutcome> {
    if (this.targets.length === 1) return this.targets[0].primary.applyRows(db, rows, syncedAt);
    const failed = new Set<number>();
    const errors: string[] = [];
    let away = false;
    for (const [position, mine] of await this.route(db, rows)) {
      const t = this.targets[position];
      let out: ApplyOutcome;
      if (t.engine.ready && t.engine.primaryUp()) out = await t.primary.applyRows(db, mine, syncedAt);
      else out = { done: [], failed: mine.map((r) => r.id), error: `search engine ${position} unavailable`, away: true };
      for (const id of out.failed) failed.add(id);
      if (out.failed.length) errors.push(out.error);
      away ||= out.away;
    }
    return { done: rows.map((r) => r.id).filter((id) => !failed.has(id)), failed: [...failed], error: errors.join('; '), away };
  }
}
