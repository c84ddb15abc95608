/**
 * What sessions cost: the statements on `session_usage` (token counts and cost per session and
 * model) and on `sessions.costUsd` (the session's total, which lists sort and filter by).
 * Aggregates are scoped like every read: to the owner scopes the caller reads through, or to the
 * whole instance when the service says so (`scopes: null`).
 */
import { inScopes, marks, type Sql } from './sql';
import { keyMarks } from './sessions';
import type { DriverRow } from '../domain/driver-row';
import type { SessionKey } from '../domain/session-row';
import type { SessionUsageModel } from '../generated/prisma/models';

export type UsageRow = Pick<
  DriverRow<SessionUsageModel>,
  'projectId' | 'sessionId' | 'model' | 'inputTokens' | 'outputTokens' | 'cacheReadTokens' | 'cacheWriteTokens' | 'costUsd'
>;

/** One model's counts and cost, as written. */
export type UsageLine = Omit<UsageRow, 'projectId' | 'sessionId'>;

const COLUMNS = ['projectId', 'sessionId', 'model', 'inputTokens', 'outputTokens', 'cacheReadTokens', 'cacheWriteTokens', 'costUsd'] as const;

/**
 * Replaces a session's usage rows and its total cost (no lines: none, cost null). `fresh`: the
 * session's row was inserted in this transaction with this cost, so only the lines are written.
 */
export async function replaceSessionUsage(tx: Sql, key: SessionKey, lines: readonly UsageLine[], costUsd: number | null, fresh = false): Promise<void> {
  if (!fresh) await tx.execute('DELETE FROM session_usage WHERE projectId = ? AND sessionId = ?', key.projectId, key.sessionId);
  if (lines.length) {
    await tx.execute(
      `INSERT INTO session_usage (${COLUMNS.join(', ')}) VALUES ${lines.map(() => `(${marks(COLUMNS.length)})`).join(', ')}`,
      ...lines.flatMap((l) => [key.projectId, key.sessionId, l.model, l.inputTokens, l.outputTokens, l.cacheReadTokens, l.cacheWriteTokens, l.costUsd]),
    );
  }
  if (!fresh) await tx.execute('UPDATE sessions SET costUsd = ? WHERE projectId = ? AND id = ?', costUsd, key.projectId, key.sessionId);
}

/** The usage rows of these sessions (the caller read them already), by model. */
export function usageOfSessions(db: Sql, keys: readonly SessionKey[]): Promise<UsageRow[]> {
  if (keys.length === 0) return Promise.resolve([]);
  return db.query<UsageRow>(
    `SELECT ${COLUMNS.join(', ')} FROM session_usage WHERE (projectId, sessionId) IN (${keyMarks(keys)}) ORDER BY projectId, sessionId, model`,
    ...keys.flatMap((k) => [k.projectId, k.sessionId]),
  );
}

type UsageGrouping = 'DAY' | 'MODEL' | 'PROJECT' | 'USER';

interface UsageQuery {
  /** Owner scopes read through; null: every session of the instance. */
  scopes: readonly string[] | null;
  /** Only these projects (null: all in the scopes). */
  projectIds: readonly string[] | null;
  /** `startedAt` within [from, to]; either may be absent. */
  from: Date | null;
  to: Date | null;
  groupBy: UsageGrouping;
}

interface UsageGroupRow {
  k: string | null;
  /** The group's name where it has one (a project's name, a user's name or email). */
  label: string | null;
  sessions: unknown;
  inputTokens: unknown;
  outputTokens: unknown;
  cacheReadTokens: unknown;
  cacheWriteTokens: unknown;
  /** Sum of the known costs. */
  costUsd: unknown;
  /** Rows without a price (the group's cost is then not whole). */
  unpriced: unknown;
}

const GROUP_KEY: Record<UsageGrouping, { key: string; label: string }> = {
  DAY: { key: "DATE_FORMAT(s.startedAt, '%Y-%m-%d')", label: 'NULL' },
  MODEL: { key: 'u.model', label: 'NULL' },
  PROJECT: { key: 's.projectId', label: '(SELECT p.name FROM projects p WHERE p.id = s.projectId)' },
  USER: { key: 'COALESCE(s.uploadedBy, s.userId)', label: '(SELECT COALESCE(x.name, x.email) FROM users x WHERE x.id = COALESCE(s.uploadedBy, s.userId))' },
};

/** Token counts and costs summed per group over the sessions the query reads; at most `limit` groups, largest cost first. */
export function usageGroups(db: Sql, q: UsageQuery, limit: number): Promise<UsageGroupRow[]> {
  const where: string[] = [];
  const params: unknown[] = [];
  if (q.scopes) {
    where.push(inScopes('s.userId', q.scopes));
    params.push(...q.scopes);
  }
  if (q.projectIds) {
    where.push(q.projectIds.length ? `s.projectId IN (${marks(q.projectIds)})` : '1 = 0');
    params.push(...q.projectIds);
  }
  if (q.from) {
    where.push('s.startedAt >= ?');
    params.push(q.from);
  }
  if (q.to) {
    where.push('s.startedAt <= ?');
    params.push(q.to);
  }
  const { key, label } = GROUP_KEY[q.groupBy];
  const order = q.groupBy === 'DAY' ? 'k ASC' : 'costUsd DESC, k ASC';
  return db.query<UsageGroupRow>(
    `SELECT g.k, ${q.groupBy === 'PROJECT' || q.groupBy === 'USER' ? 'MIN(g.label)' : 'NULL'} AS label, COUNT(DISTINCT g.projectId, g.sessionId) AS sessions,
            SUM(g.inputTokens) AS inputTokens, SUM(g.outputTokens) AS outputTokens,
            SUM(g.cacheReadTokens) AS cacheReadTokens, SUM(g.cacheWriteTokens) AS cacheWriteTokens,
            COALESCE(SUM(g.costUsd), 0) AS costUsd, SUM(g.costUsd IS NULL) AS unpriced
       FROM (SELECT ${key} AS k, ${label} AS label, u.projectId, u.sessionId, u.inputTokens, u.outputTokens,
                    u.cacheReadTokens, u.cacheWriteTokens, u.costUsd
               FROM session_usage u JOIN sessions s ON s.projectId = u.projectId AND s.id = u.sessionId
              ${where.length ? `WHERE ${where.join(' AND ')}` : ''}) g
      GROUP BY g.k ORDER BY ${order} LIMIT ?`,
    ...params,
    limit,
  );
}

/** A page of sessions in key order after `after` (the recompute's walk over every stored session). */
export function sessionKeysAfter(db: Sql, after: SessionKey | null, count: number): Promise<Array<SessionKey & { rawDataSize: number; contentDigest: string }>> {
  return db.query<SessionKey & { rawDataSize: number; contentDigest: string }>(
    `SELECT projectId, id AS sessionId, rawDataSize, contentDigest FROM sessions
      ${after ? 'WHERE projectId > ? OR (projectId = ? AND id > ?)' : ''}
      ORDER BY projectId, id LIMIT ?`,
    ...(after ? [after.projectId, after.projectId, after.sessionId] : []),
    count,
  );
}
