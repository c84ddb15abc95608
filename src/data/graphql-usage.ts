/**
 * GraphQL operation usage, for schema review: the statements on `graphql_operations` (each
 * operation with the coordinates it touches) and `graphql_operation_days` (runs per client and UTC
 * day). Written in batches (src/services/graphql-usage.ts), read by instance administrators.
 */
import { marks, type Sql } from './sql';

/** Operations kept; the least recently seen go first. */
export const MAX_OPERATIONS = 10_000;

export interface OperationCount {
  id: string;
  name: string | null;
  /** JSON array of schema coordinates. */
  coordinates: string;
  client: string;
  /** YYYY-MM-DD (UTC). */
  day: string;
  count: number;
  lastSeen: Date;
}

/** Adds a batch of counts (several instances add to the same rows), then keeps the newest operations. */
export async function addOperationCounts(db: Sql, counts: readonly OperationCount[]): Promise<void> {
  if (!counts.length) return;
  const ops = new Map<string, OperationCount>();
  for (const c of counts) {
    const seen = ops.get(c.id);
    if (!seen || seen.lastSeen < c.lastSeen) ops.set(c.id, c);
  }
  const list = [...ops.values()];
  await db.execute(
    `INSERT INTO graphql_operations (id, name, coordinates, lastSeen) VALUES ${list.map(() => `(${marks(4)})`).join(', ')}
     ON DUPLICATE KEY UPDATE name = VALUES(name), coordinates = VALUES(coordinates), lastSeen = GREATEST(lastSeen, VALUES(lastSeen))`,
    ...list.flatMap((o) => [o.id, o.name, o.coordinates, o.lastSeen]),
  );
  await db.execute(
    `INSERT INTO graphql_operation_days (operationId, client, day, count, lastSeen) VALUES ${counts.map(() => `(${marks(5)})`).join(', ')}
     ON DUPLICATE KEY UPDATE count = count + VALUES(count), lastSeen = GREATEST(lastSeen, VALUES(lastSeen))`,
    ...counts.flatMap((c) => [c.id, c.client, c.day, c.count, c.lastSeen]),
  );
  // Beyond the cap, the least recently seen operations go (their days with them).
  await db.execute(
    `DELETE FROM graphql_operations WHERE lastSeen < (
       SELECT t.lastSeen FROM (SELECT lastSeen FROM graphql_operations ORDER BY lastSeen DESC LIMIT 1 OFFSET ?) t)`,
    MAX_OPERATIONS - 1,
  );
}

/** Days older than `day` (YYYY-MM-DD) are no longer asked for. */
export function dropOperationDaysBefore(db: Sql, day: string): Promise<number> {
  return db.execute('DELETE FROM graphql_operation_days WHERE day < ?', day);
}

interface OperationUsageRow {
  id: string;
  name: string | null;
  coordinates: string;
  client: string;
  count: unknown;
  lastSeen: Date;
}

/** Runs per operation and client since `fromDay` (YYYY-MM-DD), most run first. */
export function operationUsageSince(db: Sql, fromDay: string): Promise<OperationUsageRow[]> {
  return db.query<OperationUsageRow>(
    `SELECT o.id, o.name, o.coordinates, d.client, SUM(d.count) AS count, MAX(d.lastSeen) AS lastSeen
       FROM graphql_operation_days d JOIN graphql_operations o ON o.id = d.operationId
      WHERE d.day >= ?
      GROUP BY o.id, o.name, o.coordinates, d.client
      ORDER BY count DESC, o.id, d.client`,
    fromDay,
  );
}
