import type * as mariadb from 'mariadb';

/**
 * Counting SQL statements at the driver: every query/execute that reaches the mariadb pool
 * (Prisma's adapter calls pool.execute / pool.query for reads and connection.query / execute
 * inside transactions; authentication uses pool.query). Counting in the process rather than with
 * MariaDB's global status makes the count exact for this app only, unaffected by other test files
 * running against the same server. Opening and closing a read snapshot is not a data statement.
 */
export function isTransactionControl(sql: unknown): boolean {
  const text = typeof sql === 'string' ? sql : ((sql as { sql?: string } | null)?.sql ?? '');
  return /^\s*(SET TRANSACTION|START TRANSACTION|COMMIT|ROLLBACK)\b/i.test(text);
}

/** Calls `onStatement` for every data statement sent through `pool` or a connection it hands out. */
export function countOn(pool: mariadb.Pool, onStatement: () => void): void {
  const wrap = (target: any, name: string) => {
    const original = target[name].bind(target);
    target[name] = (...args: unknown[]) => {
      if (!isTransactionControl(args[0])) onStatement();
      return original(...args);
    };
  };
  wrap(pool, 'query');
  wrap(pool, 'execute');
  const getConnection = pool.getConnection.bind(pool);
  const wrapped = new WeakSet<object>();
  (pool as any).getConnection = async () => {
    const conn = await getConnection();
    if (!wrapped.has(conn)) {
      wrapped.add(conn);
      wrap(conn, 'query');
      wrap(conn, 'execute');
    }
    return conn;
  };
}
