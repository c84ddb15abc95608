import type { PrismaClient } from '../generated/prisma/client';
import type { RawQueryable } from './content-store';
import type { WorkGuard } from './guard';

export type Tx = RawQueryable;

/** Deadlocks and lock-wait timeouts are the database's way of saying "try again". */
export function isRetryableTxError(err: unknown): boolean {
  let e: any = err;
  for (let i = 0; e && i < 5; i++, e = e.cause) {
    const text = `${e.code ?? ''} ${e.errno ?? ''} ${e.message ?? ''}`;
    if (/P2034|1213|1205|\bdeadlock|lock wait timeout|write conflict/i.test(text)) return true;
    if (e.meta && /1213|1205|deadlock/i.test(JSON.stringify(e.meta))) return true;
  }
  return false;
}

/**
 * Runs `fn` in an interactive transaction, retrying a few times on deadlock. With a guard, a
 * request the watchdog has answered 503 rolls back instead of committing (see WorkGuard).
 * A healthy database under a burst is waited for: `maxWait` is long; an unreachable one is the
 * watchdog's to tell.
 */
export function inTransaction<T>(prisma: PrismaClient, fn: (tx: Tx) => Promise<T>): Promise<T>;
export function inTransaction<T>(prisma: PrismaClient, guard: WorkGuard | undefined, fn: (tx: Tx) => Promise<T>): Promise<T>;
export async function inTransaction<T>(
  prisma: PrismaClient,
  a: WorkGuard | undefined | ((tx: Tx) => Promise<T>),
  b?: (tx: Tx) => Promise<T>,
): Promise<T> {
  const fn = typeof a === 'function' ? a : b!;
  const guard = typeof a === 'function' ? undefined : a;
  const attempts = 8;
  for (let attempt = 1; ; attempt++) {
    guard?.check();
    try {
      return await prisma.$transaction(
        async (tx) => {
          const result = await fn(tx as unknown as Tx);
          guard?.beforeCommit();
          return result;
        },
        { maxWait: 60_000, timeout: 120_000 },
      );
    } catch (err) {
      guard?.commitSettled();
      if (attempt >= attempts || !isRetryableTxError(err)) throw err;
      await new Promise((r) => setTimeout(r, Math.random() * 20 * attempt));
    } finally {
      guard?.commitSettled();
    }
  }
}
