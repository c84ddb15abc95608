import type * as mariadb from 'mariadb';

/**
 * Runs `fn` holding the database's named lock `name` (GET_LOCK: one holder across every instance),
 * waiting at most `waitSeconds` for it; `{ got: false }` when it stayed taken.
 */
export async function withNamedLock<T>(
  pool: mariadb.Pool,
  name: string,
  waitSeconds: number,
  fn: () => Promise<T>,
): Promise<{ got: true; value: T } | { got: false }> {
  const conn = await pool.getConnection();
  try {
    const [got] = await conn.query('SELECT GET_LOCK(?, ?) AS got', [name, waitSeconds]);
    if (Number(got?.got) !== 1) return { got: false };
    try {
      return { got: true, value: await fn() };
    } finally {
      await conn.query('SELECT RELEASE_LOCK(?)', [name]).catch(() => undefined);
    }
  } finally {
    conn.release();
  }
}
