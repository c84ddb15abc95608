/**
 * What sessions cost (docs/usage.md): the usage read from a raw log stored with the session at
 * each write, shown with a session, summed per day, model, project or user, and read again from
 * the stored logs (`usage recompute`).
 */
import { z } from 'zod';
import { AppError, invalid } from '../errors';
import type { Sql } from '../data/sql';
import type { SessionKey } from '../domain/session-row';
import * as store from '../data/usage';
import { contentChunks } from '../data/content';
import { lockSession } from '../data/sessions';
import { inTransaction } from '../data/transaction';
import { readUsage, type PriceTable, type SessionUsage } from '../domain/usage';
import type { Ctx, Deps } from './context';
import { readableScopes, requireReadableProject, requireTeamMember } from './access';
import { parseInput, timestamp } from '../domain/inputs';

/**
 * Replaces a session's stored usage by what its upload's raw log records (undefined: not read, left
 * as it is). `fresh`: the session's row was inserted in this transaction with the usage's cost.
 */
export async function writeUsage(tx: Sql, key: SessionKey, usage: SessionUsage | null | undefined, fresh = false): Promise<void> {
  if (usage === undefined) return;
  await store.replaceSessionUsage(tx, key, usage?.byModel ?? [], usage?.costUsd ?? null, fresh);
}

/** A session's usage out of its rows (by model, as stored); null when it has none. */
export function usageOfRows(rows: readonly store.UsageLine[]): SessionUsage | null {
  if (rows.length === 0) return null;
  const byModel = rows.map((r) => ({
    model: r.model,
    inputTokens: r.inputTokens,
    outputTokens: r.outputTokens,
    cacheReadTokens: r.cacheReadTokens,
    cacheWriteTokens: r.cacheWriteTokens,
    costUsd: r.costUsd,
  }));
  const costs = byModel.map((m) => m.costUsd);
  return {
    byModel,
    totalTokens: byModel.reduce((n, m) => n + m.inputTokens + m.outputTokens + m.cacheReadTokens + m.cacheWriteTokens, 0),
    costUsd: costs.includes(null) ? null : (costs as number[]).reduce((n, c) => n + c, 0),
  };
}

const keyOf = (k: SessionKey) => `${k.projectId}/${k.sessionId}`;

/**
 * The usage of sessions the caller has read already (a row in hand: its access was checked by
 * that read), keyed `${projectId}/${sessionId}`; a session without usage is absent.
 */
export async function usageOfSessions(ctx: Ctx, keys: readonly SessionKey[]): Promise<Map<string, SessionUsage>> {
  const groups = new Map<string, store.UsageRow[]>();
  for (const r of await store.usageOfSessions(ctx.deps.db.reads, keys)) {
    const k = keyOf({ projectId: r.projectId, sessionId: r.sessionId });
    const list = groups.get(k) ?? [];
    list.push(r);
    groups.set(k, list);
  }
  const out = new Map<string, SessionUsage>();
  for (const [k, rows] of groups) out.set(k, usageOfRows(rows)!);
  return out;
}

/** One session's usage (the caller read the session already); null when none. */
export async function usageOfSession(ctx: Ctx, key: SessionKey): Promise<SessionUsage | null> {
  return (await usageOfSessions(ctx, [key])).get(keyOf(key)) ?? null;
}

// ---------------------------------------------------------------------------------------------
// Sums

export const USAGE_GROUPINGS = ['DAY', 'MODEL', 'PROJECT', 'USER'] as const;

/** Most groups in one answer (days of ten years, models, projects, users). */
export const MAX_USAGE_GROUPS = 3660;
const MAX_PROJECT_IDS = 100;

export const UsageArgs = z.object({
  projectIds: z
    .array(z.string({ error: 'Invalid projectIds: expected project ids' }), { error: 'Invalid projectIds: expected a list of project ids' })
    .max(MAX_PROJECT_IDS, { error: `Invalid projectIds: at most ${MAX_PROJECT_IDS}` })
    .nullish(),
  teamId: z.string({ error: 'Invalid teamId' }).nullish(),
  from: timestamp('from').nullish(),
  to: timestamp('to').nullish(),
  groupBy: z.enum(USAGE_GROUPINGS, { error: 'Invalid groupBy: expected DAY, MODEL, PROJECT or USER' }),
});

export interface UsageGroup {
  /** The day (YYYY-MM-DD, UTC), model, project id or user id. */
  key: string;
  /** A project's or user's name; null for days and models. */
  label: string | null;
  sessions: number;
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  totalTokens: number;
  /** Null when some of it has no price. */
  costUsd: number | null;
}

