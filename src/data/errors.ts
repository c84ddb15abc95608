/**
 * The one mapping of database errors (the mariadb driver's, and Prisma's wrapping of them) to what
 * the rest of the service does about them:
 * - `duplicate`: a unique key refused the row (ER_DUP_ENTRY 1062, Prisma P2002);
 * - `retry`: deadlock or lock-wait timeout (1213, 1205, Prisma P2034): run the transaction again;
 * - `unavailable`: the database cannot be reached right now (connection refused, lost, pool
 *   timeout, SQLSTATE class 08): answer 503.
 * - `full`: the server answered but takes no more connections (its `max_connections`, or the
 *   account's limit): busy, not down. It wins over `unavailable` (1040 also carries SQLSTATE 08004,
 *   and a pool timeout wraps the refusal): such an error is never also unavailable.
 * Each kind is looked for along the error's `cause` chain (Prisma and the driver wrap errors).
 */
type DbErrorKind = 'duplicate' | 'retry' | 'unavailable' | 'full';

/** Thrown inside a transaction to have it run again (as after a deadlock), e.g. when a row it relied on vanished. */
export class RetryTransaction extends Error {}

/** The fields this module reads from the driver's and Prisma's errors (any of them may be missing). */
type ErrorFields = { errno?: unknown; code?: unknown; message?: unknown; sqlState?: unknown; cause?: unknown; originalError?: unknown };

/** A code or message as text: strings and numbers as they are, anything else as nothing. */
const text = (v: unknown): string => (typeof v === 'string' || typeof v === 'number' ? String(v) : '');

/** The driver's numeric code (`errno`), or Prisma's string code (`P2002`) / the driver's name (`ER_DUP_ENTRY`). */
const codeIs = (e: ErrorFields, errnos: number[], codes: string[]) => errnos.includes(Number(e.errno)) || codes.includes(text(e.code));

const IS: Record<DbErrorKind, (e: ErrorFields) => boolean> = {
  duplicate: (e) => codeIs(e, [1062], ['ER_DUP_ENTRY', 'P2002']),
  retry: (e) => e instanceof RetryTransaction || codeIs(e, [1213, 1205], ['ER_LOCK_DEADLOCK', 'ER_LOCK_WAIT_TIMEOUT', 'P2034']),
  full: (e) => codeIs(e, [1040, 1203, 1226], ['ER_CON_COUNT_ERROR', 'ER_TOO_MANY_USER_CONNECTIONS', 'ER_USER_LIMIT_REACHED']),
  unavailable: (e) => {
    const code = text(e.code ?? e.errno);
    const msg = text(e.message);
    // SQLSTATE class 08: connection exception (e.g. the server went away during connection setup).
    if (typeof e.sqlState === 'string' && e.sqlState.startsWith('08')) return true;
    return (
      /^(ECONNREFUSED|ECONNRESET|ETIMEDOUT|EHOSTUNREACH|EPIPE|ER_GET_CONNECTION_TIMEOUT|ER_CONNECTION_TIMEOUT|ER_SOCKET_UNEXPECTED_CLOSE|ER_CONNECTION_ALREADY_CLOSED|ER_POOL_ALREADY_CLOSED|P1001|P1002|P1017|P2024)$/.test(code) ||
      /pool timeout|retrieve connection from pool|connection refused|connect ECONNREFUSED|socket has unexpectedly been closed|Connection closed|DatabaseNotReachable|Can't reach database/i.test(msg)
    );
  },
};

/** True when `err`, or an error it wraps, is of this kind. */
function isDbError(err: unknown, kind: DbErrorKind): boolean {
  const seen = new Set<unknown>();
  for (let e: unknown = err, depth = 0; e && typeof e === 'object' && !seen.has(e) && depth < 10; depth++) {
    seen.add(e);
    const fields = e as ErrorFields;
    if (IS[kind](fields)) return true;
    e = fields.cause ?? fields.originalError;
  }
  return false;
}

export const isDuplicateKey = (err: unknown) => isDbError(err, 'duplicate');
/** Deadlocks and lock-wait timeouts are the database's way of saying "try again". */
export const isRetryable = (err: unknown) => isDbError(err, 'retry');
/** The server refused a new connection for having too many: it is there, and busy. */
export const isServerFull = (err: unknown) => isDbError(err, 'full');
/** Errors from the database driver that mean "the database is not reachable right now". */
export const isDatabaseUnavailable = (err: unknown) => !isServerFull(err) && isDbError(err, 'unavailable');

/**
 * Why the database could not serve a request, as a client is told it (both answered 503 with
 * Retry-After): `unavailable` when it cannot be reached, `busy` when it refused a connection for
 * having too many. Null for every other error.
 */
export function databaseRefusal(err: unknown): 'unavailable' | 'busy' | null {
  if (isServerFull(err)) return 'busy';
  return isDbError(err, 'unavailable') ? 'unavailable' : null;
}
