/**
 * Pages of sessions in an order (keyset paging) and their counts: the lists of REST, GraphQL and
 * MCP. Single rows and sets of rows by key are src/data/sessions.ts.
 */
import type { SessionFilters } from '../domain/filters';
import { filtersToSql } from './session-filters';
import type { SessionOrder, SessionRow } from '../domain/session-row';
import { SESSION_COLUMNS } from './sessions';
import { prepared, type Sql } from './sql';

/** The sort column of each order; `costUsd` may be NULL (the lowest value, as MariaDB sorts it: last going down, first going up). */
export const ORDER_SQL: Record<SessionOrder, { col: 'createdAt' | 'updatedAt' | 'startedAt' | 'name' | 'costUsd'; dir: 'ASC' | 'DESC' }> = {
  CREATED_AT_DESC: { col: 'createdAt', dir: 'DESC' },
  CREATED_AT_ASC: { col: 'createdAt', dir: 'ASC' },
  UPDATED_AT_DESC: { col: 'updatedAt', dir: 'DESC' },
  UPDATED_AT_ASC: { col: 'updatedAt', dir: 'ASC' },
  STARTED_AT_DESC: { col: 'startedAt', dir: 'DESC' },
  STARTED_AT_ASC: { col: 'startedAt', dir: 'ASC' },
  NAME_ASC: { col: 'name', dir: 'ASC' },
  COST_DESC: { col: 'costUsd', dir: 'DESC' },
  COST_ASC: { col: 'costUsd', dir: 'ASC' },
};

/** Where a keyset page starts: after this row's sort value (null: a session without a cost) and key. */
export type SessionKeyset = [value: string | Date | number | null, projectId: string, sessionId: string];

/**
 * The rows after a keyset position, in the order's direction: later values, or the same value
 * and a later key. NULL sorts lowest: going down, the NULLs follow every value; going up, they
 * come before every value.
 */
function afterKeyset(col: string, dir: 'ASC' | 'DESC', [v, p, s]: SessionKeyset): { sql: string; params: unknown[] } {
  const cmp = dir === 'DESC' ? '<' : '>';
  const sameKeyAfter = `(s.projectId ${cmp} ? OR (s.projectId = ? AND s.id ${cmp} ?))`;
  if (v === null) {
    return dir === 'DESC'
      ? { sql: `(s.${col} IS NULL AND ${sameKeyAfter})`, params: [p, p, s] }
      : { sql: `(s.${col} IS NOT NULL OR ${sameKeyAfter})`, params: [p, p, s] };
  }
  const nulls = dir === 'DESC' && col === 'costUsd' ? ` OR s.${col} IS NULL` : '';
  return { sql: `(s.${col} ${cmp} ?${nulls} OR (s.${col} = ? AND ${sameKeyAfter}))`, params: [v, v, p, p, s] };
}

/** A keyset page of the sessions of some owner scopes: filters, order, how many, after which row. */
interface SessionsInOrderQuery {
  scopes: readonly string[];
  filters: SessionFilters;
  order: SessionOrder;
  count: number;
  after?: SessionKeyset;
}

/** Up to `count` of the sessions in these owner scopes matching the filters, in `order`, after `after`. No content. */
export async function sessionsInOrder(db: Sql, { scopes, filters, order, count, after }: SessionsInOrderQuery): Promise<SessionRow[]> {
  const { col, dir } = ORDER_SQL[order];
  const { where, params } = filtersToSql(scopes, filters);
  const clauses = [where];
  if (after) {
    const next = afterKeyset(col, dir, after);
    clauses.push(next.sql);
    params.push(...next.params);
  }
  // Prepared: the text varies with the request's shape only (lists and recent sessions, every request).
  return db.query<SessionRow>(
    prepared(
      `SELECT ${SESSION_COLUMNS} FROM sessions s WHERE ${clauses.join(' AND ')}
      ORDER BY s.${col} ${dir}, s.projectId ${dir}, s.id ${dir} LIMIT ?`,
    ),
    ...params,
    count,
  );
}

export async function countSessions(db: Sql, scopes: readonly string[], filters: SessionFilters): Promise<number> {
  const { where, params } = filtersToSql(scopes, filters);
  const [r] = await db.query<{ n: number }>(prepared(`SELECT COUNT(*) AS n FROM sessions s WHERE ${where}`), ...params);
  return r.n;
}

/**
 * The first `limit` sessions of each of several projects (filters and order as sessionsInOrder),
 * in one statement: ROW_NUMBER() per project, cut in SQL.
 */
export async function firstSessionsOfProjects(
  db: Sql,
  scopes: readonly string[],
  filters: SessionFilters & { projectIds: string[] },
  order: SessionOrder,
  limit: number,
): Promise<Map<string, SessionRow[]>> {
  const out = new Map<string, SessionRow[]>();
  const { col, dir } = ORDER_SQL[order];
  const { where, params } = filtersToSql(scopes, filters);
  const rows = await db.query<SessionRow & { rn: unknown }>(
    `SELECT t.* FROM (
        SELECT ${SESSION_COLUMNS},
               ROW_NUMBER() OVER (PARTITION BY s.projectId ORDER BY s.${col} ${dir}, s.id ${dir}) AS rn
          FROM sessions s WHERE ${where}) t
      WHERE t.rn <= ? ORDER BY t.projectId, t.rn`,
    ...params,
    limit,
  );
  for (const r of rows) {
    const { rn: _rn, ...row } = r;
    const list = out.get(row.projectId) ?? [];
    list.push(row);
    out.set(row.projectId, list);
  }
  return out;
}