export interface UsageReport {
  groups: UsageGroup[];
  totalTokens: number;
  /** Null when some of it has no price. */
  costUsd: number | null;
}

const num = (v: unknown) => (v == null ? 0 : Number(v));

/**
 * Usage summed per day (of `startedAt`, UTC), model, project or user (the uploader) over the
 * sessions the caller reads: of some projects (each one the caller reads, else 404 / 403), of a
 * team (its members), or all they read. The whole instance (`instance: true`) only for admins.
 */
export async function usageReport(ctx: Ctx, input: unknown, opts: { instance?: boolean } = {}): Promise<UsageReport> {
  const args = parseInput(UsageArgs, input);
  if (args.from && args.to && args.from.getTime() > args.to.getTime()) throw invalid('Invalid range: from is after to');
  let scopes: string[] | null;
  if (opts.instance) {
    if (ctx.user.role !== 'admin') throw new AppError('FORBIDDEN', 'Only administrators can read the usage of the whole instance');
    scopes = null;
  } else if (args.teamId != null) {
    await requireTeamMember(ctx, args.teamId);
    scopes = [args.teamId];
  } else {
    scopes = await readableScopes(ctx);
  }
  const projectIds = args.projectIds ? [...new Set(args.projectIds)] : null;
  // Named projects: each one readable (404 / 403 as for any read), whatever the scope says after.
  if (projectIds && !opts.instance) for (const id of projectIds) await requireReadableProject(ctx, id);
  const rows = await store.usageGroups(
    ctx.deps.db.reads,
    { scopes, projectIds, from: args.from ?? null, to: args.to ?? null, groupBy: args.groupBy },
    MAX_USAGE_GROUPS,
  );
  const groups = rows.map((r): UsageGroup => {
    const t = {
      inputTokens: num(r.inputTokens),
      outputTokens: num(r.outputTokens),
      cacheReadTokens: num(r.cacheReadTokens),
      cacheWriteTokens: num(r.cacheWriteTokens),
    };
    return {
      key: r.k ?? '',
      label: r.label,
      sessions: num(r.sessions),
      ...t,
      totalTokens: t.inputTokens + t.outputTokens + t.cacheReadTokens + t.cacheWriteTokens,
      costUsd: num(r.unpriced) > 0 ? null : num(r.costUsd),
    };
  });
  const costs = groups.map((g) => g.costUsd);
  return {
    groups,
    totalTokens: groups.reduce((n, g) => n + g.totalTokens, 0),
    costUsd: costs.includes(null) ? null : (costs as number[]).reduce((n, c) => n + c, 0),
  };
}

// ---------------------------------------------------------------------------------------------
// Recompute

export interface RecomputeOptions {
  prices: PriceTable;
  /** Sessions read per batch (default 100). */
  batch?: number;
  /** Start after this session (a run that stopped goes on from the last one it reported). */
  after?: SessionKey | null;
  /** Called after each batch with the last session done and the counts so far. */
  onBatch?: (progress: RecomputeProgress) => void;
}

export interface RecomputeProgress {
  sessions: number;
  withUsage: number;
  last: SessionKey | null;
}

/**
 * Reads every stored session's raw log again (from the database or the bucket, as the content
 * store keeps it) and replaces its usage: after PRICES_FILE changed, or for sessions stored before
 * usage was read. One batch of keys at a time, each log streamed; each session written on its own.
 */
export async function recomputeUsage(deps: Pick<Deps, 'db'>, opts: RecomputeOptions): Promise<RecomputeProgress> {
  const batch = Math.max(1, Math.min(1000, opts.batch ?? 100));
  const progress: RecomputeProgress = { sessions: 0, withUsage: 0, last: opts.after ?? null };
  for (;;) {
    const keys = await store.sessionKeysAfter(deps.db.writes, progress.last, batch);
    if (keys.length === 0) return progress;
    for (const k of keys) {
      const key = { projectId: k.projectId, sessionId: k.sessionId };
      const usage = k.rawDataSize > 0 ? await readUsage(contentChunks(deps.db.writes, key.projectId, key.sessionId, 'raw'), opts.prices) : null;
      await inTransaction(deps.db, async (tx) => {
        // Written only when the content read is still the session's: a session deleted meanwhile
        // has nothing to write, and one uploaded again has the usage of its new log already.
        const now = await lockSession(tx, key.projectId, key.sessionId);
        if (now?.contentDigest === k.contentDigest) await writeUsage(tx, key, usage);
      });
      progress.sessions++;
      if (usage) progress.withUsage++;
      progress.last = key;
    }
    opts.onBatch?.({ ...progress });
  }
}
